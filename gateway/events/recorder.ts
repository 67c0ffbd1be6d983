// Records the gateway's decisions. `record` runs on the proxy's hot path, so it only counts and
// queues (O(1), synchronous, never throws); a timer writes the queue in batches. Each batch is one
// transaction holding both the events and the per-minute rollup increments they account for, so
// the rollups and the stored events can never disagree. The same transaction counts the batch's
// blocks and challenges into their alert windows (alert-windows.ts), so each is counted
// once, with the batch that stores it. Only once a batch has committed are its events published to
// the live bus.
//
// Kept: every non-allow decision, and each allow with probability `allowSampleRate`. Counted in
// the rollups: every decision. When the database falls behind, the queue stops at `maxQueue` and
// further decisions are counted (`dropped`) but not stored; a batch that fails is retried a few
// times with a growing delay, then given up (its decisions stay counted in `requests`).
import { sql } from 'kysely';
import type { BaseLogger } from 'pino';
import type { Db } from '../../platform/db/database.ts';
import { addAlert, countShieldAlerts, mergeAlertCounts, type AlertDeltas } from './alert-windows.ts';
import type { DecisionEvent } from '../decision.ts';
import type { LiveBus } from './live-bus.ts';

export interface RecorderOptions {
  db: Db;
  bus: LiveBus;
  log: BaseLogger;
  /** Length of a shield.block / shield.challenge alert window (ms); default 10 000. */
  alertWindowMs?: number | undefined;
  /** Share of allows stored (0–1); default 0.01. */
  allowSampleRate?: number | undefined;
  /** Interval between writes (ms); default 500. */
  flushMs?: number | undefined;
  /** Events per batch, and the queue length that triggers a write at once; default 500. */
  batchSize?: number | undefined;
  /** Events waiting beyond which new ones are dropped; default 50 000. */
  maxQueue?: number | undefined;
  /** Attempts at writing one batch before it is given up; default 6 (about 15 s). */
  maxAttempts?: number | undefined;
}

export interface RecorderStats {
  /** Events waiting to be written. */
  queued: number;
  /** Events stored so far. */
  recorded: number;
  /** Events that were to be stored but were not (queue full, batch given up, recorder closed). */
  dropped: number;
  /** Batches that failed to write (each attempt counts). */
  failedWrites: number;
}

interface RollupDelta {
  site_id: string;
  minute: number;
  action: string;
  rule_kind: string;
  requests: number;
  recorded: number;
}

interface Batch {
  events: DecisionEvent[];
  rollups: Map<string, RollupDelta>;
  /** The batch's blocks and challenges, stored or not (dropped ones are counted, never sampled). */
  alerts: AlertDeltas;
  attempts: number;
}

const MINUTE = 60_000;

/** What a rollup row is keyed by: enough of a decision to count it without building its record. */
export interface DecisionFacts {
  site_id: string;
  /** Epoch ms the request arrived. */
  at: number;
  action: DecisionEvent['action'];
  rule_kind: DecisionEvent['rule_kind'];
}

function count(rollups: Map<string, RollupDelta>, facts: DecisionFacts, requests: number, recorded: number): void {
  const minute = Math.floor(facts.at / MINUTE) * MINUTE;
  // Most decisions in a row fall in the same row as the one before (a site's allows, this minute).
  const last = lastCounted.get(rollups);
  if (last && last.minute === minute && last.site_id === facts.site_id && last.action === facts.action && last.rule_kind === (facts.rule_kind ?? '')) {
    last.requests += requests;
    last.recorded += recorded;
    return;
  }
  const ruleKind = facts.rule_kind ?? '';
  const key = `${facts.site_id}\u0000${minute}\u0000${facts.action}\u0000${ruleKind}`;
  const delta = rollups.get(key);
  if (delta) {
    delta.requests += requests;
    delta.recorded += recorded;
  } else {
    rollups.set(key, { site_id: facts.site_id, minute, action: facts.action, rule_kind: ruleKind, requests, recorded });
  }
  lastCounted.set(rollups, rollups.get(key)!);
}

/** The row each map counted last; a map swapped out for a new one is forgotten with it. */
const lastCounted = new WeakMap<Map<string, RollupDelta>, RollupDelta>();

const factsOf = (event: DecisionEvent): DecisionFacts => ({ site_id: event.site_id, at: Date.parse(event.time), action: event.action, rule_kind: event.rule_kind });

