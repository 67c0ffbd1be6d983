// The queue's statements on a real database: enqueue, claim, leases, fenced completion, retries
// with backoff, dead jobs, cancellation, dedupe keys and the per-kind cap across workers.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../platform/db/database.ts';
import {
  backoffMs,
  claimJobs,
  completeJob,
  failJob,
  heartbeat,
  markCanceled,
  reclaimExpired,
  releaseJobs,
  type Attempt,
} from '../../platform/jobs/claim.ts';
import { cancelJob, enqueue, enqueueMany, getJob, listDeadJobs, retryDeadJob } from '../../platform/jobs/queue.ts';
import type { JobRow } from '../../platform/jobs/types.ts';
import { onPostgres, openJobsDatabase, sleep, type JobsDatabase } from './support.ts';

let t: JobsDatabase;
let db: Db;
beforeAll(async () => {
  t = await openJobsDatabase();
  db = t.db;
});
afterAll(() => t.close());

let kindCounter = 0;
/** A kind no other test uses, so tests never claim each other's jobs. */
const freshKind = () => `k${++kindCounter}`;
const attemptOf = (job: JobRow, owner: string): Attempt => ({ id: job.id, owner, attempt: job.attempts });
const dbNow = async () => (await sql<{ now: Date }>`select now() as now`.execute(db)).rows[0]!.now;
const claimOne = async (kind: string, owner: string, leaseMs = 30_000) => (await claimJobs(db, owner, [{ kind, limit: 1 }], leaseMs))[0];

describe('enqueue and claim', () => {
  it('a job goes queued → running → completed; the claim sets the lease and counts the attempt', async () => {
    const kind = freshKind();
    const { job, created } = await enqueue(db, { kind, payload: { target: 'x' } });
    expect(created).toBe(true);
    expect(job).toMatchObject({ id: expect.stringMatching(/^job_/), kind, state: 'queued', attempts: 0, max_attempts: 5, priority: 0, payload: { target: 'x' }, progress: 0, cancel_requested: false, result: null });

    const before = await dbNow();
    const claimed = await claimOne(kind, 'worker-a');
    expect(claimed).toMatchObject({ id: job.id, state: 'running', attempts: 1, lease_owner: 'worker-a' });
    expect(claimed!.lease_expires_at!.getTime()).toBeGreaterThanOrEqual(before.getTime() + 29_000);
    expect(claimed!.started_at).toBeInstanceOf(Date);
    expect(await claimOne(kind, 'worker-b')).toBeUndefined();

    expect(await completeJob(db, attemptOf(claimed!, 'worker-a'), { findings: 3 })).toBe(true);
    const done = await getJob(db, job.id);
    expect(done).toMatchObject({ state: 'completed', result: { findings: 3 }, progress: 1, lease_expires_at: null, lease_owner: 'worker-a' });
    expect(done!.finished_at).toBeInstanceOf(Date);
  });

  it('claims due jobs only, highest priority first, at most the limit per kind', async () => {
    const kind = freshKind();
    const low = (await enqueue(db, { kind, priority: 0 })).job;
    const high = (await enqueue(db, { kind, priority: 10 })).job;
    await enqueue(db, { kind, runAt: new Date(Date.now() + 3_600_000) });
    expect((await claimOne(kind, 'w'))!.id).toBe(high.id);
    const rest = await claimJobs(db, 'w', [{ kind, limit: 10 }], 30_000);
    expect(rest.map((j) => j.id)).toEqual([low.id]);
  });

  it('one statement claims several kinds, each within its own limit', async () => {
    const a = freshKind();
    const b = freshKind();
    await enqueueMany(db, [...Array.from({ length: 5 }, () => ({ kind: a })), ...Array.from({ length: 5 }, () => ({ kind: b }))]);
    const claimed = await claimJobs(db, 'w', [{ kind: a, limit: 2 }, { kind: b, limit: 3 }], 30_000);
    expect(claimed.filter((j) => j.kind === a)).toHaveLength(2);
    expect(claimed.filter((j) => j.kind === b)).toHaveLength(3);
  });

  it('a total caps the kinds together: every kind is looked at, and the oldest due jobs win whatever their kind', async () => {
    const a = freshKind();
    const b = freshKind();
    const c = freshKind();
    const past = (s: number) => new Date(Date.now() - s * 1000);
    const oldC = (await enqueue(db, { kind: c, runAt: past(30) })).job;
    const oldA = (await enqueue(db, { kind: a, runAt: past(20) })).job;
    await enqueueMany(db, Array.from({ length: 4 }, () => ({ kind: b, runAt: past(10) })));
    await enqueue(db, { kind: a, runAt: past(5) });
    // Four places; each kind alone could fill them.
    const claimed = await claimJobs(db, 'w', [{ kind: a, limit: 4 }, { kind: b, limit: 4 }, { kind: c, limit: 4 }], 30_000, 4);
    expect(claimed).toHaveLength(4);
    expect(claimed.map((j) => j.id)).toEqual(expect.arrayContaining([oldC.id, oldA.id]));
    expect(claimed.filter((j) => j.kind === b)).toHaveLength(2);
    // What was looked at but not taken is still queued.
    const rest = await claimJobs(db, 'w', [{ kind: a, limit: 4 }, { kind: b, limit: 4 }, { kind: c, limit: 4 }], 30_000);
    expect(rest.filter((j) => j.kind === a)).toHaveLength(1);
    expect(rest.filter((j) => j.kind === b)).toHaveLength(2);
    expect(await claimJobs(db, 'w', [{ kind: a, limit: 1 }], 30_000, 0)).toEqual([]);
  });

  it('a dedupe key names one job forever: enqueueing it again returns that job', async () => {
    const kind = freshKind();
    const first = await enqueue(db, { kind, dedupeKey: `dedupe:${kind}`, payload: { n: 1 } });
    const second = await enqueue(db, { kind, dedupeKey: `dedupe:${kind}`, payload: { n: 2 } });
    expect(second).toEqual({ job: first.job, created: false });
    // Still true once the job has finished: a schedule's run must not come back after it completed.
    const claimed = await claimOne(kind, 'w');
    await completeJob(db, attemptOf(claimed!, 'w'), null);
    expect((await enqueue(db, { kind, dedupeKey: `dedupe:${kind}` })).created).toBe(false);
    const batch = await enqueueMany(db, [{ kind, dedupeKey: `dedupe:${kind}` }, { kind, dedupeKey: `other:${kind}` }, { kind, dedupeKey: `other:${kind}` }]);
    expect(batch.map((j) => j.dedupe_key)).toEqual([`other:${kind}`]);
  });

  it('enqueueMany inserts thousands in a few statements', async () => {
    const kind = freshKind();
    const created = await enqueueMany(db, Array.from({ length: 2_500 }, (_, i) => ({ kind, payload: { i } })));
    expect(created).toHaveLength(2_500);
    expect(new Set(created.map((j) => j.id)).size).toBe(2_500);
  });
});

