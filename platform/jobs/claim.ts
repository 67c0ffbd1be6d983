// The worker's side of the queue: claiming due jobs, keeping leases alive, and finishing.
//
// A claim sets lease_owner (the worker's id), increments attempts and sets lease_expires_at. The
// pair (lease_owner, attempts) names one attempt: every write that ends an attempt is conditional
// on it and on state = 'running', so an attempt whose lease expired and whose job was run again
// elsewhere can no longer complete it (its completion is refused, and the worker logs that).
//
// Concurrency per kind has two levels. Each worker runs at most `limit` jobs of a kind (its own
// slots). A kind may also have a cap across all workers (`globalLimit`): the claim then counts the
// kind's running jobs in the same statement, and holds a transaction-scoped advisory lock per
// capped kind so that two workers cannot both take the last free place.
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from '../db/database.ts';
import type { JobRow, JobState } from './types.ts';

export interface ClaimRequest {
  kind: string;
  /** Jobs of this kind to claim at most. */
  limit: number;
  /** Jobs of this kind running at once across all workers. */
  globalLimit?: number | undefined;
}

/** Namespace of the two-key advisory locks that serialise claims of capped kinds. */
const CAP_LOCK_CLASS = 712_334_005;

const ms = (value: number): RawBuilder<unknown> => sql`(${value} * interval '1 millisecond')`;

/**
 * Claims due jobs of the requested kinds, highest priority then oldest first, in one statement;
 * `total` caps them all together (default: the sum of the limits). Every kind is looked at on every
 * claim, so a worker with free places never leaves one kind waiting while it serves others: with
 * more jobs due than places, the oldest win, whatever their kind.
 */
export async function claimJobs(db: Db, owner: string, requests: readonly ClaimRequest[], leaseMs: number, total?: number): Promise<JobRow[]> {
  const wanted = requests.filter((r) => r.limit > 0);
  if (wanted.length === 0 || (total !== undefined && total <= 0)) return [];
  const cap = total ?? wanted.reduce((sum, r) => sum + r.limit, 0);
  const capped = wanted.filter((r) => r.globalLimit !== undefined).map((r) => r.kind);
  const kinds = wanted.map((r) => r.kind);
  const limits = wanted.map((r) => r.limit);
  // null = no cap; the CASE below then skips counting.
  const caps = wanted.map((r) => r.globalLimit ?? null);
  const claim = (executor: Db) =>
    sql<JobRow>`
      update jobs set
        state = 'running',
        attempts = jobs.attempts + 1,
        lease_owner = ${owner},
        lease_expires_at = now() + ${ms(leaseMs)},
        started_at = now(),
        progress = 0
      from (
        -- Candidates of each kind (locked; those beyond the total are released at commit untouched).
        select picked.id
        from unnest(${kinds}::text[], ${limits}::int[], ${caps}::int[]) as k(kind, n, cap)
        cross join lateral (
          select id, priority, run_at from jobs
          where state = 'queued' and kind = k.kind and run_at <= now()
          order by priority desc, run_at, id
          limit case when k.cap is null then k.n
                     else greatest(0, least(k.n, k.cap - (select count(*) from jobs r where r.state = 'running' and r.kind = k.kind)))
                end
          for update skip locked
        ) picked
        order by picked.priority desc, picked.run_at, picked.id
        limit ${cap}
      ) claimed
      where jobs.id = claimed.id
      returning jobs.*`.execute(executor);
  if (capped.length === 0) return (await claim(db)).rows;
  return db.transaction().execute(async (trx) => {
    // Sorted, so two workers capping the same kinds take the locks in one order and never deadlock.
    for (const kind of [...new Set(capped)].sort()) {
      await sql`select pg_advisory_xact_lock(${CAP_LOCK_CLASS}, hashtext(${kind}))`.execute(trx);
    }
    // Read committed: this statement's snapshot is taken after the locks, so it sees every claim
    // committed before them.
    return (await claim(trx)).rows;
  });
}

export interface LeaseHeld {
  id: string;
  /** The attempt (jobs.attempts at claim) this worker runs. */
  attempt: number;
  /** Progress to store, when it changed since the last heartbeat. */
  progress?: number | undefined;
}

