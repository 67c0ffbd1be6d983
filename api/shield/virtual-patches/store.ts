// Virtual patches in the database.
import { sql } from 'kysely';
import type { HttpMethod } from '../../../schemas/index.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { VirtualPatchRow } from '../../../platform/db/schema.ts';
import { newId } from '../../../platform/ids.ts';
import { labelsContain } from '../../../platform/resources/labels.ts';
import { expiryStatus, iso, isoOrNull } from '../../../platform/resources/timestamps.ts';
import { deleteSiteRules, inGivenOrder } from '../rule-rows.ts';
import { livemodeOf } from '../../../platform/db/environments.ts';

const DAY_MS = 86_400_000;

export interface NewPatch {
  url_pattern: string;
  method: string;
  match_param: string;
  match_regex: string;
  action: string;
  expires_in_days: number | null;
  labels: Record<string, string>;
  source_finding_id?: string | null;
}

/** A create request's body (VirtualPatchSpec, validated) as the row to insert, with the schema's defaults. */
export function newPatchFrom(spec: { url_pattern: string; method: string; match_param: string; match_regex: string; action?: string | undefined; expires_in_days?: number | undefined; labels?: Record<string, string> | undefined }): NewPatch {
  return {
    url_pattern: spec.url_pattern,
    method: spec.method,
    match_param: spec.match_param,
    match_regex: spec.match_regex,
    action: spec.action ?? 'block',
    expires_in_days: spec.expires_in_days ?? null,
    labels: spec.labels ?? {},
  };
}

export function toPatch(row: VirtualPatchRow) {
  return {
    id: row.id,
    livemode: livemodeOf(row.org_id),
    site_id: row.site_id,
    url_pattern: row.url_pattern,
    method: row.method as HttpMethod,
    match_param: row.match_param,
    match_regex: row.match_regex,
    action: row.action as 'block' | 'log' | 'challenge',
    expires_in_days: row.expires_in_days,
    expires_at: isoOrNull(row.expires_at),
    status: expiryStatus(row.expires_at),
    source_finding_id: row.source_finding_id,
    labels: row.labels,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export interface PatchListQuery {
  siteId: string;
  after: string | null;
  limit: number;
  labels?: Record<string, string> | undefined;
  actions?: string[] | undefined;
}

export async function listPatches(db: Db, q: PatchListQuery): Promise<VirtualPatchRow[]> {
  let query = db.selectFrom('virtual_patches').selectAll().where('site_id', '=', q.siteId);
  if (q.after) query = query.where('id', '<', q.after);
  if (q.labels) query = query.where(labelsContain('labels', q.labels));
  if (q.actions) query = query.where('action', 'in', q.actions);
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}

export async function findPatch(db: Db, siteId: string, id: string): Promise<VirtualPatchRow | undefined> {
  return db.selectFrom('virtual_patches').selectAll().where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
}

function patchRow(orgId: string, siteId: string, patch: NewPatch, now: Date) {
  const { labels, expires_in_days, source_finding_id, ...fields } = patch;
  return {
    id: newId('vp'),
    org_id: orgId,
    site_id: siteId,
    ...fields,
    expires_in_days,
    expires_at: expires_in_days === null ? null : new Date(now.getTime() + expires_in_days * DAY_MS),
    source_finding_id: source_finding_id ?? null,
    labels: JSON.stringify(labels),
    created_at: now,
    updated_at: now,
  };
}

export async function insertPatch(db: Db, orgId: string, siteId: string, patch: NewPatch, now = new Date()): Promise<VirtualPatchRow> {
  return db.insertInto('virtual_patches').values(patchRow(orgId, siteId, patch, now)).returningAll().executeTakeFirstOrThrow();
}

/** Inserts several patches in one statement; returns their rows in the order given. */
export async function insertPatches(db: Db, orgId: string, siteId: string, patches: readonly NewPatch[], now = new Date()): Promise<VirtualPatchRow[]> {
  if (patches.length === 0) return [];
  const rows = patches.map((patch) => patchRow(orgId, siteId, patch, now));
  return inGivenOrder(rows, await db.insertInto('virtual_patches').values(rows).returningAll().execute());
}

/** Deletes several rules of the site in one statement; returns the ids that existed. Used by rule batches. */
export const deletePatches = (db: Db, siteId: string, ids: readonly string[]): Promise<Set<string>> => deleteSiteRules(db, 'virtual_patches', siteId, ids);

export async function updatePatchLabels(db: Db, siteId: string, id: string, labels: Record<string, string>): Promise<VirtualPatchRow | undefined> {
  return db
    .updateTable('virtual_patches')
    .set({ labels: JSON.stringify(labels), updated_at: sql<Date>`now()` })
    .where('site_id', '=', siteId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deletePatch(db: Db, siteId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('virtual_patches').where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
