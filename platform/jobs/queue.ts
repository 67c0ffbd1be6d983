// The producer's side of the queue: enqueue (optionally exactly once per dedupe key), read,
// cancel, and the dead-letter view. Workers' side (claim, lease, finish) is in ./claim.ts.
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { newId } from '../ids.ts';
import { announceEnqueued, JOBS_CHANNEL, localJobSignals } from './signals.ts';
import type { JobRow, JobState } from './types.ts';

export interface EnqueueOptions {
  kind: string;
  payload?: Record<string, unknown>;
  orgId?: string | null;
  /** Higher runs first among due jobs (default 0). */
  priority?: number;
  /** Attempts before the job is dead (default 5). */
  maxAttempts?: number;
  /** Not before this time (default now). */
  runAt?: Date;
  /** At most one job ever exists per key; enqueueing it again returns that job. */
  dedupeKey?: string;
}

export interface Enqueued {
  job: JobRow;
  /** False when the dedupe key already named a job, which is returned instead. */
  created: boolean;
}

const MAX_ROWS_PER_STATEMENT = 1_000;

function row(options: EnqueueOptions) {
  const { maxAttempts, priority } = options;
  if (maxAttempts !== undefined && (!Number.isInteger(maxAttempts) || maxAttempts < 1)) throw new Error('maxAttempts must be a positive integer');
  if (priority !== undefined && !Number.isInteger(priority)) throw new Error('priority must be an integer');
  return {
    id: newId('job'),
    org_id: options.orgId ?? null,
    kind: options.kind,
    payload: JSON.stringify(options.payload ?? {}),
    ...(priority !== undefined ? { priority } : {}),
    ...(maxAttempts !== undefined ? { max_attempts: maxAttempts } : {}),
    ...(options.runAt ? { run_at: options.runAt } : {}),
    dedupe_key: options.dedupeKey ?? null,
  };
}

/** Wakes workers. Inside a transaction the row is not visible yet, so the caller announces after commit. */
function signalEnqueued(db: Db): void {
  if (!db.isTransaction) announceEnqueued(db);
}

export async function enqueue(db: Db, options: EnqueueOptions): Promise<Enqueued> {
  const values = row(options);
  if (!options.dedupeKey) {
    const job = await db.insertInto('jobs').values(values).returningAll().executeTakeFirstOrThrow();
    signalEnqueued(db);
    return { job, created: true };
  }
  const inserted = await db
    .insertInto('jobs')
    .values(values)
    .onConflict((oc) => oc.column('dedupe_key').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) {
    signalEnqueued(db);
    return { job: inserted, created: true };
  }
  const existing = await db.selectFrom('jobs').selectAll().where('dedupe_key', '=', options.dedupeKey).executeTakeFirstOrThrow();
  return { job: existing, created: false };
}

/**
 * Many jobs in as few statements as possible (1 000 rows each). Jobs whose dedupe key already
 * exists are left out; returns the ones created.
 */
export async function enqueueMany(db: Db, jobs: readonly EnqueueOptions[]): Promise<JobRow[]> {
  const created: JobRow[] = [];
  for (let i = 0; i < jobs.length; i += MAX_ROWS_PER_STATEMENT) {
    const values = jobs.slice(i, i + MAX_ROWS_PER_STATEMENT).map(row);
    const rows = await db
      .insertInto('jobs')
      .values(values)
      .onConflict((oc) => oc.column('dedupe_key').doNothing())
      .returningAll()
      .execute();
    created.push(...rows);
  }
  if (created.length > 0) signalEnqueued(db);
  return created;
}

export async function getJob(db: Db, id: string, orgId?: string): Promise<JobRow | undefined> {
  let query = db.selectFrom('jobs').selectAll().where('id', '=', id);
  if (orgId !== undefined) query = query.where('org_id', '=', orgId);
  return query.executeTakeFirst();
}

export type CancelOutcome =
  /** It was queued: canceled at once, it will never run. */
  | 'canceled'
  /** It is running: its worker aborts the handler (within about a second) and marks it canceled. */
  | 'cancel_requested'
  /** It had already finished (completed, failed, canceled or dead); nothing changed. */
  | 'finished'
  | 'not_found';

export async function cancelJob(db: Db, id: string, orgId?: string): Promise<{ outcome: CancelOutcome; job: JobRow | undefined }> {
  // One statement for both live states. If a worker claims the job at this moment, the update waits
  // for the claim's row lock, re-reads the row and takes the running branch; a claim that comes
  // second skips the row while it is locked and afterwards finds it canceled.
  let query = db
    .updateTable('jobs')
    .set({
      cancel_requested: true,
      state: sql<JobState>`case when state = 'queued' then 'canceled' else state end`,
      finished_at: sql<Date | null>`case when state = 'queued' then now() else finished_at end`,
    })
    .where('id', '=', id)
    .where('state', 'in', ['queued', 'running']);
  if (orgId !== undefined) query = query.where('org_id', '=', orgId);
  const job = await query.returningAll().executeTakeFirst();
  if (job?.state === 'canceled') return { outcome: 'canceled', job };
  if (job) {
    localJobSignals.emit('cancel', id);
    // Other processes' workers; their heartbeat would notice within a second anyway.
    await sql`select pg_notify(${JOBS_CHANNEL}, ${`cancel:${id}`})`.execute(db);
    return { outcome: 'cancel_requested', job };
  }
  const current = await getJob(db, id, orgId);
  return { outcome: current ? 'finished' : 'not_found', job: current };
}

export interface DeadJobsQuery {
  kind?: string;
  orgId?: string;
  /** Id cursor: jobs older than this one. */
  before?: string;
  limit?: number;
}

/** Dead jobs (retries exhausted), newest first, for inspection. */
export async function listDeadJobs(db: Db, q: DeadJobsQuery = {}): Promise<JobRow[]> {
  let query = db.selectFrom('jobs').selectAll().where('state', '=', 'dead');
  if (q.kind !== undefined) query = query.where('kind', '=', q.kind);
  if (q.orgId !== undefined) query = query.where('org_id', '=', q.orgId);
  if (q.before !== undefined) query = query.where('id', '<', q.before);
  return query.orderBy('id', 'desc').limit(q.limit ?? 50).execute();
}

/** Puts a dead job back in the queue with a fresh set of attempts; undefined when it is not dead. */
export async function retryDeadJob(db: Db, id: string, orgId?: string): Promise<JobRow | undefined> {
  let query = db
    .updateTable('jobs')
    .set({ state: 'queued', attempts: 0, run_at: sql<Date>`now()`, finished_at: null, lease_owner: null, lease_expires_at: null, cancel_requested: false, progress: 0 })
    .where('id', '=', id)
    .where('state', '=', 'dead');
  if (orgId !== undefined) query = query.where('org_id', '=', orgId);
  const job = await query.returningAll().executeTakeFirst();
  if (job) signalEnqueued(db);
  return job;
}
