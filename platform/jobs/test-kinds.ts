// Job kinds for tests that drive real `aegis worker` processes, registered only with
// AEGIS_TEST_JOB_KINDS=1. `test.sleep` stands in for a long scan: it sleeps, reports progress, stops
// when aborted, and can append a line to a file when it finishes so a test can count completions.
import { appendFile } from 'node:fs/promises';
import { registerJobKind } from './registry.ts';
import { PermanentJobError, type JobKindDefinition } from './types.ts';

export interface SleepPayload {
  /** How long to sleep (ms). */
  ms: number;
  /** File that gets `<job id> <pid>` appended when the sleep finishes. */
  record?: string;
  /** Fail (and so be retried) on attempts up to this one. */
  fail_until_attempt?: number;
}

export interface SleepResult {
  pid: number;
  worker: string;
}

const STEP_MS = 50;

const sleep: JobKindDefinition<SleepPayload, SleepResult> = {
  concurrency: 16,
  backoff: { baseMs: 100, maxMs: 1_000 },
  async run(job, ctx) {
    const { ms, record, fail_until_attempt: failUntil } = job.payload;
    if (typeof ms !== 'number' || ms < 0) throw new PermanentJobError('payload.ms must be a non-negative number');
    if (failUntil !== undefined && job.attempts <= failUntil) throw new Error(`failing attempt ${job.attempts} on purpose`);
    const started = Date.now();
    while (Date.now() - started < ms) {
      ctx.signal.throwIfAborted();
      await new Promise((resolve) => setTimeout(resolve, Math.min(STEP_MS, ms - (Date.now() - started))));
      ctx.progress((Date.now() - started) / ms);
    }
    ctx.signal.throwIfAborted();
    if (record) await appendFile(record, `${job.id} ${process.pid}\n`);
    return { pid: process.pid, worker: ctx.workerId };
  },
};

/** Idempotent: every server a test process starts calls it. */
export function registerTestJobKinds(): void {
  registerJobKind('test.sleep', sleep);
}