function mergeRequests(into: Map<string, RollupDelta>, from: Map<string, RollupDelta>): void {
  for (const [key, delta] of from) {
    const existing = into.get(key);
    if (existing) existing.requests += delta.requests;
    else into.set(key, { ...delta, recorded: 0 });
  }
}

const isUniqueViolation = (err: unknown): boolean => typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';

export class DecisionRecorder {
  private readonly db: Db;
  private readonly bus: LiveBus;
  private readonly log: BaseLogger;
  private readonly alertWindowMs: number;
  private readonly allowSampleRate: number;
  private readonly batchSize: number;
  private readonly maxQueue: number;
  private readonly maxAttempts: number;
  private readonly timer: NodeJS.Timeout;

  private queue: DecisionEvent[] = [];
  /** Decisions observed but not queued (sampled-out allows, drops), not yet in a batch. */
  private uncounted = new Map<string, RollupDelta>();
  /** Blocks and challenges not queued (queue full, recorder closed, batch given up), not yet in a batch. */
  private uncountedAlerts: AlertDeltas = new Map();
  private retry: Batch | undefined;
  private retryAt = 0;
  /** The write in progress, if any: writes never overlap, so batches commit in order. */
  private tail: Promise<void> = Promise.resolve();
  private writing = false;
  private kickScheduled = false;
  private closed = false;
  private readonly counters = { recorded: 0, dropped: 0, failedWrites: 0 };

  constructor(options: RecorderOptions) {
    this.db = options.db;
    this.bus = options.bus;
    this.alertWindowMs = options.alertWindowMs ?? 10_000;
    this.log = options.log;
    this.allowSampleRate = Math.min(1, Math.max(0, options.allowSampleRate ?? 0.01));
    this.batchSize = options.batchSize ?? 500;
    this.maxQueue = options.maxQueue ?? 50_000;
    this.maxAttempts = options.maxAttempts ?? 6;
    this.timer = setInterval(() => {
      if (!this.writing) void this.schedule(false);
    }, options.flushMs ?? 500);
    this.timer.unref();
  }

  /**
   * Whether a decision of this action is to be stored: always for non-allows, a sample of allows.
   * Asked before the record is built, so that sampled-out allows cost only a count.
   */
  keeps(action: DecisionEvent['action']): boolean {
    return action !== 'allow' || (this.allowSampleRate > 0 && (this.allowSampleRate >= 1 || Math.random() < this.allowSampleRate));
  }

  /** Counts a decision that is not stored (a sampled-out allow). Synchronous; never throws. */
  countOnly(facts: DecisionFacts): void {
    // Counted at once, written with the next batch.
    count(this.uncounted, facts, 1, 0);
  }

  /**
   * Counts a decision and queues it for storage. `keep` is the answer of keeps(); left out, it is
   * asked here. Synchronous; never throws.
   */
  record(event: DecisionEvent, keep = this.keeps(event.action)): void {
    if (!keep || this.closed || this.queue.length >= this.maxQueue) {
      if (keep) this.counters.dropped += 1;
      this.countOnly(factsOf(event));
      // Not stored, still alerted on: the request was blocked all the same.
      addAlert(this.uncountedAlerts, event, false);
      return;
    }
    this.queue.push(event);
    if (this.queue.length >= this.batchSize && !this.writing && !this.kickScheduled) {
      this.kickScheduled = true;
      setImmediate(() => {
        this.kickScheduled = false;
        if (!this.writing) void this.schedule(false);
      });
    }
  }

  /** The number of events that were to be stored but were not. */
  get dropped(): number {
    return this.counters.dropped;
  }

  stats(): RecorderStats {
    return { queued: this.queue.length + (this.retry?.events.length ?? 0), ...this.counters };
  }

  /** Writes everything recorded so far (retrying a failed batch now). Resolves even if a write fails. */
  flush(): Promise<void> {
    return this.schedule(true);
  }

  /** Stops the timer and writes what is left; later decisions are counted as dropped. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.flush();
  }

  private schedule(force: boolean): Promise<void> {
    const run = this.tail.then(() => this.drain(force));
    this.tail = run.catch((err: unknown) => this.log.error({ err }, 'shield: decision writer failed'));
    return this.tail;
  }

  /** Writes batches until nothing is left or a write fails. */
  private async drain(force: boolean): Promise<void> {
    this.writing = true;
    try {
      for (;;) {
        if (this.retry && !force && Date.now() < this.retryAt) return;
        const batch = this.retry ?? this.takeBatch();
        if (!batch) return;
        if (!(await this.write(batch))) return;
      }
    } finally {
      this.writing = false;
    }
  }

