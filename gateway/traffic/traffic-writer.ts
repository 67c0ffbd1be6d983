// Writes the traffic record (docs/impact-preview.md). `capture` runs on the proxy's hot path: it
// builds the record and queues it, synchronously, and never throws or waits. A timer writes the
// queue with COPY into the day's partition, sealing kept values on the way. When the database falls
// behind, the queue stops at `maxQueue` and further requests are shed — counted, never waited for:
// recording must never slow or break proxying. A preview says how many were shed in its window.
import type { BaseLogger } from 'pino';
import { seal } from '../../platform/crypto/secret-box.ts';
import { copyField, CopyText, transactionWithCopy } from '../../platform/db/copy.ts';
import type { Db } from '../../platform/db/database.ts';
import { captureRecord, type CaptureInput } from './capture.ts';
import { ensureTrafficPartition, trafficPartitionDay } from './partitions.ts';
import type { TrafficRecord } from './traffic-record.ts';
import { ValueSampler, type ValueSamplerOptions } from './value-sampler.ts';

export interface TrafficWriterOptions extends ValueSamplerOptions {
  db: Db;
  log: BaseLogger;
  /** Seals kept values (platform/crypto/secret-box.ts), bound to the site. */
  serverKey: Buffer;
  /** Interval between writes (ms); default 1 000. */
  flushMs?: number | undefined;
  /** Records per COPY; default 5 000. */
  batchSize?: number | undefined;
  /** Records waiting beyond which new ones are shed; default 100 000. */
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

const COLUMNS = [
  'site_id',
  'at',
  'client_ip',
  'network',
  'asn',
  'country',
  'method',
  'path',
  'status',
  'latency_ms',
  'has_session',
  'api_keys',
  'action',
  'rule_kind',
  'rule_id',
  'would',
  'values_reason',
  'values_sealed',
] as const;

/** The record as one row of COPY text. */
function copyRow(record: TrafficRecord, serverKey: Buffer): string {
  const sealed = record.values ? seal(serverKey, JSON.stringify(record.values), record.siteId) : null;
  return (
    [
      copyField(record.siteId),
      new Date(record.at).toISOString(),
      copyField(record.clientIp),
      copyField(record.network),
      record.asn === null ? '\\N' : String(record.asn),
      copyField(record.country),
      copyField(record.method),
      copyField(record.path),
      String(record.status),
      String(record.latencyMs),
      record.hasSession ? 't' : 'f',
      copyField(record.apiKeys.length > 0 ? record.apiKeys.join(' ') : null),
      record.action,
      copyField(record.ruleKind),
      copyField(record.ruleId),
      copyField(record.would),
      copyField(record.valuesReason),
      copyField(sealed),
    ].join('\t') + '\n'
  );
}

export class TrafficWriter {
  readonly #db: Db;
  readonly #log: BaseLogger;
  readonly #serverKey: Buffer;
  readonly #sampler: ValueSampler;
  readonly #batchSize: number;
  readonly #maxQueue: number;
  readonly #maxAttempts: number;
  readonly #timer: NodeJS.Timeout;
  #queue: TrafficRecord[] = [];
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
    this.#batchSize = options.batchSize ?? 5_000;
    this.#maxQueue = options.maxQueue ?? 100_000;
    this.#maxAttempts = options.maxAttempts ?? 4;
    this.#timer = setInterval(() => void this.flush(), options.flushMs ?? 1_000);
    this.#timer.unref();
  }

  /** Records one answered request. Synchronous and O(size of what is kept); never throws. */
  capture(input: Omit<CaptureInput, 'valuesReason'>): void {
    if (!this.#enabled) return;
    if (this.#closed || this.#queue.length >= this.#maxQueue) {
      this.#stats.shed++;
      return;
    }
    try {
      const valuesReason = this.#sampler.pick(input.siteId, input.request.method, input.request.path, input.verdict, input.arrived);
      this.#queue.push(captureRecord({ ...input, valuesReason }));
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
    return { ...this.#stats, queued: this.#queue.length };
  }

  /** Writes everything queued so far (one write at a time). */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
    if (this.#queue.length === 0) return;
    this.#writing = this.#writeAll().finally(() => (this.#writing = null));
    await this.#writing;
  }

  async #writeAll(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#batchSize);
      let attempt = 0;
      for (;;) {
        try {
          await this.#write(batch);
          this.#stats.written += batch.length;
          break;
        } catch (err) {
          this.#stats.failedWrites++;
          if (++attempt >= this.#maxAttempts) {
            this.#stats.shed += batch.length;
            this.#log.error({ err, records: batch.length }, 'shield: traffic record batch given up');
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt));
        }
      }
    }
  }

  async #write(batch: readonly TrafficRecord[]): Promise<void> {
    for (const record of batch) {
      const day = trafficPartitionDay(record.at);
      if (!this.#partitions.has(day)) {
        await ensureTrafficPartition(this.#db, day);
        this.#partitions.add(day);
      }
    }
    const text = new CopyText();
    for (const record of batch) text.row(copyRow(record, this.#serverKey));
    await transactionWithCopy(this.#db, async (_trx, copyIn) => {
      if (copyIn) return copyIn('shield_traffic', COLUMNS, [text.bytes()]);
      // A database not opened by openDatabase (none in the product): plain inserts.
      throw new Error('the traffic record needs a database opened by openDatabase (COPY)');
    });
  }

  /** Stops taking records and writes what is queued. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.flush();
  }
}
