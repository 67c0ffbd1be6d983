// Settings of the job workers and the scheduler, from the environment (flags of `aegis worker` go
// over them). Kept apart from ServerConfig: `aegis worker` runs no API, and the server only needs
// to know whether to run them in-process.

export interface JobsConfig {
  /** `aegis serve` runs a worker and the scheduler in its own process (AEGIS_WORKER, default true). */
  inProcess: boolean;
  /** Run the scheduler beside the worker (AEGIS_SCHEDULER, default true). */
  scheduler: boolean;
  /** Handlers running at once per worker, all kinds together (AEGIS_WORKER_CONCURRENCY, default 4). */
  concurrency: number;
  /** Only these kinds (AEGIS_WORKER_KINDS, comma-separated; default every registered kind). */
  kinds: string[] | undefined;
  /** Lease length (AEGIS_JOB_LEASE_MS, default 30 000): how long a dead worker's jobs wait before another takes them. */
  leaseMs: number;
  /** Longest idle wait between polls (AEGIS_JOB_POLL_MS, default 1 000). */
  pollMaxMs: number;
  /** Scheduler tick (AEGIS_SCHEDULER_TICK_MS, default 1 000). */
  schedulerTickMs: number;
  /** How long a stopping worker waits for running handlers before handing their jobs back (AEGIS_WORKER_STOP_TIMEOUT_MS, default 10 000). */
  stopTimeoutMs: number;
  /** Registers the test-only kinds of ./test-kinds.ts (AEGIS_TEST_JOB_KINDS=1). Never in production. */
  testKinds: boolean;
}

function flag(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new Error(`${name} must be true or false, got "${value}"`);
}

function integer(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer of at least ${min}, got "${value}"`);
  return n;
}

export function parseKinds(value: string | undefined): string[] | undefined {
  const kinds = (value ?? '').split(',').map((k) => k.trim()).filter(Boolean);
  return kinds.length > 0 ? kinds : undefined;
}

export interface JobsFlags {
  concurrency?: string | undefined;
  kinds?: string | undefined;
}

export function loadJobsConfig(env: NodeJS.ProcessEnv = process.env, flags: JobsFlags = {}): JobsConfig {
  return {
    inProcess: flag('AEGIS_WORKER', env.AEGIS_WORKER, true),
    scheduler: flag('AEGIS_SCHEDULER', env.AEGIS_SCHEDULER, true),
    concurrency: integer('--concurrency', flags.concurrency ?? env.AEGIS_WORKER_CONCURRENCY, 4, 1),
    kinds: parseKinds(flags.kinds ?? env.AEGIS_WORKER_KINDS),
    leaseMs: integer('AEGIS_JOB_LEASE_MS', env.AEGIS_JOB_LEASE_MS, 30_000, 100),
    pollMaxMs: integer('AEGIS_JOB_POLL_MS', env.AEGIS_JOB_POLL_MS, 1_000, 10),
    schedulerTickMs: integer('AEGIS_SCHEDULER_TICK_MS', env.AEGIS_SCHEDULER_TICK_MS, 1_000, 10),
    stopTimeoutMs: integer('AEGIS_WORKER_STOP_TIMEOUT_MS', env.AEGIS_WORKER_STOP_TIMEOUT_MS, 10_000, 0),
    testKinds: flag('AEGIS_TEST_JOB_KINDS', env.AEGIS_TEST_JOB_KINDS, false),
  };
}
