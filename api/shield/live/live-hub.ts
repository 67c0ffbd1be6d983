// Fans the live bus out to the server-sent-event streams of GET /api/v1/shield/sites/:id/live.
//
// The hub subscribes to the bus once and hands each decision to the streams of its site
// synchronously, never waiting on a client: the bus (and behind it the recorder) must not be slowed
// by a slow reader. A client whose socket is backed up (a write returned false) gets a queue bounded
// in bytes; past it, events are dropped and counted, and once the client has caught up it is told
// how many with `event: dropped`. Its Last-Event-ID still names the last event it received, so a
// reconnect can fetch what it missed. The queue must absorb a burst: Node buffers a response's
// writes within one tick (the socket is corked), so a recorder batch of 500 events reports "backed
// up" after 16 KiB even to a client that reads at once.
//
// Resuming (Last-Event-ID): each watched site keeps its last `bufferSize` events in memory; an id
// found there resumes from the buffer, any other id from shield_events (at most `replayLimit`
// events, the newest; older ones are reported as dropped). Sites are watched while they have a
// client and for `lingerMs` after the last one leaves, so that a reconnect finds its buffer.
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { Selectable } from 'kysely';
import type { Db } from '../../../platform/db/database.ts';
import type { ShieldEventsTable } from '../../../platform/db/schema.ts';
import type { DecisionAction, DecisionEvent, RuleKind } from '../../../gateway/decision.ts';
import type { LiveBus } from '../../../gateway/events/live-bus.ts';

export interface LiveFilter {
  /** Only these actions; all when undefined. */
  actions?: readonly DecisionAction[] | undefined;
  /** Only decisions of these rule kinds; all when undefined. */
  ruleKinds?: readonly RuleKind[] | undefined;
}

export interface LiveStreamRequest {
  siteId: string;
  orgId: string;
  filter: LiveFilter;
  /** Resume after this event id (`dec_<ulid>`). */
  lastEventId?: string | undefined;
}

export interface LiveHubOptions {
  bus: LiveBus;
  db: Db;
  log: FastifyBaseLogger;
  /** Interval of the heartbeat comment (ms). */
  heartbeatMs: number;
  /** Events kept per watched site for resuming; default 1000. */
  bufferSize?: number | undefined;
  /** Bytes (about) a backed-up client may have waiting before events are dropped; default 1 MiB. */
  clientQueueBytes?: number | undefined;
  /** Events a resume reads from the database at most; default 1000. */
  replayLimit?: number | undefined;
  /** How long a site stays watched after its last client left (ms); default 5 minutes. */
  lingerMs?: number | undefined;
}

export interface LiveHubStats {
  sites: number;
  clients: number;
}

interface Entry {
  event: DecisionEvent;
  /** Serialised once, written to every client that wants it. */
  frame: string;
}

interface SiteStream {
  buffer: Ring<Entry>;
  clients: Set<LiveClient>;
  idleSince: number | undefined;
}

const HEARTBEAT = ': heartbeat\n\n';
const END_GRACE_MS = 1_000;
/** How long a replay's ids stay to catch their own bus messages arriving late. */
const LATE_BUS_MS = 30_000;
const frameOf = (event: DecisionEvent): string => `id: ${event.id}\nevent: decision\ndata: ${JSON.stringify(event)}\n\n`;
const droppedFrame = (count: number): string => `event: dropped\ndata: ${JSON.stringify({ count })}\n\n`;
const entryOf = (event: DecisionEvent): Entry => ({ event, frame: frameOf(event) });

/**
 * The fields of a decision in their declared order: events from another process (Redis,
 * PostgreSQL) are only checked loosely by the bus, and every stream should carry the same shape.
 */
function normalise(e: DecisionEvent): DecisionEvent {
  return {
    id: e.id,
    time: e.time,
    site_id: e.site_id,
    org_id: e.org_id,
    action: e.action,
    rule_kind: e.rule_kind ?? null,
    rule_id: e.rule_id ?? null,
    would: e.would ?? null,
    client_ip: e.client_ip,
    asn: e.asn ?? null,
    country: e.country ?? null,
    method: e.method,
    host: e.host,
    path: e.path,
    status: e.status,
    request_id: e.request_id,
    ...(e.anomaly ? { anomaly: { score: e.anomaly.score, signals: [...e.anomaly.signals] } } : {}),
  };
}