describe('leases', () => {
  it('the heartbeat extends the lease, stores progress and reports a cancel request', async () => {
    const kind = freshKind();
    const { job } = await enqueue(db, { kind });
    const claimed = (await claimOne(kind, 'w', 1_000))!;
    const beat = await heartbeat(db, 'w', [{ id: job.id, attempt: 1, progress: 0.25 }], 60_000);
    expect(beat).toEqual([{ id: job.id, cancel_requested: false }]);
    const row = (await getJob(db, job.id))!;
    expect(row.progress).toBe(0.25);
    expect(row.lease_expires_at!.getTime()).toBeGreaterThan(claimed.lease_expires_at!.getTime() + 50_000);
    await cancelJob(db, job.id);
    expect(await heartbeat(db, 'w', [{ id: job.id, attempt: 1 }], 60_000)).toEqual([{ id: job.id, cancel_requested: true }]);
    // Another owner holds nothing.
    expect(await heartbeat(db, 'someone-else', [{ id: job.id, attempt: 1 }], 60_000)).toEqual([]);
  });

  it('an expired lease is reclaimed: the job runs again elsewhere and the stale attempt can no longer complete it', async () => {
    const kind = freshKind();
    const { job } = await enqueue(db, { kind });
    const first = (await claimOne(kind, 'crashed', 100))!;
    await sleep(250);
    const reclaimed = await reclaimExpired(db);
    expect(reclaimed).toContainEqual({ id: job.id, kind, state: 'queued', previous_owner: 'crashed' });
    expect(await getJob(db, job.id)).toMatchObject({ state: 'queued', attempts: 1, lease_owner: null, last_error: expect.stringContaining('lease expired: worker crashed') });

    const second = (await claimOne(kind, 'healthy'))!;
    expect(second.attempts).toBe(2);
    // The crashed worker comes back to life: none of its writes land.
    expect(await heartbeat(db, 'crashed', [{ id: job.id, attempt: 1 }], 30_000)).toEqual([]);
    expect(await completeJob(db, attemptOf(first, 'crashed'), 'stale')).toBe(false);
    expect(await failJob(db, attemptOf(first, 'crashed'), { error: 'stale', retryInMs: 0 })).toBeUndefined();
    expect(await markCanceled(db, attemptOf(first, 'crashed'))).toBe(false);
    expect(await completeJob(db, attemptOf(second, 'healthy'), 'fresh')).toBe(true);
    expect(await getJob(db, job.id)).toMatchObject({ state: 'completed', result: 'fresh', lease_owner: 'healthy', attempts: 2 });
  });

  it('the same worker re-claiming its own lost job is a different attempt: the first attempt is still fenced off', async () => {
    const kind = freshKind();
    await enqueue(db, { kind });
    const first = (await claimOne(kind, 'w', 50))!;
    await sleep(150);
    await reclaimExpired(db);
    const second = (await claimOne(kind, 'w'))!;
    expect(await completeJob(db, attemptOf(first, 'w'), 'first')).toBe(false);
    expect(await completeJob(db, attemptOf(second, 'w'), 'second')).toBe(true);
  });

  it('an expired lease on the last attempt makes the job dead; with a cancel pending, canceled', async () => {
    const kind = freshKind();
    const dying = (await enqueue(db, { kind, maxAttempts: 1 })).job;
    await claimOne(kind, 'crashed', 50);
    const canceling = (await enqueue(db, { kind })).job;
    await claimOne(kind, 'crashed', 50);
    await cancelJob(db, canceling.id);
    await sleep(150);
    await reclaimExpired(db);
    expect(await getJob(db, dying.id)).toMatchObject({ state: 'dead', lease_owner: 'crashed' });
    expect((await getJob(db, dying.id))!.finished_at).toBeInstanceOf(Date);
    expect(await getJob(db, canceling.id)).toMatchObject({ state: 'canceled' });
  });

  it('releasing on shutdown queues the job again without counting the attempt', async () => {
    const kind = freshKind();
    const { job } = await enqueue(db, { kind });
    await claimOne(kind, 'w');
    expect(await releaseJobs(db, 'w', [{ id: job.id, attempt: 1 }])).toBe(1);
    expect(await getJob(db, job.id)).toMatchObject({ state: 'queued', attempts: 0, lease_owner: null, lease_expires_at: null });
  });
});

