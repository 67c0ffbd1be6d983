// The job system as the rest of the code uses it: startJobs runs a worker and the scheduler for a
// process (`aegis serve` in-process, `aegis worker` standalone); the queue functions enqueue, read
// and cancel jobs; registerJobKind / registerJobKindFactory add a kind.
//
// A worker runs the kinds registered before startJobs (registry.ts) plus the `handlers` the process
// passes. api/server.ts and cli/worker.ts pass the same ones (the scans module's `scan` kind and its
// schedule runner), so `aegis serve` and `aegis worker` run the same work.
import type { Db } from '../db/database.ts';
import { loadJobsConfig, type JobsConfig } from './config.ts';
import { buildJobHandlers } from './registry.ts';
import { Scheduler, type ScheduleRunner } from './scheduler.ts';
import { JobNotifications } from './signals.ts';
import { registerTestJobKinds } from './test-kinds.ts';
import type { JobHandlers, JobLogger } from './types.ts';
import { Worker, type WorkerOptions } from './worker.ts';

export { cancelJob, enqueue, enqueueMany, getJob, listDeadJobs, retryDeadJob, type CancelOutcome, type EnqueueOptions, type Enqueued } from './queue.ts';
export { buildJobHandlers, jobHandlers, registerJobKind, registerJobKindFactory, type JobKindDeps, type JobKindFactory } from './registry.ts';
export { runInThread, type ThreadFunction, type ThreadTask } from './thread-runner.ts';
export {
  enqueueScheduledScan,
  SCAN_JOB_KIND,
  Scheduler,
  scheduleDedupeKey,
  type ScheduledScanPayload,
  type ScheduleRunner,
} from './scheduler.ts';
export { Worker, type WorkerOptions } from './worker.ts';
export { loadJobsConfig, type JobsConfig } from './config.ts';
export * from './types.ts';

export interface StartJobsOptions {
  db: Db;
  log: JobLogger;
  /** The PostgreSQL server, when there is one: workers then also hear other processes' enqueues and cancels. */
  databaseUrl?: string | undefined;
  /** Default: from the environment (./config.ts). */
  config?: JobsConfig | undefined;
  /** Kinds for this process on top of (and over) every registered kind (registry.ts), factories built for this database. */
  handlers?: JobHandlers | undefined;
  /** What a due scan schedule does (default: enqueue a `scan` job carrying the schedule). */
  startScheduledScan?: ScheduleRunner | undefined;
  /** `serve` runs nothing when AEGIS_WORKER=false; `worker` (the `aegis worker` command) always runs. */
  role?: 'serve' | 'worker';
  /** Job-run metrics and traces (platform/metrics). */
  observe?: WorkerOptions['observe'];
  /**
   * Periodic work that runs where the scheduler runs (features register it at start-up: the
   * Shield alert windows closing into events). Each is started with the scheduler and stopped
   * with it; several such processes must be safe for each.
   */
  periodic?: readonly PeriodicWork[];
}

/** Starts a periodic task; what it returns stops it. */
export type PeriodicWork = (context: { db: Db; log: JobLogger }) => { stop(): Promise<void> };

export interface RunningJobs {
  worker: Worker | undefined;
  scheduler: Scheduler | undefined;
  /** Stops the scheduler and the periodic work, then the worker (waiting for running handlers up to the stop timeout). */
  close(): Promise<void>;
}

export async function startJobs(options: StartJobsOptions): Promise<RunningJobs> {
  const config = options.config ?? loadJobsConfig();
  if ((options.role ?? 'serve') === 'serve' && !config.inProcess) {
    return { worker: undefined, scheduler: undefined, close: async () => undefined };
  }
  if (config.testKinds) registerTestJobKinds();
  const notifications = options.databaseUrl ? new JobNotifications(options.databaseUrl, options.log) : undefined;
  const worker = new Worker({
    db: options.db,
    log: options.log,
    handlers: { ...buildJobHandlers({ db: options.db, log: options.log }), ...options.handlers },
    kinds: config.kinds,
    concurrency: config.concurrency,
    leaseMs: config.leaseMs,
    pollMaxMs: config.pollMaxMs,
    observe: options.observe,
  }).start();
  const scheduler = config.scheduler ? new Scheduler({ db: options.db, log: options.log, tickMs: config.schedulerTickMs, runner: options.startScheduledScan }).start() : undefined;
  const periodic = config.scheduler ? (options.periodic ?? []).map((start) => start({ db: options.db, log: options.log })) : [];
  return {
    worker,
    scheduler,
    async close() {
      await scheduler?.stop();
      for (const task of periodic) await task.stop();
      await worker.stop(config.stopTimeoutMs);
      await notifications?.close();
    },
  };
}