export interface Heartbeat {
  id: string;
  cancel_requested: boolean;
}

/**
 * Extends the leases this worker still holds and stores progress. Returns the jobs still held, with
 * their cancel flag; a job missing from the answer was reclaimed and must be abandoned.
 */
export async function heartbeat(db: Db, owner: string, leases: readonly LeaseHeld[], leaseMs: number): Promise<Heartbeat[]> {
  if (leases.length === 0) return [];
  const { rows } = await sql<Heartbeat>`
    update jobs set
      lease_expires_at = now() + ${ms(leaseMs)},
      progress = coalesce(h.progress, jobs.progress)
    from unnest(${leases.map((l) => l.id)}::text[], ${leases.map((l) => l.attempt)}::int[], ${leases.map((l) => l.progress ?? null)}::float8[]) as h(id, attempt, progress)
    where jobs.id = h.id and jobs.attempts = h.attempt and jobs.lease_owner = ${owner} and jobs.state = 'running'
    returning jobs.id, jobs.cancel_requested`.execute(db);
  return rows;
}

export interface Attempt {
  id: string;
  owner: string;
  attempt: number;
}

/** The fence every end-of-attempt write carries. */
const held = (a: Attempt) => sql<SqlBool>`id = ${a.id} and lease_owner = ${a.owner} and attempts = ${a.attempt} and state = 'running'`;

/** Marks the attempt's job completed; false when the attempt no longer holds the lease (refused). */
export async function completeJob(db: Db, attempt: Attempt, result: unknown): Promise<boolean> {
  const updated = await db
    .updateTable('jobs')
    .set({
      state: 'completed',
      result: result === undefined ? null : JSON.stringify(result),
      progress: 1,
      finished_at: sql<Date>`now()`,
      lease_expires_at: null,
    })
    .where(held(attempt))
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}

export interface Completion extends Attempt {
  result: unknown;
}

/**
 * Completes many attempts in one statement, each under its own fence (a worker under load batches
 * its handlers' completions: one commit instead of one per job). Returns the ids that completed.
 */
export async function completeJobs(db: Db, completions: readonly Completion[]): Promise<Set<string>> {
  if (completions.length === 0) return new Set();
  const { rows } = await sql<{ id: string }>`
    update jobs set
      state = 'completed',
      result = c.result::jsonb,
      progress = 1,
      finished_at = now(),
      lease_expires_at = null
    from unnest(
      ${completions.map((c) => c.id)}::text[],
      ${completions.map((c) => c.owner)}::text[],
      ${completions.map((c) => c.attempt)}::int[],
      ${completions.map((c) => (c.result === undefined ? null : JSON.stringify(c.result)))}::text[]
    ) as c(id, owner, attempt, result)
    where jobs.id = c.id and jobs.lease_owner = c.owner and jobs.attempts = c.attempt and jobs.state = 'running'
    returning jobs.id`.execute(db);
  return new Set(rows.map((r) => r.id));
}

/** Locks the attempt's job row if the attempt still holds it (inside a transaction). */
export async function lockHeld(trx: Db, attempt: Attempt): Promise<boolean> {
  const row = await trx.selectFrom('jobs').select('id').where(held(attempt)).forUpdate().executeTakeFirst();
  return row !== undefined;
}

export interface BackoffOptions {
  baseMs?: number | undefined;
  maxMs?: number | undefined;
  random?: () => number;
}

/**
 * Delay before the attempt after attempt `attempt` (1-based): base·2^(attempt−1), capped, with
 * "equal jitter" (between half and all of it) so a burst of failures does not retry in lockstep
 * while the delay still grows with every attempt.
 */
export function backoffMs(attempt: number, options: BackoffOptions = {}): number {
  const base = options.baseMs ?? 1_000;
  const max = options.maxMs ?? 300_000;
  const exp = Math.min(max, base * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp / 2 + (options.random ?? Math.random)() * (exp / 2));
}

export interface FailOptions {
  error: string;
  /** Retrying cannot help: end as `failed` now. */
  permanent?: boolean;
  /** Delay before the next attempt when one is left. */
  retryInMs: number;
}

