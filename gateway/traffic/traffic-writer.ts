// Writes the traffic record (docs/impact-preview.md). `capture` runs on the proxy's hot path: it
// adds the request to its site's open batch (record-batch.ts), synchronously, and never throws or
// waits. A timer closes each batch once it is BATCH_MS old or holds BATCH_REQUESTS requests and
// writes it as one row into the day's partition, sealing kept values on the way. Batches of many
// requests are what make a preview fast: a replay reads a day of a quiet site (a dozen requests a
// second) as a few thousand rows, not as a row per second, and a busy gateway writes less often. When the database falls behind, requests waiting reach `maxQueue` and
// further ones are shed — counted, never waited for: recording must never slow or break proxying.
import type { BaseLogger } from 'pino';
import { seal } from '../../platform/crypto/secret-box.ts';
import type { Db } from '../../platform/db/database.ts';
import { requestViews } from '../inspect/method-override.ts';
import { captureRecord, type CaptureInput } from './capture.ts';
import { ensureTrafficPartition, trafficPartitionDay } from './partitions.ts';
import { BatchBuilder } from './record-batch.ts';
import { ValueSampler, type ValueSamplerOptions } from './value-sampler.ts';

export interface TrafficWriterOptions extends ValueSamplerOptions {
  db: Db;
  log: BaseLogger;
  /** Seals kept values (platform/crypto/secret-box.ts), bound to the site. */
  serverKey: Buffer;
  /** How often batches are looked at, closed and written (ms); default 1 000. */
  flushMs?: number | undefined;
  /** A batch is closed once its first request is this old (ms); default BATCH_MS. */
  batchMs?: number | undefined;
  /** …or once it holds this many requests; default BATCH_REQUESTS. */
  batchRequests?: number | undefined;
  /** Requests waiting beyond which new ones are shed; default 100 000. */
  maxQueue?: number | undefined;
  /** Attempts at writing one batch before it is given up (its records counted as shed); default 4. */
  maxAttempts?: number | undefined;
}

export interface TrafficWriterStats {
  queued: number;
  written: number;
  /** Requests not recorded: the queue was full, a batch was given up, or the writer had closed. */
  shed: number;
  failedWrites: number;
}

/** A closed batch, ready to be written. */
interface BatchRow {
  site_id: string;
  at: Date;
  until_at: Date;
  requests: number;
  columns: string;
  values_sealed: string | null;
}

/** The longest a request waits in an open batch: what a preview may not yet see, and what a crashed process loses. */
export const BATCH_MS = 30_000;
export const BATCH_REQUESTS = 20_000;

export class TrafficWriter {
  readonly #db: Db;
  readonly #log: BaseLogger;
  readonly #serverKey: Buffer;
  readonly #sampler: ValueSampler;
  readonly #maxQueue: number;
  readonly #maxAttempts: number;
  readonly #batchMs: number;
  readonly #batchRequests: number;
  readonly #timer: NodeJS.Timeout;
  /** Open batches by site, and closed ones waiting to be written. */
  #open = new Map<string, BatchBuilder>();
  #openRequests = 0;
  #closedRows: { row: BatchRow; attempts: number }[] = [];
  #closedRequests = 0;
  #writing: Promise<void> | null = null;
  #closed = false;
  #enabled = true;
  /** Days whose partition exists (created here or found): checked once per day per process. */
  readonly #partitions = new Set<string>();
  readonly #stats: TrafficWriterStats = { queued: 0, written: 0, shed: 0, failedWrites: 0 };

  constructor(options: TrafficWriterOptions) {
    this.#db = options.db;
    this.#log = options.log;
    this.#serverKey = options.serverKey;
    this.#sampler = new ValueSampler(options);
    this.#maxQueue = options.maxQueue ?? 100_000;
    this.#maxAttempts = options.maxAttempts ?? 4;
    this.#batchMs = options.batchMs ?? BATCH_MS;
    this.#batchRequests = options.batchRequests ?? BATCH_REQUESTS;
    this.#timer = setInterval(() => void this.#tick(), options.flushMs ?? 1_000);
    this.#timer.unref();
  }

