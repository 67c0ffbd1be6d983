// Live bus over PostgreSQL LISTEN/NOTIFY, for deployments with a PostgreSQL server and no Redis.
// One dedicated connection per process (outside the query pool: a LISTEN belongs to its session)
// both sends and listens. A NOTIFY payload must stay under 8 000 bytes, so a batch goes out as
// several JSON arrays of at most MAX_PAYLOAD_BYTES each. The connection is re-opened after an error,
// with a growing delay; what is published while it is down is dropped.
import pg from 'pg';
import type { BaseLogger } from 'pino';
import type { DecisionEvent } from '../decision.ts';
import type { LiveBus } from './live-bus.ts';
import { LiveListeners, parseBatch, throttledLog, type LiveListener } from './live-listeners.ts';

export const PG_LIVE_CHANNEL = 'aegis_shield_decisions';
export const MAX_PAYLOAD_BYTES = 7_900;
const MAX_PENDING = 1_000;
const MAX_RECONNECT_DELAY_MS = 30_000;

/** JSON arrays of events, each at most `maxBytes` long in UTF-8; an event too large alone is left out. */
export function packPayloads(events: readonly DecisionEvent[], maxBytes = MAX_PAYLOAD_BYTES): { payloads: string[]; oversize: number } {
  const payloads: string[] = [];
  let parts: string[] = [];
  let size = 2; // the brackets
  let oversize = 0;
  for (const event of events) {
    const json = JSON.stringify(event);
    const bytes = Buffer.byteLength(json);
    if (bytes + 2 > maxBytes) {
      oversize += 1;
      continue;
    }
    const added = bytes + (parts.length > 0 ? 1 : 0);
    if (size + added > maxBytes) {
      payloads.push(`[${parts.join(',')}]`);
      parts = [];
      size = 2;
    }
    size += bytes + (parts.length > 0 ? 1 : 0);
    parts.push(json);
  }
  if (parts.length > 0) payloads.push(`[${parts.join(',')}]`);
  return { payloads, oversize };
}

export class PgLiveBus implements LiveBus {
  private readonly listeners: LiveListeners;
  private readonly warn: (err: unknown, message: string) => void;
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client | undefined> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private pending = 0;
  private closed = false;
  /** Payloads not sent (connection down, too many waiting, or one event over the NOTIFY limit). */
  dropped = 0;

  constructor(
    private readonly databaseUrl: string,
    private readonly log?: BaseLogger,
  ) {
    this.listeners = new LiveListeners(log);
    this.warn = throttledLog(log);
  }

  publish(events: DecisionEvent[]): void {
    if (events.length === 0 || this.closed) return;
    const { payloads, oversize } = packPayloads(events);
    this.dropped += oversize;
    for (const payload of payloads) {
      if (this.pending >= MAX_PENDING) {
        this.dropped += 1;
        continue;
      }
      this.pending += 1;
      this.connection()
        .then((client) => {
          if (!client) throw new Error('not connected');
          return client.query('select pg_notify($1, $2)', [PG_LIVE_CHANNEL, payload]);
        })
        .catch((err: unknown) => {
          this.dropped += 1;
          this.warn(err, 'live bus: NOTIFY failed');
        })
        .finally(() => (this.pending -= 1));
    }
  }

  subscribe(listener: LiveListener): () => void {
    const remove = this.listeners.add(listener);
    if (this.listeners.size === 1) {
      // The first subscriber: LISTEN on the open connection, or open one (which then LISTENs).
      if (this.client) this.listen(this.client);
      else void this.connection();
    }
    return remove;
  }

  private listen(client: pg.Client): void {
    client.query(`listen ${PG_LIVE_CHANNEL}`).catch((err: unknown) => this.warn(err, 'live bus: LISTEN failed'));
  }

  /** The open connection, opening it if needed; undefined while it cannot be opened. */
  private connection(): Promise<pg.Client | undefined> {
    if (this.client) return Promise.resolve(this.client);
    if (this.reconnectTimer || this.closed) return Promise.resolve(undefined);
    this.connecting ??= this.open().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async open(): Promise<pg.Client | undefined> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    let lost = false;
    const onLost = (err?: unknown) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = undefined;
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.warn(err, 'live bus: PostgreSQL connection lost; reconnecting');
      this.scheduleReconnect();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (message) => {
      if (message.channel === PG_LIVE_CHANNEL && message.payload) this.listeners.deliver(parseBatch(message.payload));
    });
    try {
      await client.connect();
      if (this.listeners.size > 0) await client.query(`listen ${PG_LIVE_CHANNEL}`);
    } catch (err) {
      onLost(err);
      return undefined;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return undefined;
    }
    this.failures = 0;
    this.client = client;
    return client;
  }

  private scheduleReconnect(): void {
    if (this.reconnectTimer || this.closed) return;
    const delay = Math.min(MAX_RECONNECT_DELAY_MS, 250 * 2 ** this.failures);
    this.failures += 1;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      // Only a process with subscribers reconnects eagerly; a publisher reconnects on its next publish.
      if (this.listeners.size > 0) void this.connection();
    }, delay);
    this.reconnectTimer.unref();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    await this.connecting;
    const client = this.client;
    this.client = undefined;
    // Queries already sent (the last NOTIFYs) complete before end() closes the connection.
    if (client) await client.end().catch((err: unknown) => this.log?.debug({ err }, 'live bus: closing the connection failed'));
  }
}