/** A stored event as the bus carried it. */
export function decisionFromRow(row: Selectable<ShieldEventsTable>): DecisionEvent {
  return normalise({
    id: row.id,
    time: new Date(row.occurred_at).toISOString(),
    site_id: row.site_id,
    org_id: row.org_id,
    action: row.action as DecisionAction,
    rule_kind: row.rule_kind as RuleKind | null,
    rule_id: row.rule_id,
    would: row.would as DecisionEvent['would'],
    client_ip: row.client_ip,
    asn: row.asn,
    country: row.country,
    method: row.method,
    host: row.host,
    path: row.path,
    status: row.status,
    request_id: row.request_id,
    ...(row.anomaly ? { anomaly: row.anomaly } : {}),
  });
}

/** Fixed-capacity buffer that overwrites its oldest item. */
class Ring<T> {
  private readonly items: (T | undefined)[];
  private next = 0;
  private size = 0;

  constructor(private readonly capacity: number) {
    this.items = new Array<T | undefined>(capacity);
  }

  push(item: T): void {
    this.items[this.next] = item;
    this.next = (this.next + 1) % this.capacity;
    if (this.size < this.capacity) this.size += 1;
  }

  /** The items after the newest one `match` accepts, oldest first; undefined when none does. */
  after(match: (item: T) => boolean): T[] | undefined {
    const found: T[] = [];
    for (let i = 1; i <= this.size; i++) {
      const item = this.items[(this.next - i + this.capacity) % this.capacity] as T;
      if (match(item)) return found.reverse();
      found.push(item);
    }
    return undefined;
  }
}

