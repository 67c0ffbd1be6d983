// Scans in the database: creating one (with its job, atomically), reading, listing, and the state
// changes the job that runs it makes.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import type { ScansTable } from '../../platform/db/schema.ts';
import type { Selectable } from 'kysely';
import { newId } from '../../platform/ids.ts';
import { enqueue } from '../../platform/jobs/queue.ts';
import { SCAN_JOB_KIND } from '../../platform/jobs/scheduler.ts';
import { iso, isoOrNull } from '../../platform/resources/timestamps.ts';
import type { ScanType } from '../../schemas/checks/schedule.ts';
import type { ScanStatus } from './schemas.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import { withoutCredentials, type GitSource } from '../../platform/git/url.ts';
import { livemodeOf } from '../../platform/db/environments.ts';

export type ScanRow = Selectable<ScansTable>;

/** The job kind that runs scans: the job system's own name for it. */
export { SCAN_JOB_KIND } from '../../platform/jobs/scheduler.ts';
/** A scan job's payload: the scan row says everything else. */
export interface ScanJobPayload {
  [key: string]: unknown;
  scan_id: string;
}

export interface NewScan {
  orgId: string;
  scanType: string;
  target: string;
  source: Record<string, unknown>;
  config: Record<string, unknown>;
  scheduleId?: string | null;
  triggeredBy?: string | null;
  /** An uploaded archive, kept in the database until the scan has run (any worker may run it). */
  archive?: Buffer;
  /** Exactly one scan per key (the scheduler's `schedule:<id>:<due time>`). */
  dedupeKey?: string;
  maxAttempts?: number;
}

/**
 * Inserts the scan and enqueues its job; call inside a transaction so that neither exists without
 * the other. With a dedupe key already used, returns null and creates nothing.
 */