  /** Records one answered request. Synchronous and O(size of what is kept); never throws. */
  capture(input: CaptureInput): void {
    if (!this.#enabled) return;
    if (this.#closed || this.#openRequests + this.#closedRequests >= this.#maxQueue) {
      this.#stats.shed++;
      return;
    }
    try {
      // Managed rules' verdict at every level, so that a preview of a level change is exact without
      // values. Values stay for what the live rules flagged: at level 4 a good share of benign
      // traffic is flagged (a missing User-Agent is enough), and keeping all of it would not be a bounded subset.
      const managed = input.managedLevels?.judge(requestViews(input.request)) ?? null;
      const valuesReason = this.#sampler.pick(input.siteId, input.request.method, input.request.path, input.verdict.action !== 'allow', input.arrived);
      let batch = this.#open.get(input.siteId);
      if (!batch) this.#open.set(input.siteId, (batch = new BatchBuilder(input.siteId)));
      batch.add(captureRecord(input, managed, valuesReason));
      this.#openRequests++;
    } catch (err) {
      // A request the capture cannot read is shed, not a crash of the proxy.
      this.#stats.shed++;
      this.#log.warn({ err }, 'shield: a request could not be added to the traffic record');
    }
  }

  /** Pauses or resumes recording (bench:shield measures the gateway both ways in one run). */
  setEnabled(enabled: boolean): void {
    this.#enabled = enabled;
  }

  stats(): TrafficWriterStats {
    return { ...this.#stats, queued: this.#openRequests + this.#closedRequests };
  }

  /** Closes every open batch, however young, and writes every waiting one (one write at a time). */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
    this.#closeBatches(() => true);
    await this.#writeClosed();
  }

  /** The timer: batches old or full enough are closed and written; a write still running is left to finish. */
  async #tick(): Promise<void> {
    if (this.#writing) return;
    const oldest = Date.now() - this.#batchMs;
    this.#closeBatches((batch) => batch.first <= oldest || batch.size >= this.#batchRequests);
    await this.#writeClosed();
  }

  async #writeClosed(): Promise<void> {
    if (this.#closedRows.length === 0) return;
    this.#writing = this.#writeAll().finally(() => (this.#writing = null));
    await this.#writing;
  }

  #closeBatches(due: (batch: BatchBuilder) => boolean): void {
    for (const [siteId, batch] of this.#open) {
      if (!due(batch)) continue;
      this.#open.delete(siteId);
      this.#openRequests -= batch.size;
      try {
        const values = batch.hasValues ? seal(this.#serverKey, JSON.stringify(batch.values), batch.siteId) : null;
        this.#closedRows.push({
          row: { site_id: batch.siteId, at: new Date(batch.first), until_at: new Date(batch.last), requests: batch.size, columns: batch.encode(), values_sealed: values },
          attempts: 0,
        });
        this.#closedRequests += batch.size;
      } catch (err) {
        this.#stats.shed += batch.size;
        this.#log.error({ err }, 'shield: a traffic-record batch could not be encoded');
      }
    }
  }

  async #writeAll(): Promise<void> {
    while (this.#closedRows.length > 0) {
      const rows = this.#closedRows.splice(0, 20);
      const requests = rows.reduce((sum, r) => sum + r.row.requests, 0);
      try {
        await this.#write(rows.map((r) => r.row));
        this.#stats.written += requests;
        this.#closedRequests -= requests;
      } catch (err) {
        this.#stats.failedWrites++;
        const retry = rows.filter((r) => ++r.attempts < this.#maxAttempts);
        const givenUp = requests - retry.reduce((sum, r) => sum + r.row.requests, 0);
        if (givenUp > 0) {
          this.#stats.shed += givenUp;
          this.#closedRequests -= givenUp;
          this.#log.error({ err, requests: givenUp }, 'shield: traffic-record batch given up');
        }
        // Back at the front, after a pause that grows with the attempts; the timer's next flush retries.
        this.#closedRows.unshift(...retry);
        if (retry.length > 0) await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** (retry[0]?.attempts ?? 1)));
        return;
      }
    }
  }

  async #write(rows: readonly BatchRow[]): Promise<void> {
    for (const row of rows) {
      const day = trafficPartitionDay(row.at.getTime());
      if (!this.#partitions.has(day)) {
        await ensureTrafficPartition(this.#db, day);
        this.#partitions.add(day);
      }
    }
    await this.#db.insertInto('shield_traffic').values([...rows]).execute();
  }

  /** Stops taking records and writes what is queued. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.flush();
  }
}