/** One open stream: writes without ever waiting, queues a little, then drops and counts. */
class LiveClient {
  /** Frames waiting for `drain`, from `head` on (shift() would make a long drain quadratic). */
  private queue: string[] = [];
  private head = 0;
  private queuedBytes = 0;
  private dropped = 0;
  /** A write returned false: the socket is backed up until `drain`. */
  private waiting = false;
  /** While a resume reads the database: the live events that arrive meanwhile. */
  private held: Entry[] | undefined;
  private heldBytes = 0;
  /** Live events that did not fit beside `held`: newer than the replay, counted after it. */
  private heldDropped = 0;
  /**
   * Ids a database replay sent, kept for a while after it: a stored event's bus message can reach
   * this hub after the replay read it (Redis or NOTIFY deliver asynchronously), and must not be
   * sent twice.
   */
  private replayed: { ids: Set<string>; until: number } | undefined;
  private closed = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly filter: LiveFilter,
    private readonly maxBytes: number,
    onClose: () => void,
  ) {
    res.on('drain', () => this.drain());
    res.once('close', () => {
      this.closed = true;
      this.queue = [];
      this.head = 0;
      this.queuedBytes = 0;
      this.held = undefined;
      onClose();
    });
    // A write to a connection that just failed; 'close' follows and does the clean-up.
    res.on('error', () => undefined);
  }

  wants(event: DecisionEvent): boolean {
    const { actions, ruleKinds } = this.filter;
    if (actions && !actions.includes(event.action)) return false;
    if (ruleKinds && (event.rule_kind === null || !ruleKinds.includes(event.rule_kind))) return false;
    return true;
  }

  offer(entry: Entry): void {
    if (this.closed || !this.wants(entry.event)) return;
    if (this.replayed) {
      if (Date.now() > this.replayed.until) this.replayed = undefined;
      else if (this.replayed.ids.has(entry.event.id)) return;
    }
    if (this.held) {
      if (this.heldBytes + entry.frame.length <= this.maxBytes) {
        this.held.push(entry);
        this.heldBytes += entry.frame.length;
      } else this.heldDropped += 1;
      return;
    }
    this.send(entry.frame);
  }

  /** Live events wait until `release`: a database replay goes first. */
  hold(): void {
    this.held = [];
    this.heldBytes = 0;
    this.heldDropped = 0;
  }

  /** Sends the replay of what came after `lastId`, then the held live events it does not already contain. */
  release(replay: readonly Entry[], missed: number, lastId: string): void {
    const held = this.held ?? [];
    this.held = undefined;
    // The missed events are older than the replayed ones, so the notice comes first.
    this.dropped += missed;
    this.flushDropped();
    // The client has `lastId` already; its bus message may still be on the way.
    const sent = new Set<string>([lastId]);
    for (const entry of replay) {
      sent.add(entry.event.id);
      this.send(entry.frame, true);
    }
    for (const entry of held) if (!sent.has(entry.event.id)) this.send(entry.frame);
    this.replayed = { ids: sent, until: Date.now() + LATE_BUS_MS };
    this.dropped += this.heldDropped;
    this.heldDropped = 0;
    this.flushDropped();
  }

  /** Events from the buffer, all queued: a replay is bounded by the buffer, not by the queue. */
  replay(entries: readonly Entry[]): void {
    for (const entry of entries) if (!this.closed && this.wants(entry.event)) this.send(entry.frame, true);
  }

  heartbeat(): void {
    // A backed-up client needs no proof of life; it would only lengthen the queue.
    if (!this.closed && !this.waiting && this.queued === 0) this.write(HEARTBEAT);
  }

  /** Ends the stream; a backed-up connection is cut rather than waited for. */
  end(): void {
    if (this.closed) return;
    this.closed = true;
    const socket = this.res.socket;
    if (this.waiting || this.res.writableNeedDrain || (socket !== null && socket.writableLength > 0)) {
      this.res.destroy();
      return;
    }
    this.res.end();
    // The last bytes can still find the socket full; the server must not wait for a reader that
    // has stopped reading.
    setTimeout(() => this.res.destroy(), END_GRACE_MS).unref();
  }

  private get queued(): number {
    return this.queue.length - this.head;
  }

  /** `replayed`: part of a bounded replay, queued even beyond the limit. */
  private send(frame: string, replayed = false): void {
    if (this.closed) return;
    if (this.waiting || this.queued > 0) {
      if (replayed || this.queuedBytes + frame.length <= this.maxBytes) {
        this.queue.push(frame);
        this.queuedBytes += frame.length;
      } else this.dropped += 1;
      return;
    }
    this.write(frame);
  }

  private write(chunk: string): void {
    if (this.res.destroyed || this.res.writableEnded) return;
    if (!this.res.write(chunk)) this.waiting = true;
  }

  private drain(): void {
    this.waiting = false;
    while (!this.waiting && !this.closed && this.queued > 0) {
      const frame = this.queue[this.head] as string;
      this.head += 1;
      this.queuedBytes -= frame.length;
      this.write(frame);
    }
    if (this.queued === 0) {
      this.queue = [];
      this.head = 0;
    }
    this.flushDropped();
  }

  /** Tells a client that has caught up how many events it did not get. */
  private flushDropped(): void {
    if (this.closed || this.waiting || this.queued > 0 || this.dropped === 0) return;
    const count = this.dropped;
    this.dropped = 0;
    this.write(droppedFrame(count));
  }
}

export class LiveHub {
  private readonly bus: LiveBus;
  private readonly db: Db;
  private readonly log: FastifyBaseLogger;
  private readonly bufferSize: number;
  private readonly clientQueueBytes: number;
  private readonly replayLimit: number;
  private readonly lingerMs: number;
  private readonly sites = new Map<string, SiteStream>();
  private readonly timer: NodeJS.Timeout;
  private unsubscribe: (() => void) | undefined;
  private closed = false;

  constructor(options: LiveHubOptions) {
    this.bus = options.bus;
    this.db = options.db;
    this.log = options.log;
    this.bufferSize = options.bufferSize ?? 1000;
    this.clientQueueBytes = options.clientQueueBytes ?? 1024 * 1024;
    this.replayLimit = options.replayLimit ?? 1000;
    this.lingerMs = options.lingerMs ?? 5 * 60_000;
    this.timer = setInterval(() => this.tick(), options.heartbeatMs);
    this.timer.unref();
  }