export async function createScan(trx: Db, scan: NewScan): Promise<ScanRow | null> {
  const id = newId('scan');
  const { job, created } = await enqueue(trx, {
    kind: SCAN_JOB_KIND,
    orgId: scan.orgId,
    payload: { scan_id: id } satisfies ScanJobPayload,
    ...(scan.dedupeKey ? { dedupeKey: scan.dedupeKey } : {}),
    ...(scan.maxAttempts ? { maxAttempts: scan.maxAttempts } : {}),
  });
  if (!created) return null;
  const row = await trx
    .insertInto('scans')
    .values({
      id,
      org_id: scan.orgId,
      scan_type: scan.scanType,
      status: 'queued',
      target: scan.target,
      source: JSON.stringify(scan.source),
      config: JSON.stringify(scan.config),
      schedule_id: scan.scheduleId ?? null,
      job_id: job.id,
      triggered_by: scan.triggeredBy ?? null,
      summary: JSON.stringify({}),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (scan.archive) await trx.insertInto('scan_archives').values({ scan_id: id, content: scan.archive }).execute();
  return row;
}

export function toScan(row: ScanRow) {
  return {
    id: row.id,
    livemode: livemodeOf(row.org_id),
    scan_type: row.scan_type as ScanType,
    status: row.status as ScanStatus,
    target: row.target,
    // Sealed secrets (a clone URL's token, a URL scan's authentication) never leave the server.
    source: Object.fromEntries(Object.entries(row.source).filter(([key]) => key !== 'sealed_url' && key !== 'sealed_auth')),
    config: row.config,
    schedule_id: row.schedule_id,
    progress: Number(row.progress),
    summary: row.summary,
    error: row.error,
    created_at: iso(row.created_at),
    started_at: isoOrNull(row.started_at),
    finished_at: isoOrNull(row.finished_at),
    duration_ms: row.started_at && row.finished_at ? row.finished_at.getTime() - row.started_at.getTime() : null,
  };
}

export async function findScan(db: Db, orgId: string, id: string): Promise<ScanRow | undefined> {
  return db.selectFrom('scans').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

export async function getScanById(db: Db, id: string): Promise<ScanRow | undefined> {
  return db.selectFrom('scans').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface ScanListQuery {
  orgId: string;
  after: string | null;
  limit: number;
  scanTypes?: string[] | undefined;
  statuses?: string[] | undefined;
  target?: string | undefined;
  scheduleId?: string | undefined;
}

export async function listScans(db: Db, q: ScanListQuery): Promise<ScanRow[]> {
  let query = db.selectFrom('scans').selectAll().where('org_id', '=', q.orgId);
  if (q.after) query = query.where('id', '<', q.after);
  if (q.scanTypes) query = query.where('scan_type', 'in', q.scanTypes);
  if (q.statuses) query = query.where('status', 'in', q.statuses);
  if (q.target) query = query.where('target', '=', q.target);
  if (q.scheduleId) query = query.where('schedule_id', '=', q.scheduleId);
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}

/** The latest finished scan of the same target and type before `scan` (the diff's default baseline). */
export async function previousScan(db: Db, scan: ScanRow): Promise<ScanRow | undefined> {
  return db
    .selectFrom('scans')
    .selectAll()
    .where('org_id', '=', scan.org_id)
    .where('scan_type', '=', scan.scan_type)
    .where('target', '=', scan.target)
    .where('status', '=', 'completed')
    .where('id', '<', scan.id)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Moves a scan to `running` (again, on a retry). Undefined when it was canceled meanwhile; `first`
 * when this is its first start (a retry is not a new `scan.started`).
 */
export async function markRunning(db: Db, id: string): Promise<{ row: ScanRow; first: boolean } | undefined> {
  const before = await db.selectFrom('scans').select('started_at').where('id', '=', id).where('status', 'in', ['queued', 'running']).forUpdate().executeTakeFirst();
  if (!before) return undefined;
  const row = await db
    .updateTable('scans')
    .set({ status: 'running', started_at: sql<Date>`coalesce(started_at, now())`, error: null })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { row, first: before.started_at === null };
}

export async function setProgress(db: Db, id: string, progress: number): Promise<void> {
  await db.updateTable('scans').set({ progress }).where('id', '=', id).where('status', '=', 'running').execute();
}

/** Ends a scan that has not ended yet (returning it); an ended scan (canceled meanwhile) is left as it is. */
export async function finishScan(
  db: Db,
  id: string,
  end: { status: Exclude<ScanStatus, 'queued' | 'running'>; error?: string | null; summary?: Record<string, number>; coverage?: Record<string, unknown> },
): Promise<ScanRow | undefined> {
  const row = await db
    .updateTable('scans')
    .set({
      status: end.status,
      error: end.error ?? null,
      finished_at: sql<Date>`now()`,
      ...(end.status === 'completed' ? { progress: 1 } : {}),
      ...(end.summary ? { summary: JSON.stringify(end.summary) } : {}),
      ...(end.coverage ? { coverage: JSON.stringify(end.coverage) } : {}),
    })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .returningAll()
    .executeTakeFirst();
  await db.deleteFrom('scan_archives').where('scan_id', '=', id).execute();
  return row;
}

/** Seal context of a git source's full URL: binds the sealed text to the target it belongs to. */
const sealContext = (target: string): string => `scan-source:${target}`;

/**
 * How a git source is stored: the URL without credentials for everyone to see and, when the URL
 * carries a token or password, the full URL sealed with the server key for the worker.
 */
export function storedGitSource(source: GitSource, box: SecretBox): Record<string, unknown> {
  const clean = withoutCredentials(source.url);
  return { kind: 'git', url: clean, ref: source.ref, ...(clean !== source.url ? { sealed_url: box.seal(source.url, sealContext(source.target)) } : {}) };
}

/** The URL to clone: the sealed one when there is one. */
export function cloneUrlOf(scan: Pick<ScanRow, 'source' | 'target'>, box: SecretBox): string {
  const { url, sealed_url: sealed } = scan.source as { url: string; sealed_url?: string };
  return sealed ? box.open(sealed, sealContext(scan.target)) : url;
}