describe('retries and dead jobs', () => {
  it('backoff doubles per attempt with jitter between half and all of it, up to the cap', () => {
    for (const [attempt, full] of [[1, 1_000], [2, 2_000], [3, 4_000], [10, 300_000], [40, 300_000]] as const) {
      expect(backoffMs(attempt, { random: () => 0 })).toBe(full / 2);
      expect(backoffMs(attempt, { random: () => 0.999999 })).toBe(full);
    }
    expect(backoffMs(3, { baseMs: 10, maxMs: 25, random: () => 1 })).toBe(25);
  });

  it('a failed attempt waits out its backoff; the last one makes the job dead, kept for inspection and retry', async () => {
    const kind = freshKind();
    const { job } = await enqueue(db, { kind, maxAttempts: 3 });
    for (let attempt = 1; attempt <= 3; attempt++) {
      const claimed = (await claimOne(kind, 'w'))!;
      expect(claimed.attempts).toBe(attempt);
      const before = await dbNow();
      const retryInMs = backoffMs(attempt, { baseMs: 60_000 });
      const ended = (await failJob(db, attemptOf(claimed, 'w'), { error: `Error: boom ${attempt}`, retryInMs }))!;
      if (attempt < 3) {
        expect(ended.state).toBe('queued');
        expect(ended.run_at.getTime() - before.getTime()).toBeGreaterThanOrEqual(retryInMs - 1_000);
        // Not due yet: nobody gets it before the backoff has passed.
        expect(await claimOne(kind, 'w')).toBeUndefined();
        await db.updateTable('jobs').set({ run_at: sql<Date>`now()` }).where('id', '=', job.id).execute();
      } else {
        expect(ended.state).toBe('dead');
      }
    }
    const dead = (await getJob(db, job.id))!;
    expect(dead).toMatchObject({ state: 'dead', attempts: 3, last_error: 'Error: boom 3' });
    expect(dead.finished_at).toBeInstanceOf(Date);
    expect((await listDeadJobs(db, { kind })).map((j) => j.id)).toEqual([job.id]);

    const retried = await retryDeadJob(db, job.id);
    expect(retried).toMatchObject({ state: 'queued', attempts: 0, finished_at: null, last_error: 'Error: boom 3' });
    expect(await retryDeadJob(db, job.id)).toBeUndefined();
    const again = (await claimOne(kind, 'w'))!;
    expect(await completeJob(db, attemptOf(again, 'w'), 'ok')).toBe(true);
    expect(await listDeadJobs(db, { kind })).toEqual([]);
  });

  it('a permanent failure ends the job as failed at once; a failure after a cancel request ends it canceled', async () => {
    const kind = freshKind();
    const bad = (await enqueue(db, { kind })).job;
    const claimed = (await claimOne(kind, 'w'))!;
    expect(await failJob(db, attemptOf(claimed, 'w'), { error: 'PermanentJobError: no such target', permanent: true, retryInMs: 0 })).toMatchObject({ state: 'failed' });
    expect(await getJob(db, bad.id)).toMatchObject({ state: 'failed', attempts: 1 });

    const canceled = (await enqueue(db, { kind })).job;
    const running = (await claimOne(kind, 'w'))!;
    await cancelJob(db, canceled.id);
    expect(await failJob(db, attemptOf(running, 'w'), { error: 'AbortError', retryInMs: 0 })).toMatchObject({ state: 'canceled' });
  });
});