  stats(): LiveHubStats {
    let clients = 0;
    for (const site of this.sites.values()) clients += site.clients.size;
    return { sites: this.sites.size, clients };
  }

  /**
   * Streams a site's decisions to a response whose SSE headers are already written. Resolves once
   * any replay is written; never rejects (a failed replay ends the stream, the client reconnects).
   */
  async open(res: ServerResponse, request: LiveStreamRequest): Promise<void> {
    if (this.closed) {
      res.destroy();
      return;
    }
    const site = this.watch(request.siteId);
    const client: LiveClient = new LiveClient(res, request.filter, this.clientQueueBytes, () => this.leave(site, client));
    site.clients.add(client);
    site.idleSince = undefined;
    const lastId = request.lastEventId;
    if (lastId === undefined) return;

    const buffered = site.buffer.after((entry) => entry.event.id === lastId);
    if (buffered) {
      client.replay(buffered);
      return;
    }
    client.hold();
    try {
      const { events, missed } = await this.replay(request, lastId);
      client.release(events.map(entryOf), missed, lastId);
    } catch (err) {
      this.log.error({ err, site_id: request.siteId }, 'shield live: replaying from the database failed');
      client.end();
    }
  }

  /** Ends every stream and leaves the bus; the server can then close its connections. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const site of this.sites.values()) for (const client of [...site.clients]) client.end();
    this.sites.clear();
  }

  private watch(siteId: string): SiteStream {
    let site = this.sites.get(siteId);
    if (!site) {
      site = { buffer: new Ring<Entry>(this.bufferSize), clients: new Set(), idleSince: undefined };
      this.sites.set(siteId, site);
    }
    this.unsubscribe ??= this.bus.subscribe((event) => this.deliver(event));
    return site;
  }

  private leave(site: SiteStream, client: LiveClient): void {
    site.clients.delete(client);
    if (site.clients.size === 0) site.idleSince = Date.now();
  }

  private deliver(event: DecisionEvent): void {
    const site = this.sites.get(event.site_id);
    if (!site) return;
    const entry = entryOf(normalise(event));
    site.buffer.push(entry);
    for (const client of site.clients) {
      try {
        client.offer(entry);
      } catch (err) {
        this.log.warn({ err }, 'shield live: writing to a stream failed');
      }
    }
  }

  /** Heartbeats, and forgetting sites nobody has watched for a while. */
  private tick(): void {
    const now = Date.now();
    for (const [id, site] of this.sites) {
      for (const client of site.clients) client.heartbeat();
      if (site.clients.size === 0 && site.idleSince !== undefined && now - site.idleSince >= this.lingerMs) this.sites.delete(id);
    }
    if (this.sites.size === 0 && this.unsubscribe) {
      this.unsubscribe();
      this.unsubscribe = undefined;
    }
  }

  /** The newest `replayLimit` stored events after `lastId`, oldest first, and how many more there were. */
  private async replay(request: LiveStreamRequest, lastId: string): Promise<{ events: DecisionEvent[]; missed: number }> {
    const { actions, ruleKinds } = request.filter;
    // Ids are `dec_` + a lower-case ULID: one length, one prefix, so text order is time order.
    const after = this.db
      .selectFrom('shield_events')
      .where('site_id', '=', request.siteId)
      .where('org_id', '=', request.orgId)
      .where('id', '>', lastId)
      .$if(actions !== undefined, (q) => q.where('action', 'in', actions ?? []))
      .$if(ruleKinds !== undefined, (q) => q.where('rule_kind', 'in', ruleKinds ?? []));
    const rows = await after.selectAll().orderBy('id', 'desc').limit(this.replayLimit + 1).execute();
    let missed = 0;
    if (rows.length > this.replayLimit) {
      rows.length = this.replayLimit;
      const oldest = rows[rows.length - 1]?.id ?? lastId;
      const counted = await after
        .select((eb) => eb.fn.countAll<string | number>().as('count'))
        .where('id', '<', oldest)
        .executeTakeFirst();
      missed = Number(counted?.count ?? 0);
    }
    return { events: rows.reverse().map(decisionFromRow), missed };
  }
}
