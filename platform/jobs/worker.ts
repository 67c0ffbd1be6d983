// A worker: claims jobs of the kinds it handles, runs their handlers, keeps their leases alive and
// records how each attempt ended. Any number of workers (in one process or many) share the queue.
//
// - Polling backs off from pollMinMs to pollMaxMs while there is nothing to do; an enqueue in this
//   process, or a NOTIFY from another (./signals.ts), wakes it at once.
// - One heartbeat statement every heartbeatMs renews the leases of all its running jobs, stores
//   their progress and reads their cancel flags: a canceled job's handler is aborted within about
//   heartbeatMs even when the cancel came from a process we cannot hear.
// - stop() stops claiming, waits for running handlers, then aborts them and hands their jobs back.
import { hostname } from 'node:os';
import type { Db } from '../db/database.ts';
import { randomHex } from '../ids.ts';
import {
  backoffMs,
  claimJobs,
  completeJob,
  completeJobs,
  failJob,
  heartbeat,
  lockHeld,
  markCanceled,
  reclaimExpired,
  releaseJobs,
  type Attempt,
  type ClaimRequest,
  type Completion,
} from './claim.ts';
import { jobHandlers } from './registry.ts';
import { localJobSignals } from './signals.ts';
import {
  JobAbortedError,
  LeaseLostError,
  PermanentJobError,
  RetryLaterError,
  type AbortCause,
  type JobContext,
  type JobHandlers,
  type JobKindDefinition,
  type JobLogger,
  type JobRow,
} from './types.ts';

export interface WorkerOptions {
  db: Db;
  log: JobLogger;
  /** Kinds and their handlers (default: the process registry, read on every claim). */
  handlers?: JobHandlers;
  /** Run only these kinds (default: every kind in `handlers`). */
  kinds?: readonly string[] | undefined;
  /** Handlers running at once in this worker, all kinds together (default 4). */
  concurrency?: number | undefined;
  /** How long a claim is good for without a heartbeat (default 30 s). */
  leaseMs?: number | undefined;
  /** Lease renewal and cancel check interval (default min(500 ms, leaseMs / 3)). */
  heartbeatMs?: number | undefined;
  pollMinMs?: number | undefined;
  /** Longest wait between polls while idle (default 1 s): bounds how late a retry or a missed wake-up starts. */
  pollMaxMs?: number | undefined;
  /** How often expired leases of any worker are swept back into the queue (default 1 s). */
  reclaimEveryMs?: number | undefined;
  /** Worker id as stored in jobs.lease_owner (default host:pid:random). */
  id?: string | undefined;
  /** Told when a job run starts; the function it returns, how the run ended (metrics and traces). */
  observe?: ((job: { id: string; kind: string; attempts: number }) => (result: string) => void) | undefined;
}

