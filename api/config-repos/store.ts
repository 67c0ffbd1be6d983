// Config repositories and their sync records in the database. A repository owns three secrets,
// all sealed with the server key and the repository id as context: the push-webhook secret, the API
// key its syncs act with, and the clone URL when it carries credentials.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import type { ConfigRepoRow, ConfigRepoSyncRow } from '../../platform/db/schema.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import { newId } from '../../platform/ids.ts';
import { enqueue } from '../../platform/jobs/queue.ts';
import { announceDeliveries, recordEvents } from '../../platform/events/event-store.ts';
import { insertKey } from '../accounts/keys/key-store.ts';
import { generateWebhookSecret } from '../webhooks/store.ts';
import { repoKeyOf, withoutCredentials, type GitSource } from '../../platform/git/url.ts';
import { iso, isoOrNull } from '../../platform/resources/timestamps.ts';
import type { RepoStatus, SyncResult, SyncStatus, SyncTrigger } from './schemas.ts';
import { livemodeOf } from '../../platform/db/environments.ts';

export const CONFIG_SYNC_JOB_KIND = 'config-repo-sync';

/** What a sync job carries; the repository row says the rest. */
export interface SyncJobPayload {
  [key: string]: unknown;
  repo_id: string;
  trigger: SyncTrigger;
  /** The record made when the sync was asked for (manual, push); polls make theirs only when they find something. */
  sync_id?: string;
  force?: boolean;
}

/** The scopes of a repository's own key: everything config can describe (webhooks need admin). */
const SYNC_KEY_SCOPES = ['admin'] as const;

export interface RepoSettings {
  name: string;
  branch: string;
  path: string;
  auto_sync: boolean;
  prune: boolean;
  self_heal: boolean;
  deny_weakening: boolean;
  max_changes: number;
  max_change_percent: number;
  /** Null: no impact preview. */
  impact_window: string | null;
  /** Null: no gate on newly blocked requests. */
  max_new_blocks: number | null;
  poll_interval_seconds: number;
  credentials_ref: string | null;
  /** The source-control connection that clones the repository (its integration id). */
  connection_id: string | null;
}

