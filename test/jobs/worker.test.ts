// Workers on a real database: running handlers, concurrency per kind and across workers, retries,
// cancellation of running jobs, lost leases and fenced completion, graceful stop.
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../platform/db/database.ts';
import { claimJobs } from '../../platform/jobs/claim.ts';
import { cancelJob, enqueue, enqueueMany, getJob } from '../../platform/jobs/queue.ts';
import { JobAbortedError, PermanentJobError, type JobHandlers, type JobKindDefinition } from '../../platform/jobs/types.ts';
import { Worker, type WorkerOptions } from '../../platform/jobs/worker.ts';
import { captureLog, gate, onPostgres, openJobsDatabase, sleep, until, type CapturedLog, type JobsDatabase } from './support.ts';

let t: JobsDatabase;
let db: Db;
const workers: Worker[] = [];
beforeAll(async () => {
  t = await openJobsDatabase();
  db = t.db;
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop(1_000)));
});
afterAll(() => t.close());

let kindCounter = 0;
const freshKind = () => `w${++kindCounter}`;

function startWorker(handlers: JobHandlers, options: Partial<WorkerOptions> = {}, captured: CapturedLog = captureLog()): Worker {
  const worker = new Worker({ db, log: captured.log, handlers, pollMinMs: 10, pollMaxMs: 100, reclaimEveryMs: 50, ...options }).start();
  workers.push(worker);
  return worker;
}

const stateOf = async (id: string) => (await getJob(db, id))?.state;
const settled = (id: string, state: string, timeoutMs = 10_000) => until(async () => ((await stateOf(id)) === state ? true : undefined), timeoutMs);

/** Counts how many handlers run at once. */
function concurrencyProbe(ms: number) {
  const probe = { now: 0, max: 0 };
  const run = async () => {
    probe.now += 1;
    probe.max = Math.max(probe.max, probe.now);
    await sleep(ms);
    probe.now -= 1;
    return null;
  };
  return { probe, run };
}

describe('running jobs', () => {
  it('runs a handler with the payload, stores its progress and result', async () => {
    const kind = freshKind();
    const progressSeen = gate();
    const finish = gate();
    startWorker(
      {
        [kind]: {
          async run(job, ctx) {
            ctx.progress(0.4);
            progressSeen.open();
            await finish.promise;
            return { echoed: job.payload, worker: ctx.workerId };
          },
        },
      },
      { heartbeatMs: 20 },
    );
    const { job } = await enqueue(db, { kind, payload: { n: 7 } });
    await progressSeen.promise;
    await until(async () => (await getJob(db, job.id))?.progress === 0.4 || undefined);
    finish.open();
    await settled(job.id, 'completed');
    const done = (await getJob(db, job.id))!;
    expect(done.result).toEqual({ echoed: { n: 7 }, worker: done.lease_owner });
    expect(done.progress).toBe(1);
  });

  it('runs at most `concurrency` jobs of a kind at once in one worker', async () => {
    const kind = freshKind();
    const { probe, run } = concurrencyProbe(60);
    startWorker({ [kind]: { concurrency: 2, run } }, { concurrency: 10 });
    const jobs = await enqueueMany(db, Array.from({ length: 6 }, () => ({ kind })));
    for (const job of jobs) await settled(job.id, 'completed');
    expect(probe.max).toBe(2);
  });

  it("runs at most the worker's total concurrency across kinds", async () => {
    const [a, b] = [freshKind(), freshKind()];
    const { probe, run } = concurrencyProbe(60);
    startWorker({ [a]: { concurrency: 5, run }, [b]: { concurrency: 5, run } }, { concurrency: 3 });
    const jobs = await enqueueMany(db, Array.from({ length: 8 }, (_, i) => ({ kind: i % 2 ? a : b })));
    for (const job of jobs) await settled(job.id, 'completed');
    expect(probe.max).toBe(3);
  });

  it('a global cap holds across workers', async () => {
    const kind = freshKind();
    const { probe, run } = concurrencyProbe(80);
    const definition: JobKindDefinition = { concurrency: 3, globalConcurrency: 2, run };
    // Separate pools on PostgreSQL, so the workers really claim concurrently.
    const other = onPostgres() ? (await t.openAnother()).db : db;
    startWorker({ [kind]: definition });
    const second = new Worker({ db: other, log: captureLog().log, handlers: { [kind]: definition }, pollMinMs: 10, pollMaxMs: 100 }).start();
    workers.push(second);
    const jobs = await enqueueMany(db, Array.from({ length: 8 }, () => ({ kind })));
    for (const job of jobs) await settled(job.id, 'completed');
    expect(probe.max).toBe(2);
  });

  it('retries a failing handler with backoff until it succeeds', async () => {
    const kind = freshKind();
    const captured = captureLog();
    startWorker(
      {
        [kind]: {
          backoff: { baseMs: 20, maxMs: 50 },
          async run(job) {
            if (job.attempts < 3) throw new Error(`flaky ${job.attempts}`);
            return 'third time lucky';
          },
        },
      },
      {},
      captured,
    );
    const { job } = await enqueue(db, { kind });
    await settled(job.id, 'completed');
    expect(await getJob(db, job.id)).toMatchObject({ attempts: 3, result: 'third time lucky', last_error: 'Error: flaky 2' });
    expect(captured.messages().filter((m) => m === 'jobs: failed; will retry')).toHaveLength(2);
  });

  it('a job whose every attempt fails ends dead; a permanent error ends it failed after one attempt', async () => {
    const kind = freshKind();
    const captured = captureLog();
    startWorker(
      {
        [kind]: {
          backoff: { baseMs: 10, maxMs: 20 },
          async run(job) {
            if (job.payload.permanent) throw new PermanentJobError('target refused');
            throw new Error('boom');
          },
        },
      },
      {},
      captured,
    );
    const dead = (await enqueue(db, { kind, maxAttempts: 3 })).job;
    const failed = (await enqueue(db, { kind, payload: { permanent: true } })).job;
    await settled(dead.id, 'dead');
    await settled(failed.id, 'failed');
    expect(await getJob(db, dead.id)).toMatchObject({ attempts: 3, last_error: 'Error: boom' });
    expect(await getJob(db, failed.id)).toMatchObject({ attempts: 1, last_error: 'PermanentJobError: target refused' });
    expect(captured.messages()).toContain('jobs: failed; job is dead');
  });

  it('a handler that completes through ctx.completeWith writes its results and the completion in one transaction', async () => {
    const kind = freshKind();
    const followUpKind = freshKind();
    startWorker({
      [kind]: {
        async run(job, ctx) {
          return ctx.completeWith(async (trx) => {
            await enqueue(trx, { kind: followUpKind, dedupeKey: `after:${job.id}` });
            return { stored: true };
          });
        },
      },
    });
    const { job } = await enqueue(db, { kind });
    await settled(job.id, 'completed');
    expect((await getJob(db, job.id))!.result).toEqual({ stored: true });
    expect(await db.selectFrom('jobs').select('kind').where('dedupe_key', '=', `after:${job.id}`).executeTakeFirst()).toEqual({ kind: followUpKind });
  });
});