/**
 * Ends a failed attempt: canceled if a cancel was requested, failed if permanent, dead when its
 * attempts are used up, else queued again after `retryInMs`. Undefined when the lease was lost.
 */
export async function failJob(db: Db, attempt: Attempt, options: FailOptions): Promise<{ state: JobState; run_at: Date } | undefined> {
  const next = sql<JobState>`(case when cancel_requested then 'canceled'
                                    when ${options.permanent ?? false} then 'failed'
                                    when attempts >= max_attempts then 'dead'
                                    else 'queued' end)`;
  const row = await db
    .updateTable('jobs')
    .set({
      state: next,
      run_at: sql<Date>`case when ${next} = 'queued' then now() + ${ms(options.retryInMs)} else run_at end`,
      finished_at: sql<Date | null>`case when ${next} = 'queued' then null else now() end`,
      lease_owner: sql<string | null>`case when ${next} = 'queued' then null else lease_owner end`,
      lease_expires_at: null,
      last_error: options.error.slice(0, 8_000),
    })
    .where(held(attempt))
    .returning(['state', 'run_at'])
    .executeTakeFirst();
  return row;
}

/** Ends an attempt whose handler stopped because of a cancel request. */
export async function markCanceled(db: Db, attempt: Attempt): Promise<boolean> {
  const updated = await db
    .updateTable('jobs')
    .set({ state: 'canceled', finished_at: sql<Date>`now()`, lease_expires_at: null })
    .where(held(attempt))
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}

/**
 * Hands jobs back on a worker's orderly shutdown: queued again at once, the attempt not counted
 * (stopping a worker is not the job's fault), or canceled if that was requested meanwhile.
 */
export async function releaseJobs(db: Db, owner: string, attempts: readonly { id: string; attempt: number }[]): Promise<number> {
  if (attempts.length === 0) return 0;
  const { rows } = await sql<{ id: string }>`
    update jobs set
      state = case when jobs.cancel_requested then 'canceled' else 'queued' end,
      attempts = case when jobs.cancel_requested then jobs.attempts else jobs.attempts - 1 end,
      finished_at = case when jobs.cancel_requested then now() else null end,
      lease_owner = case when jobs.cancel_requested then jobs.lease_owner else null end,
      lease_expires_at = null,
      run_at = now()
    from unnest(${attempts.map((a) => a.id)}::text[], ${attempts.map((a) => a.attempt)}::int[]) as r(id, attempt)
    where jobs.id = r.id and jobs.attempts = r.attempt and jobs.lease_owner = ${owner} and jobs.state = 'running'
    returning jobs.id`.execute(db);
  return rows.length;
}

export interface Reclaimed {
  id: string;
  kind: string;
  state: JobState;
  previous_owner: string | null;
}

/**
 * Running jobs whose lease expired (their worker died or stalled) go back to the queue at once, or
 * end dead when that was their last attempt (canceled if a cancel was pending). Any worker may run
 * this; SKIP LOCKED keeps two sweeps from touching the same job.
 */
export async function reclaimExpired(db: Db, limit = 100): Promise<Reclaimed[]> {
  const next = sql<JobState>`(case when jobs.cancel_requested then 'canceled' when jobs.attempts >= jobs.max_attempts then 'dead' else 'queued' end)`;
  const { rows } = await sql<Reclaimed>`
    update jobs set
      state = ${next},
      last_error = 'lease expired: worker ' || coalesce(jobs.lease_owner, '?') || ' stopped renewing it during attempt ' || jobs.attempts,
      lease_owner = case when ${next} = 'queued' then null else jobs.lease_owner end,
      lease_expires_at = null,
      run_at = now(),
      finished_at = case when ${next} = 'queued' then null else now() end
    from (
      select id, lease_owner from jobs
      where state = 'running' and lease_expires_at < now()
      order by lease_expires_at
      limit ${limit}
      for update skip locked
    ) expired
    where jobs.id = expired.id
    returning jobs.id, jobs.kind, jobs.state, expired.lease_owner as previous_owner`.execute(db);
  return rows;
}
