// Where a site's ACME certificate stands (`shield_certificate_orders`, one row per site):
//   pending  an order job is queued or running (`job_id`);
//   valid    the last order obtained the certificate being served;
//   failed   the last `attempts` orders failed in a row; the next one is due at `next_attempt_at`.
// The scheduler moves a row to pending (./scheduler.ts); the order job moves it on, in the
// transaction that completes the job.
import { sql } from 'kysely';
import type { Db } from '../../../platform/db/database.ts';
import { MAX_ERROR_LENGTH, retryDelayMs } from './settings.ts';

export interface OrderFailure {
  attempts: number;
  nextAttemptAt: Date;
  error: string;
}

/** Marks the order pending under `jobId` (creating the row for a site's first order). */
export async function markPending(db: Db, site: { id: string; org_id: string }, jobId: string): Promise<void> {
  await db
    .insertInto('shield_certificate_orders')
    .values({ site_id: site.id, org_id: site.org_id, status: 'pending', job_id: jobId })
    .onConflict((oc) => oc.column('site_id').doUpdateSet({ status: 'pending', job_id: jobId, updated_at: sql<Date>`now()` }))
    .execute();
}

/** The order obtained a certificate: failures forgotten. */
export async function markIssued(db: Db, siteId: string, jobId: string): Promise<void> {
  await db
    .updateTable('shield_certificate_orders')
    .set({ status: 'valid', attempts: 0, last_error: null, last_attempt_at: sql<Date>`now()`, next_attempt_at: null, job_id: null, updated_at: sql<Date>`now()` })
    .where('site_id', '=', siteId)
    .where('job_id', '=', jobId)
    .execute();
}

/** The order failed: one more failure in a row, the next attempt backed off. Undefined when the row is gone (the site was deleted) or is another job's. */
export async function markFailed(db: Db, siteId: string, jobId: string, error: string): Promise<OrderFailure | undefined> {
  const current = await db.selectFrom('shield_certificate_orders').select('attempts').where('site_id', '=', siteId).where('job_id', '=', jobId).forUpdate().executeTakeFirst();
  if (!current) return undefined;
  const attempts = current.attempts + 1;
  const nextAttemptAt = new Date(Date.now() + retryDelayMs(attempts));
  const text = error.length > MAX_ERROR_LENGTH ? `${error.slice(0, MAX_ERROR_LENGTH - 1)}…` : error;
  await db
    .updateTable('shield_certificate_orders')
    .set({ status: 'failed', attempts, last_error: text, last_attempt_at: sql<Date>`now()`, next_attempt_at: nextAttemptAt, job_id: null, updated_at: sql<Date>`now()` })
    .where('site_id', '=', siteId)
    .execute();
  return { attempts, nextAttemptAt, error: text };
}

/** The site no longer wants a certificate from ACME (mode changed, site moved): the order is dropped without a failure. */
export async function markAbandoned(db: Db, siteId: string, jobId: string): Promise<void> {
  await db.deleteFrom('shield_certificate_orders').where('site_id', '=', siteId).where('job_id', '=', jobId).execute();
}