describe('cancel', () => {
  const waitingForAbort = (started: { open(): void }, ended: { open(value: { reason: unknown; at: number }): void }) => ({
    async run(_job: unknown, ctx: { signal: AbortSignal }) {
      started.open();
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      ended.open({ reason: ctx.signal.reason, at: Date.now() });
      throw ctx.signal.reason;
    },
  });

  it('canceling a running job aborts its handler (same process: at once) and marks it canceled', async () => {
    const kind = freshKind();
    const started = gate();
    const ended = gate<{ reason: unknown; at: number }>();
    startWorker({ [kind]: waitingForAbort(started, ended) });
    const { job } = await enqueue(db, { kind });
    await started.promise;
    const canceledAt = Date.now();
    expect((await cancelJob(db, job.id)).outcome).toBe('cancel_requested');
    const { reason, at } = await ended.promise;
    expect(reason).toBeInstanceOf(JobAbortedError);
    expect((reason as JobAbortedError).reason).toBe('canceled');
    expect(at - canceledAt).toBeLessThan(2_000);
    await settled(job.id, 'canceled');
  });

  it('a cancel the worker does not hear about (another process, no notification) is seen by the lease heartbeat within 2 s', async () => {
    const kind = freshKind();
    const started = gate();
    const ended = gate<{ reason: unknown; at: number }>();
    // The default heartbeat (500 ms), as `aegis worker` runs it.
    startWorker({ [kind]: waitingForAbort(started, ended) }, { heartbeatMs: undefined });
    const { job } = await enqueue(db, { kind });
    await started.promise;
    const canceledAt = Date.now();
    await db.updateTable('jobs').set({ cancel_requested: true }).where('id', '=', job.id).execute();
    const { at } = await ended.promise;
    expect(at - canceledAt).toBeLessThan(2_000);
    await settled(job.id, 'canceled');
  });
});