export function defaultSource(source: Pick<GitSource, 'target'>, path: string): string {
  const base = source.target.replace(/^[a-z]+:\/\//, '');
  return path === '' ? base : `${base}/${path.replace(/\/+$/, '')}`;
}

/** The next poll, jittered ±10 % so repositories added together do not fetch together. */
export function nextPollAt(intervalSeconds: number, from = Date.now()): Date {
  return new Date(from + intervalSeconds * 1000 * (0.9 + Math.random() * 0.2));
}

export function toConfigRepo(row: ConfigRepoRow) {
  return {
    id: row.id,
    livemode: livemodeOf(row.org_id),
    name: row.name,
    url: row.url,
    branch: row.branch,
    path: row.path,
    source: row.source,
    auto_sync: row.auto_sync,
    prune: row.prune,
    self_heal: row.self_heal,
    deny_weakening: row.deny_weakening,
    max_changes: row.max_changes,
    max_change_percent: row.max_change_percent,
    impact_window: row.impact_window,
    max_new_blocks: row.max_new_blocks,
    poll_interval_seconds: row.poll_interval_seconds,
    credentials_ref: row.credentials_ref,
    connection: row.connection_id,
    webhook_secret_last4: row.webhook_secret_last4,
    api_key_id: row.api_key_id,
    status: row.status as RepoStatus,
    status_message: row.status_message,
    last_synced_commit: row.last_synced_commit,
    last_synced_at: isoOrNull(row.last_synced_at),
    last_checked_at: isoOrNull(row.last_checked_at),
    next_poll_at: iso(row.next_poll_at),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

const durationMs = (row: ConfigRepoSyncRow): number | null =>
  row.started_at && row.finished_at ? row.finished_at.getTime() - row.started_at.getTime() : null;

export function toSync(row: ConfigRepoSyncRow) {
  return {
    id: row.id,
    livemode: livemodeOf(row.org_id),
    repo_id: row.repo_id,
    trigger: row.trigger as SyncTrigger,
    status: row.status as SyncStatus,
    result: row.result as SyncResult | null,
    failure_stage: row.failure_stage as 'fetch' | 'validate' | 'plan' | 'apply' | null,
    forced: row.forced,
    delivery_id: row.delivery_id,
    commit_sha: row.commit_sha,
    summary: row.summary as { create: number; update: number; replace: number; delete: number; unchanged: number; checksum: string | null } | null,
    changes: row.changes,
    impact: row.impact ?? [],
    errors: row.errors,
    warnings: row.warnings,
    created_at: iso(row.created_at),
    started_at: isoOrNull(row.started_at),
    finished_at: isoOrNull(row.finished_at),
    duration_ms: durationMs(row),
  };
}

// ---- repositories ---------------------------------------------------------------------------------

export interface NewRepo extends RepoSettings {
  orgId: string;
  source: GitSource;
  ownership: string;
  webhookSecret: string | undefined;
  createdBy: string | null;
}

/** The repository, its sync key and its webhook secret (returned in clear when generated here). */
export async function insertRepo(trx: Db, box: SecretBox, repo: NewRepo): Promise<{ row: ConfigRepoRow; generatedSecret: string | undefined }> {
  const id = newId('crp');
  const secret = repo.webhookSecret ?? generateWebhookSecret();
  const key = await insertKey(trx, { orgId: repo.orgId, name: `config-repo ${repo.name}`, scopes: SYNC_KEY_SCOPES, createdBy: repo.createdBy });
  const clean = withoutCredentials(repo.source.url);
  const row = await trx
    .insertInto('config_repos')
    .values({
      id,
      org_id: repo.orgId,
      name: repo.name,
      url: clean,
      url_sealed: clean !== repo.source.url ? box.seal(repo.source.url, id) : null,
      repo_key: repoKeyOf(repo.source),
      branch: repo.branch,
      path: repo.path,
      source: repo.ownership,
      auto_sync: repo.auto_sync,
      prune: repo.prune,
      self_heal: repo.self_heal,
      deny_weakening: repo.deny_weakening,
      max_changes: repo.max_changes,
      max_change_percent: repo.max_change_percent,
      impact_window: repo.impact_window,
      max_new_blocks: repo.max_new_blocks,
      poll_interval_seconds: repo.poll_interval_seconds,
      credentials_ref: repo.credentials_ref,
      connection_id: repo.connection_id,
      webhook_secret_sealed: box.seal(secret, `${id}:webhook`),
      webhook_secret_last4: secret.slice(-4),
      api_key_id: key.row.id,
      api_key_sealed: box.seal(key.value, `${id}:key`),
      // The first sync comes at once.
      next_poll_at: new Date(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { row, generatedSecret: repo.webhookSecret === undefined ? secret : undefined };
}

export const openWebhookSecret = (box: SecretBox, row: Pick<ConfigRepoRow, 'id' | 'webhook_secret_sealed'>): string => box.open(row.webhook_secret_sealed, `${row.id}:webhook`);
export const openSyncKey = (box: SecretBox, row: Pick<ConfigRepoRow, 'id' | 'api_key_sealed'>): string => box.open(row.api_key_sealed, `${row.id}:key`);
export const cloneUrlOf = (box: SecretBox, row: Pick<ConfigRepoRow, 'id' | 'url' | 'url_sealed'>): string => (row.url_sealed ? box.open(row.url_sealed, row.id) : row.url);

export interface RepoChanges extends Partial<RepoSettings> {
  source?: GitSource;
  webhookSecret?: string;
}

export async function updateRepo(trx: Db, box: SecretBox, orgId: string, id: string, changes: RepoChanges): Promise<ConfigRepoRow | undefined> {
  const { source, webhookSecret, ...settings } = changes;
  const clean = source ? withoutCredentials(source.url) : undefined;
  // What is fetched changed: the repository is checked again at once and its status starts over.
  const refetch = source !== undefined || settings.branch !== undefined || settings.path !== undefined;
  return trx
    .updateTable('config_repos')
    .set({
      ...settings,
      ...(source && clean !== undefined ? { url: clean, url_sealed: clean !== source.url ? box.seal(source.url, id) : null, repo_key: repoKeyOf(source) } : {}),
      ...(webhookSecret !== undefined ? { webhook_secret_sealed: box.seal(webhookSecret, `${id}:webhook`), webhook_secret_last4: webhookSecret.slice(-4) } : {}),
      ...(refetch ? { next_poll_at: new Date(), status: 'unknown', status_message: null, last_synced_commit: null } : {}),
      ...(settings.poll_interval_seconds !== undefined && !refetch ? { next_poll_at: nextPollAt(settings.poll_interval_seconds) } : {}),
      // New credentials: try them at once (a repository that failed to fetch need not wait a poll).
      ...(settings.connection_id !== undefined && !refetch ? { next_poll_at: new Date() } : {}),
      updated_at: sql<Date>`now()`,
    })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the repository (its syncs go with it) and revokes its key; the objects it made stay. */
export async function deleteRepo(trx: Db, orgId: string, id: string): Promise<ConfigRepoRow | undefined> {
  const row = await trx.deleteFrom('config_repos').where('org_id', '=', orgId).where('id', '=', id).returningAll().executeTakeFirst();
  if (row) await trx.updateTable('api_keys').set({ revoked_at: sql<Date>`now()` }).where('id', '=', row.api_key_id).where('revoked_at', 'is', null).execute();
  return row;
}

export async function findRepo(db: Db, orgId: string, id: string): Promise<ConfigRepoRow | undefined> {
  return db.selectFrom('config_repos').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

export async function listRepos(db: Db, q: { orgId: string; after: string | null; limit: number; status?: RepoStatus | undefined }): Promise<ConfigRepoRow[]> {
  let query = db.selectFrom('config_repos').selectAll().where('org_id', '=', q.orgId);
  if (q.after) query = query.where('id', '<', q.after);
  if (q.status) query = query.where('status', '=', q.status);
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}

// ---- syncs ----------------------------------------------------------------------------------------

export interface SyncRequest {
  trigger: SyncTrigger;
  force?: boolean;
  deliveryId?: string;
  /** At most one job per key (polls: `config-repo:<id>:poll:<due>`). */
  dedupeKey?: string;
  /** Make the record now (manual and push syncs: the caller gets its id to follow). */
  withRecord: boolean;
}

/** Queues a sync job (and its record when asked), in the caller's transaction. */
export async function requestSync(trx: Db, repo: Pick<ConfigRepoRow, 'id' | 'org_id'>, request: SyncRequest): Promise<{ syncId: string | undefined; jobId: string; created: boolean }> {
  const syncId = request.withRecord ? newId('sync') : undefined;
  const payload: SyncJobPayload = { repo_id: repo.id, trigger: request.trigger, ...(syncId ? { sync_id: syncId } : {}), ...(request.force ? { force: true } : {}) };
  // Many attempts with short waits: an attempt that finds another sync of the repository running
  // waits for it by failing and retrying (api/config-repos/sync-job.ts).
  const { job, created } = await enqueue(trx, { kind: CONFIG_SYNC_JOB_KIND, orgId: repo.org_id, payload, maxAttempts: 40, dedupeKey: request.dedupeKey });
  if (syncId && created) {
    await trx
      .insertInto('config_repo_syncs')
      .values({ id: syncId, org_id: repo.org_id, repo_id: repo.id, job_id: job.id, trigger: request.trigger, status: 'queued', forced: request.force ?? false, delivery_id: request.deliveryId ?? null })
      .execute();
  }
  return { syncId: created ? syncId : undefined, jobId: job.id, created };
}

export async function findSync(db: Db, orgId: string, repoId: string, id: string): Promise<ConfigRepoSyncRow | undefined> {
  return db.selectFrom('config_repo_syncs').selectAll().where('org_id', '=', orgId).where('repo_id', '=', repoId).where('id', '=', id).executeTakeFirst();
}

export async function listSyncs(
  db: Db,
  q: { orgId: string; repoId: string; after: string | null; limit: number; trigger?: SyncTrigger | undefined; result?: SyncResult | undefined },
): Promise<ConfigRepoSyncRow[]> {
  let query = db.selectFrom('config_repo_syncs').selectAll().where('org_id', '=', q.orgId).where('repo_id', '=', q.repoId);
  if (q.after) query = query.where('id', '<', q.after);
  if (q.trigger) query = query.where('trigger', '=', q.trigger);
  if (q.result) query = query.where('result', '=', q.result);
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}

/**
 * Sync records whose job ended without finishing them (a worker that died on the last attempt):
 * completed as failed. Run from housekeeping.
 */
export async function failOrphanedSyncs(db: Db): Promise<number> {
  const failed = await db.transaction().execute(async (trx) => {
    const rows = await trx
      .updateTable('config_repo_syncs')
      .set({ status: 'completed', result: 'failed', errors: JSON.stringify(['the sync job ended without finishing the sync (worker lost)']), finished_at: new Date() })
      .where('status', 'in', ['queued', 'running'])
      .where('job_id', 'in', (eb) => eb.selectFrom('jobs').select('id').where('state', 'in', ['dead', 'failed', 'canceled']))
      .returningAll()
      .execute();
    const recorded = await recordEvents(trx, rows.map((row) => ({ orgId: row.org_id, type: 'config_repo.sync.failed' as const, object: toSync(row) })));
    return { count: rows.length, deliveries: recorded.deliveries };
  });
  announceDeliveries(db, failed.deliveries);
  return failed.count;
}

/**
 * Keeps the newest `keep` sync records of each repository, and push deliveries for 30 days (a
 * provider's redelivery comes within hours). Returns the rows removed.
 */
export async function pruneSyncHistory(db: Db, keep = 500): Promise<number> {
  const records = await sql`
    delete from config_repo_syncs s using (
      select id from (select id, row_number() over (partition by repo_id order by id desc) as n from config_repo_syncs) ranked where n > ${keep}
    ) old where s.id = old.id`.execute(db);
  const deliveries = await db.deleteFrom('source_control_deliveries').where('received_at', '<', sql<Date>`now() - interval '30 days'`).executeTakeFirst();
  return Number(records.numAffectedRows ?? 0) + Number(deliveries.numDeletedRows);
}