interface Running {
  job: JobRow;
  attempt: Attempt;
  controller: AbortController;
  /** Progress not yet stored. */
  progress: number | undefined;
  abortedFor: AbortCause | undefined;
  /** The handler has returned or thrown; its outcome is being recorded. */
  settling: boolean;
  /** ctx.completeWith already completed the job. */
  completed: boolean;
  /** stop() handed the job back while the handler was still running. */
  released: boolean;
  done: Promise<void>;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** How a run ended, coarsely, for metrics and traces (a failure may still be retried). */
function runResult(entry: Running, outcome: Outcome): string {
  if (entry.released || entry.abortedFor === 'shutdown') return 'released';
  if (entry.abortedFor === 'lease-lost' || (!outcome.ok && outcome.error instanceof LeaseLostError)) return 'lease_lost';
  if (entry.completed || outcome.ok) return 'completed';
  if (entry.abortedFor === 'canceled') return 'canceled';
  return 'failed';
}

function errorText(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

export class Worker {
  readonly id: string;
  private readonly db: Db;
  private readonly log: JobLogger;
  private readonly handlers: JobHandlers;
  private readonly observe: WorkerOptions['observe'];
  private readonly only: ReadonlySet<string> | undefined;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly heartbeatMs: number;
  private readonly pollMinMs: number;
  private readonly pollMaxMs: number;
  private readonly reclaimEveryMs: number;
  private readonly running = new Map<string, Running>();
  private state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  private loopDone: Promise<void> = Promise.resolve();
  private stopped: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private wakePending = false;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private beating = false;
  private lastHeartbeatOk = Date.now();
  private lastReclaim = 0;
  private readonly completions: Array<{ completion: Completion; resolve(held: boolean): void; reject(err: unknown): void }> = [];
  private flushing = false;
  private readonly onEnqueued = () => this.wake();
  private readonly onCancel = (id: string) => {
    const entry = this.running.get(id);
    if (entry) this.abort(entry, 'canceled');
  };

  constructor(options: WorkerOptions) {
    this.db = options.db;
    this.handlers = options.handlers ?? jobHandlers;
    this.observe = options.observe;
    this.only = options.kinds ? new Set(options.kinds) : undefined;
    this.concurrency = Math.max(1, options.concurrency ?? 4);
    this.leaseMs = Math.max(100, options.leaseMs ?? 30_000);
    this.heartbeatMs = Math.max(10, options.heartbeatMs ?? Math.min(500, Math.floor(this.leaseMs / 3)));
    this.pollMinMs = Math.max(1, options.pollMinMs ?? 50);
    this.pollMaxMs = Math.max(this.pollMinMs, options.pollMaxMs ?? 1_000);
    this.reclaimEveryMs = options.reclaimEveryMs ?? 1_000;
    this.id = options.id ?? `${hostname()}:${process.pid}:${randomHex(3)}`;
    this.log = options.log.child({ worker: this.id });
  }

  /** The kinds this worker runs now. */
  get kinds(): string[] {
    return Object.keys(this.handlers).filter((k) => this.definition(k));
  }

  /** Jobs this worker is running now. */
  get active(): number {
    return this.running.size;
  }

  start(): this {
    if (this.state !== 'new') throw new Error('a worker starts once');
    this.state = 'running';
    localJobSignals.on('enqueued', this.onEnqueued);
    localJobSignals.on('cancel', this.onCancel);
    this.heartbeatTimer = setInterval(() => void this.beat(), this.heartbeatMs);
    this.heartbeatTimer.unref();
    this.loopDone = this.loop();
    return this;
  }

  /**
   * Stops claiming, gives running handlers `timeoutMs` to finish, then aborts them (reason
   * `shutdown`) and hands their jobs back to the queue without counting the attempt.
   */
  stop(timeoutMs = 10_000): Promise<void> {
    this.stopped ??= this.shutdown(timeoutMs);
    return this.stopped;
  }

  private async shutdown(timeoutMs: number): Promise<void> {
    if (this.state === 'new') {
      this.state = 'stopped';
      return;
    }
    this.state = 'stopping';
    localJobSignals.off('enqueued', this.onEnqueued);
    this.wake();
    await this.loopDone;
    const allDone = () => Promise.all([...this.running.values()].map((r) => r.done));
    await Promise.race([allDone(), delay(timeoutMs)]);
    if (this.running.size > 0) {
      for (const entry of this.running.values()) this.abort(entry, 'shutdown');
      // Handlers that honour the signal end now and hand their own job back (see settle).
      await Promise.race([allDone(), delay(Math.min(1_000, timeoutMs))]);
      const stuck = [...this.running.values()].filter((r) => !r.settling);
      for (const entry of stuck) entry.released = true;
      try {
        const released = await releaseJobs(this.db, this.id, stuck.map((r) => ({ id: r.job.id, attempt: r.attempt.attempt })));
        if (stuck.length > 0) this.log.warn({ jobs: stuck.map((r) => r.job.id), released }, 'jobs: handlers still running at shutdown; their jobs were handed back');
      } catch (err) {
        this.log.error({ err }, 'jobs: could not hand jobs back at shutdown; their leases will expire');
      }
      // Outcomes being written now should land before the caller closes the database.
      const settling = [...this.running.values()].filter((r) => r.settling).map((r) => r.done);
      await Promise.race([Promise.all(settling), delay(1_000)]);
    }
    localJobSignals.off('cancel', this.onCancel);
    clearInterval(this.heartbeatTimer);
    this.state = 'stopped';
  }

  private wake(): void {
    if (this.wakeUp) this.wakeUp();
    else this.wakePending = true;
  }

  /** Resolves after `ms`, or earlier (true) when woken. */
  private sleep(ms: number): Promise<boolean> {
    if (this.wakePending) {
      this.wakePending = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wakeUp = undefined;
        resolve(false);
      }, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve(true);
      };
    });
  }

  private definition(kind: string): JobKindDefinition | undefined {
    if (this.only && !this.only.has(kind)) return undefined;
    return Object.hasOwn(this.handlers, kind) ? this.handlers[kind] : undefined;
  }

  /** The worker's free places, and per kind its own free places within them (the claim caps the sum at `free`). */
  private claimRequests(): { free: number; requests: ClaimRequest[] } {
    const free = this.concurrency - this.running.size;
    const kinds = this.kinds;
    if (free <= 0 || kinds.length === 0) return { free: 0, requests: [] };
    const requests: ClaimRequest[] = [];
    for (const kind of kinds) {
      const definition = this.definition(kind)!;
      let busy = 0;
      for (const r of this.running.values()) if (r.job.kind === kind) busy += 1;
      const limit = Math.min(free, Math.max(1, definition.concurrency ?? 1) - busy);
      if (limit > 0) requests.push({ kind, limit, globalLimit: definition.globalConcurrency });
    }
    return { free, requests };
  }

  private async loop(): Promise<void> {
    let idle = this.pollMinMs;
    while (this.state === 'running') {
      let wanted = 0;
      let claimed = 0;
      try {
        await this.maybeReclaim();
        const { free, requests } = this.claimRequests();
        wanted = Math.min(free, requests.reduce((sum, r) => sum + r.limit, 0));
        if (wanted > 0) {
          const jobs = await claimJobs(this.db, this.id, requests, this.leaseMs, free);
          claimed = jobs.length;
          if (this.state === 'running') for (const job of jobs) this.launch(job);
          else await releaseJobs(this.db, this.id, jobs.map((j) => ({ id: j.id, attempt: j.attempts })));
        }
      } catch (err) {
        this.log.error({ err }, 'jobs: polling failed');
        await this.sleep(this.pollMaxMs);
        continue;
      }
      if (this.state !== 'running') break;
      // Every place filled: there may be more waiting, so claim again as soon as one frees up.
      if (claimed > 0 && claimed === wanted) {
        idle = this.pollMinMs;
        continue;
      }
      if (claimed > 0) idle = this.pollMinMs;
      // Full: a finishing handler wakes the loop.
      const woken = await this.sleep(wanted === 0 ? this.pollMaxMs : idle);
      idle = woken ? this.pollMinMs : Math.min(idle * 2, this.pollMaxMs);
    }
  }

  private async maybeReclaim(): Promise<void> {
    if (Date.now() - this.lastReclaim < this.reclaimEveryMs) return;
    this.lastReclaim = Date.now();
    const reclaimed = await reclaimExpired(this.db);
    for (const r of reclaimed) {
      const fields = { job_id: r.id, job_kind: r.kind, previous_owner: r.previous_owner, state: r.state };
      if (r.state === 'queued') this.log.warn(fields, 'jobs: lease expired; job queued again');
      else this.log.error(fields, `jobs: lease expired on the last attempt; job is ${r.state}`);
    }
  }

  private launch(job: JobRow): void {
    const entry: Running = {
      job,
      attempt: { id: job.id, owner: this.id, attempt: job.attempts },
      controller: new AbortController(),
      progress: undefined,
      abortedFor: undefined,
      settling: false,
      completed: false,
      released: false,
      done: Promise.resolve(),
    };
    this.running.set(job.id, entry);
    entry.done = this.execute(entry).finally(() => {
      this.running.delete(job.id);
      this.wake();
    });
  }

  private abort(entry: Running, cause: AbortCause): void {
    if (entry.abortedFor || entry.settling) return;
    entry.abortedFor = cause;
    entry.controller.abort(new JobAbortedError(cause));
  }

  private async execute(entry: Running): Promise<void> {
    const { job, attempt } = entry;
    const log = this.log.child({ job_id: job.id, job_kind: job.kind, attempt: job.attempts });
    const definition = this.definition(job.kind);
    if (!definition) {
      // Unregistered between the claim and now (or a kinds filter changed): hand it back.
      await releaseJobs(this.db, this.id, [{ id: job.id, attempt: job.attempts }]).catch((err: unknown) => log.error({ err }, 'jobs: could not hand back a job'));
      return;
    }
    const ctx: JobContext = {
      signal: entry.controller.signal,
      progress: (fraction) => {
        if (Number.isFinite(fraction)) entry.progress = Math.min(1, Math.max(0, fraction));
      },
      log,
      workerId: this.id,
      completeWith: async (write) => {
        const value = await this.db.transaction().execute(async (trx) => {
          if (!(await lockHeld(trx, attempt))) throw new LeaseLostError(`job ${job.id}: attempt ${attempt.attempt} no longer holds the lease`);
          const written = await write(trx);
          await completeJob(trx, attempt, written);
          return written;
        });
        entry.completed = true;
        return value;
      },
    };
    const started = Date.now();
    const observed = this.observe?.(job);
    log.debug('jobs: started');
    let outcome: Outcome;
    try {
      outcome = { ok: true, value: await definition.run(job, ctx) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    entry.settling = true;
    try {
      await this.settle(entry, definition, outcome, log, Date.now() - started);
    } catch (err) {
      log.error({ err }, 'jobs: the outcome could not be recorded; the lease will expire and the job will run again');
    }
    observed?.(runResult(entry, outcome));
  }

  private async settle(entry: Running, definition: JobKindDefinition, outcome: Outcome, log: JobLogger, durationMs: number): Promise<void> {
    const { attempt, job } = entry;
    if (entry.released) return;
    if (entry.completed) {
      if (outcome.ok) log.info({ duration_ms: durationMs }, 'jobs: completed');
      else log.warn({ err: outcome.error }, 'jobs: the handler threw after completing its job; the job stays completed');
      return;
    }
    if (entry.abortedFor === 'lease-lost' || (!outcome.ok && outcome.error instanceof LeaseLostError)) {
      log.warn({ duration_ms: durationMs }, 'jobs: lease lost to another worker; this attempt is abandoned and its outcome discarded');
      return;
    }
    if (outcome.ok) {
      if (await this.complete({ ...attempt, result: outcome.value })) {
        log.info({ duration_ms: durationMs }, 'jobs: completed');
      } else {
        log.warn({ duration_ms: durationMs }, 'jobs: completion refused: this attempt no longer holds the lease (the job was reclaimed); result discarded');
      }
      return;
    }
    if (entry.abortedFor === 'canceled') {
      if (await markCanceled(this.db, attempt)) log.info({ duration_ms: durationMs }, 'jobs: canceled');
      return;
    }
    if (entry.abortedFor === 'shutdown') {
      await releaseJobs(this.db, this.id, [{ id: job.id, attempt: attempt.attempt }]);
      log.info('jobs: handed back at shutdown');
      return;
    }
    const error = outcome.error;
    const ended = await failJob(this.db, attempt, {
      error: errorText(error),
      permanent: error instanceof PermanentJobError,
      retryInMs: error instanceof RetryLaterError ? error.retryInMs : backoffMs(attempt.attempt, definition.backoff),
    });
    if (!ended) log.warn({ err: error }, 'jobs: failed, but this attempt no longer holds the lease; failure not recorded');
    else if (ended.state === 'queued') log.warn({ err: error, retry_at: ended.run_at.toISOString() }, 'jobs: failed; will retry');
    else if (ended.state === 'canceled') log.info('jobs: canceled');
    else log.error({ err: error, state: ended.state }, `jobs: failed; job is ${ended.state}`);
  }

  /**
   * Completions go out in batches: the first at once, the ones that finish while a batch is in
   * flight together in the next. No added latency when idle, one commit for many jobs under load.
   */
  private complete(completion: Completion): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.completions.push({ completion, resolve, reject });
      void this.flushCompletions();
    });
  }

  private async flushCompletions(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.completions.length > 0) {
        const batch = this.completions.splice(0, 500);
        try {
          const completed = await completeJobs(this.db, batch.map((b) => b.completion));
          for (const b of batch) b.resolve(completed.has(b.completion.id));
        } catch (err) {
          for (const b of batch) b.reject(err);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private async beat(): Promise<void> {
    if (this.beating) return;
    if (this.running.size === 0) {
      this.lastHeartbeatOk = Date.now();
      return;
    }
    this.beating = true;
    const entries = [...this.running.values()].filter((e) => !e.settling && !e.completed);
    const leases = entries.map((e) => ({ id: e.job.id, attempt: e.attempt.attempt, progress: e.progress }));
    try {
      const held = new Map((await heartbeat(this.db, this.id, leases, this.leaseMs)).map((h) => [h.id, h]));
      this.lastHeartbeatOk = Date.now();
      for (const [i, entry] of entries.entries()) {
        if (entry.progress === leases[i]!.progress) entry.progress = undefined;
        const h = held.get(entry.job.id);
        if (!h) this.abort(entry, 'lease-lost');
        else if (h.cancel_requested) this.abort(entry, 'canceled');
      }
    } catch (err) {
      this.log.warn({ err }, 'jobs: lease heartbeat failed');
      // Past the lease, another worker may already run these jobs: stop ours rather than race it.
      if (Date.now() - this.lastHeartbeatOk > this.leaseMs) for (const entry of entries) this.abort(entry, 'lease-lost');
    } finally {
      this.beating = false;
    }
  }
}