describe('leases', () => {
  it("a crashed worker's job is reclaimed after its lease expires and completed by another worker", async () => {
    const kind = freshKind();
    const { job } = await enqueue(db, { kind });
    // The crashed worker: it claimed the job and then never renewed the lease.
    await claimJobs(db, 'crashed-worker', [{ kind, limit: 1 }], 200);
    const captured = captureLog();
    startWorker({ [kind]: { run: async (_job, ctx) => ({ by: ctx.workerId }) } }, {}, captured);
    await settled(job.id, 'completed');
    const done = (await getJob(db, job.id))!;
    expect(done).toMatchObject({ attempts: 2, result: { by: done.lease_owner } });
    expect(done.lease_owner).not.toBe('crashed-worker');
    expect(captured.messages()).toContain('jobs: lease expired; job queued again');
  });

  it('a handler finishing after its job was taken over has its completion refused and logged', async () => {
    const kind = freshKind();
    const started = gate();
    const release = gate();
    const captured = captureLog();
    // A heartbeat too slow to notice the takeover first: the refusal is the completion's own fence.
    startWorker(
      {
        [kind]: {
          async run() {
            started.open();
            await release.promise;
            return 'stale result';
          },
        },
      },
      { heartbeatMs: 60_000 },
      captured,
    );
    const { job } = await enqueue(db, { kind });
    await started.promise;
    // What reclaiming and claiming elsewhere amounts to: another owner, the next attempt.
    await db.updateTable('jobs').set({ lease_owner: 'other-worker', attempts: sql<number>`attempts + 1` }).where('id', '=', job.id).execute();
    release.open();
    await until(() => captured.messages().includes('jobs: completion refused: this attempt no longer holds the lease (the job was reclaimed); result discarded') || undefined);
    expect(await getJob(db, job.id)).toMatchObject({ state: 'running', lease_owner: 'other-worker', result: null });
  });

  it('the heartbeat notices a lost lease and aborts the handler; ctx.completeWith refuses to write', async () => {
    const kind = freshKind();
    const started = gate();
    const aborted = gate<unknown>();
    const captured = captureLog();
    let wrote = false;
    startWorker(
      {
        [kind]: {
          async run(_job, ctx) {
            started.open();
            await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
            aborted.open(ctx.signal.reason);
            // A handler that ignores the abort and tries to store its results anyway.
            return ctx.completeWith(async () => {
              wrote = true;
              return 'stale';
            });
          },
        },
      },
      { heartbeatMs: 20 },
      captured,
    );
    const { job } = await enqueue(db, { kind });
    await started.promise;
    await db.updateTable('jobs').set({ lease_owner: 'other-worker', attempts: sql<number>`attempts + 1` }).where('id', '=', job.id).execute();
    expect(((await aborted.promise) as JobAbortedError).reason).toBe('lease-lost');
    await until(() => captured.messages().includes('jobs: lease lost to another worker; this attempt is abandoned and its outcome discarded') || undefined);
    expect(wrote).toBe(false);
    expect(await getJob(db, job.id)).toMatchObject({ state: 'running', lease_owner: 'other-worker' });
  });
});

describe('stop', () => {
  it('waits for running handlers, then aborts the rest and hands their jobs back uncounted', async () => {
    const [quick, stubborn] = [freshKind(), freshKind()];
    const startedQuick = gate();
    const startedStubborn = gate();
    const worker = startWorker({
      [quick]: {
        async run() {
          startedQuick.open();
          await sleep(100);
          return 'done';
        },
      },
      [stubborn]: {
        async run() {
          startedStubborn.open();
          // Ignores its signal entirely.
          await sleep(5_000);
          return 'too late';
        },
      },
    });
    const a = (await enqueue(db, { kind: quick })).job;
    const b = (await enqueue(db, { kind: stubborn })).job;
    await Promise.all([startedQuick.promise, startedStubborn.promise]);
    await worker.stop(300);
    expect(await getJob(db, a.id)).toMatchObject({ state: 'completed', result: 'done' });
    expect(await getJob(db, b.id)).toMatchObject({ state: 'queued', attempts: 0, lease_owner: null });
    expect(worker.active).toBe(1); // still running, abandoned; its completion will be refused
  });

  it('a handler that honours the abort hands its own job back', async () => {
    const kind = freshKind();
    const started = gate();
    const worker = startWorker({
      [kind]: {
        async run(_job, ctx) {
          started.open();
          await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
          throw ctx.signal.reason;
        },
      },
    });
    const { job } = await enqueue(db, { kind });
    await started.promise;
    await worker.stop(50);
    expect(await getJob(db, job.id)).toMatchObject({ state: 'queued', attempts: 0 });
    expect(worker.active).toBe(0);
  });
});
