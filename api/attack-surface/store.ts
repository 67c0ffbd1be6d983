// Attack-surface assets and discovery runs in the database, and their resources.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import type { AttackSurfaceAssetRow, AttackSurfaceRunRow, AttackSurfaceRunStatus, IntegrationRow } from '../../platform/db/schema.ts';
import { newId } from '../../platform/ids.ts';
import { enqueue } from '../../platform/jobs/queue.ts';
import { livemodeOf } from '../../platform/db/environments.ts';
import { iso, isoOrNull } from '../../platform/resources/timestamps.ts';
import { coverageSelections, coveredCondition, toCoverage } from './coverage.ts';
import type { AssetKind, CloudProviderName } from './providers/types.ts';

export const DISCOVER_JOB = 'attack_surface.discover';
export const RUN_ID_PREFIX = 'asrun';
/** Attempts of one discovery: AWS being down is retried with backoff, then the run fails. */
export const DISCOVER_MAX_ATTEMPTS = 4;

export type RunTrigger = 'schedule' | 'manual' | 'connect';
export type AssetStatusFilter = 'active' | 'gone' | 'all';

export type DiscoverPayload = { run_id: string };

export type AssetWithCoverage = AttackSurfaceAssetRow & { shield_site_id: string | null; scan_schedule_id: string | null; scan_id: string | null };

export function toAsset(row: AssetWithCoverage) {
  return {
    id: row.id,
    object: 'attack_surface_asset' as const,
    livemode: livemodeOf(row.org_id),
    host: row.host,
    kind: row.kind as AssetKind,
    provider: row.provider as CloudProviderName,
    integration_id: row.integration_id,
    resource: { id: row.resource_id, name: row.resource_name, region: row.region },
    details: row.details,
    first_seen_at: iso(row.first_seen_at),
    last_seen_at: iso(row.last_seen_at),
    gone_at: isoOrNull(row.gone_at),
    coverage: toCoverage(row),
  };
}

export function toRun(row: AttackSurfaceRunRow) {
  return {
    id: row.id,
    object: 'attack_surface_run' as const,
    livemode: livemodeOf(row.org_id),
    integration_id: row.integration_id,
    status: row.status,
    trigger: row.trigger,
    counts: row.counts,
    errors: row.errors,
    error: row.error,
    created_at: iso(row.created_at),
    started_at: isoOrNull(row.started_at),
    finished_at: isoOrNull(row.finished_at),
  };
}

export interface AssetQuery {
  orgId: string;
  after: string | null;
  limit: number;
  kinds?: string[] | undefined;
  hosts?: string[] | undefined;
  integrationId?: string | undefined;
  status: AssetStatusFilter;
  covered?: boolean | undefined;
}

function assetsWithCoverage(db: Db) {
  const c = coverageSelections();
  return db.selectFrom('attack_surface_assets as asset').selectAll('asset').select([c.shieldSiteId.as('shield_site_id'), c.scanScheduleId.as('scan_schedule_id'), c.scanId.as('scan_id')]);
}

/** Newest first, `limit + 1` rows (pagination); coverage and its filter are evaluated by the database. */
export async function listAssets(db: Db, q: AssetQuery): Promise<AssetWithCoverage[]> {
  let query = assetsWithCoverage(db).where('asset.org_id', '=', q.orgId);
  if (q.after) query = query.where('asset.id', '<', q.after);
  if (q.kinds) query = query.where('asset.kind', 'in', q.kinds);
  if (q.hosts) query = query.where('asset.host', 'in', q.hosts.map((h) => h.toLowerCase()));
  if (q.integrationId) query = query.where('asset.integration_id', '=', q.integrationId);
  if (q.status === 'active') query = query.where('asset.gone_at', 'is', null);
  if (q.status === 'gone') query = query.where('asset.gone_at', 'is not', null);
  if (q.covered !== undefined) query = query.where(sql<boolean>`${coveredCondition()} = ${q.covered}`);
  return query.orderBy('asset.id', 'desc').limit(q.limit + 1).execute();
}

export async function findAsset(db: Db, orgId: string, id: string): Promise<AssetWithCoverage | undefined> {
  return assetsWithCoverage(db).where('asset.org_id', '=', orgId).where('asset.id', '=', id).executeTakeFirst();
}

export async function listRuns(db: Db, q: { orgId: string; after: string | null; limit: number; integrationId?: string | undefined }): Promise<AttackSurfaceRunRow[]> {
  let query = db.selectFrom('attack_surface_runs').selectAll().where('org_id', '=', q.orgId);
  if (q.after) query = query.where('id', '<', q.after);
  if (q.integrationId) query = query.where('integration_id', '=', q.integrationId);
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}

export async function findRun(db: Db, id: string): Promise<AttackSurfaceRunRow | undefined> {
  return db.selectFrom('attack_surface_runs').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A run of this connection that has not finished (one at a time). */
export async function unfinishedRun(db: Db, integrationId: string): Promise<AttackSurfaceRunRow | undefined> {
  return db.selectFrom('attack_surface_runs').selectAll().where('integration_id', '=', integrationId).where('status', 'in', ['queued', 'running']).orderBy('id', 'desc').limit(1).executeTakeFirst();
}

/**
 * Creates a run and its job. With a dedupe key, a job already queued under that key means another
 * process queued this discovery: nothing is created and null is returned. The caller announces the
 * job after its transaction commits.
 */
export async function queueRun(trx: Db, integration: Pick<IntegrationRow, 'id' | 'org_id'>, trigger: RunTrigger, dedupeKey?: string): Promise<AttackSurfaceRunRow | null> {
  const id = newId(RUN_ID_PREFIX);
  const { job, created } = await enqueue(trx, {
    kind: DISCOVER_JOB,
    orgId: integration.org_id,
    payload: { run_id: id } satisfies DiscoverPayload,
    maxAttempts: DISCOVER_MAX_ATTEMPTS,
    ...(dedupeKey ? { dedupeKey } : {}),
  });
  if (!created) return null;
  return trx
    .insertInto('attack_surface_runs')
    .values({ id, org_id: integration.org_id, integration_id: integration.id, status: 'queued', trigger, job_id: job.id })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function moveRun(db: Db, id: string, status: AttackSurfaceRunStatus, fields: { error?: string | null; counts?: object; errors?: object[] } = {}): Promise<AttackSurfaceRunRow | undefined> {
  return db
    .updateTable('attack_surface_runs')
    .set({
      status,
      ...(status === 'running' ? { started_at: sql<Date>`coalesce(started_at, now())` } : {}),
      ...(status === 'completed' || status === 'failed' ? { finished_at: sql<Date>`now()` } : {}),
      ...(fields.error !== undefined ? { error: fields.error } : {}),
      ...(fields.counts !== undefined ? { counts: JSON.stringify(fields.counts) } : {}),
      ...(fields.errors !== undefined ? { errors: JSON.stringify(fields.errors) } : {}),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}