describe('cancel', () => {
  it('a queued job is canceled at once and never runs; a running one gets a cancel request; a finished one is left alone', async () => {
    const kind = freshKind();
    const queued = (await enqueue(db, { kind })).job;
    const result = await cancelJob(db, queued.id);
    expect(result.outcome).toBe('canceled');
    expect(result.job).toMatchObject({ state: 'canceled', cancel_requested: true });
    expect(result.job!.finished_at).toBeInstanceOf(Date);
    expect(await claimOne(kind, 'w')).toBeUndefined();

    const running = (await enqueue(db, { kind })).job;
    const claimed = (await claimOne(kind, 'w'))!;
    const requested = await cancelJob(db, running.id);
    expect(requested.outcome).toBe('cancel_requested');
    expect(requested.job).toMatchObject({ state: 'running', cancel_requested: true });
    expect(await markCanceled(db, attemptOf(claimed, 'w'))).toBe(true);
    expect((await cancelJob(db, running.id)).outcome).toBe('finished');
    expect((await cancelJob(db, 'job_missing')).outcome).toBe('not_found');
  });

  it('cancel is scoped to an organisation when one is given', async () => {
    const kind = freshKind();
    const { job } = await enqueue(db, { kind });
    expect((await cancelJob(db, job.id, 'org_other')).outcome).toBe('not_found');
    expect(await getJob(db, job.id, 'org_other')).toBeUndefined();
  });
});

describe('per-kind cap across workers', () => {
  it('globalLimit counts running jobs of the kind whoever runs them', async () => {
    const kind = freshKind();
    await enqueueMany(db, Array.from({ length: 5 }, () => ({ kind })));
    const a = await claimJobs(db, 'a', [{ kind, limit: 5, globalLimit: 2 }], 30_000);
    expect(a).toHaveLength(2);
    expect(await claimJobs(db, 'b', [{ kind, limit: 5, globalLimit: 2 }], 30_000)).toEqual([]);
    await completeJob(db, attemptOf(a[0]!, 'a'), null);
    expect(await claimJobs(db, 'b', [{ kind, limit: 5, globalLimit: 2 }], 30_000)).toHaveLength(1);
  });

  it.skipIf(!onPostgres())('holds under concurrent claims from separate connection pools', async () => {
    const kind = freshKind();
    await enqueueMany(db, Array.from({ length: 40 }, () => ({ kind })));
    const pools = [db, (await t.openAnother()).db, (await t.openAnother()).db];
    const claims = await Promise.all(
      Array.from({ length: 30 }, (_, i) => claimJobs(pools[i % pools.length]!, `w${i}`, [{ kind, limit: 2, globalLimit: 3 }], 30_000)),
    );
    expect(claims.flat()).toHaveLength(3);
    const running = await db.selectFrom('jobs').select((eb) => eb.fn.countAll<number>().as('n')).where('kind', '=', kind).where('state', '=', 'running').executeTakeFirstOrThrow();
    expect(Number(running.n)).toBe(3);
  });

  it.skipIf(!onPostgres())('concurrent claimers never get the same job (SKIP LOCKED)', async () => {
    const kind = freshKind();
    await enqueueMany(db, Array.from({ length: 200 }, () => ({ kind })));
    const pools = [db, (await t.openAnother()).db, (await t.openAnother()).db];
    const claims = await Promise.all(Array.from({ length: 40 }, (_, i) => claimJobs(pools[i % pools.length]!, `w${i}`, [{ kind, limit: 7 }], 30_000)));
    const ids = claims.flat().map((j) => j.id);
    expect(ids).toHaveLength(200);
    expect(new Set(ids).size).toBe(200);
  });
});