  private takeBatch(): Batch | undefined {
    if (this.queue.length === 0 && this.uncounted.size === 0 && this.uncountedAlerts.size === 0) return undefined;
    const events = this.queue.length <= this.batchSize ? this.queue : this.queue.slice(0, this.batchSize);
    this.queue = events === this.queue ? [] : this.queue.slice(this.batchSize);
    const rollups = this.uncounted;
    this.uncounted = new Map();
    const alerts = this.uncountedAlerts;
    this.uncountedAlerts = new Map();
    for (const event of events) {
      count(rollups, factsOf(event), 1, 1);
      addAlert(alerts, event, true);
    }
    return { events, rollups, alerts, attempts: 0 };
  }

  /** One transaction; true when the batch is committed (or given up), false to stop draining. */
  private async write(batch: Batch): Promise<boolean> {
    try {
      await this.insert(batch);
    } catch (err) {
      // A retried batch whose first commit succeeded but was never acknowledged: its ids exist,
      // and its rollups and alert counts committed with them (one transaction), so nothing is redone.
      if (!(batch.attempts > 0 && isUniqueViolation(err))) return this.failed(batch, err);
    }
    this.retry = undefined;
    this.counters.recorded += batch.events.length;
    this.announce(batch.events);
    return true;
  }

  private failed(batch: Batch, err: unknown): boolean {
    batch.attempts += 1;
    this.counters.failedWrites += 1;
    if (batch.attempts < this.maxAttempts) {
      this.retry = batch;
      this.retryAt = Date.now() + Math.min(10_000, 500 * 2 ** (batch.attempts - 1));
      this.log.error({ err, events: batch.events.length, attempt: batch.attempts }, 'shield: writing decisions failed; will retry');
      return false;
    }
    this.retry = undefined;
    this.counters.dropped += batch.events.length;
    // The decisions happened: keep them in the request counts of a later batch.
    mergeRequests(this.uncounted, batch.rollups);
    mergeAlertCounts(this.uncountedAlerts, batch.alerts);
    this.log.error({ err, events: batch.events.length, attempts: batch.attempts }, 'shield: writing decisions failed; batch dropped');
    return true;
  }

  private async insert(batch: Batch): Promise<void> {
    // Rollup rows in one fixed order (their keys): concurrent writers (several gateways) then lock
    // rows in the same order and cannot deadlock.
    const rollups = [...batch.rollups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, delta]) => delta);
    await this.db.transaction().execute(async (trx) => {
      if (batch.events.length > 0) {
        await trx
          .insertInto('shield_events')
          .values(
            batch.events.map((e) => ({
              id: e.id,
              site_id: e.site_id,
              org_id: e.org_id,
              occurred_at: e.time,
              action: e.action,
              rule_kind: e.rule_kind,
              rule_id: e.rule_id,
              would: e.would,
              client_ip: e.client_ip,
              asn: e.asn,
              country: e.country,
              method: e.method,
              host: e.host,
              path: e.path,
              status: e.status,
              request_id: e.request_id,
              anomaly: e.anomaly ? JSON.stringify(e.anomaly) : null,
            })),
          )
          .execute();
      }
      if (rollups.length > 0) {
        await trx
          .insertInto('shield_event_rollups')
          .values(rollups.map((r) => ({ site_id: r.site_id, minute: new Date(r.minute).toISOString(), action: r.action, rule_kind: r.rule_kind, requests: r.requests, recorded: r.recorded })))
          .onConflict((oc) =>
            oc.columns(['site_id', 'minute', 'action', 'rule_kind']).doUpdateSet({
              requests: sql<number>`shield_event_rollups.requests + excluded.requests`,
              recorded: sql<number>`shield_event_rollups.recorded + excluded.recorded`,
            }),
          )
          .execute();
      }
      // Counted at this attempt's write time: a retry lands in the current window, not a closed one.
      await countShieldAlerts(trx, batch.alerts, this.alertWindowMs);
    });
  }

  /** After commit: the live stream. Its failures are its own. */
  private announce(events: DecisionEvent[]): void {
    if (events.length === 0) return;
    try {
      this.bus.publish(events);
    } catch (err) {
      this.log.error({ err }, 'shield: publishing decisions to the live bus failed');
    }
  }
}
