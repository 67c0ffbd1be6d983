// Rate-limit rules in the database.
import { sql } from 'kysely';
import type { HttpMethod } from '../../../schemas/index.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { RateLimitRuleRow } from '../../../platform/db/schema.ts';
import { newId } from '../../../platform/ids.ts';
import { jsonColumns } from '../../../platform/resources/json-columns.ts';
import { labelsContain } from '../../../platform/resources/labels.ts';
import { iso } from '../../../platform/resources/timestamps.ts';
import { deleteSiteRules, inGivenOrder } from '../rule-rows.ts';
import { livemodeOf } from '../../../platform/db/environments.ts';

export interface RateLimitFields {
  identity: string;
  url_pattern: string;
  method: string;
  budget: number;
  window_seconds: number;
  action: string;
  escalate_to_deny_minutes: number;
  labels: Record<string, string>;
}

/** A create request's body (RateLimitRuleSpec, validated) as the fields to insert, with the schema's defaults. */
export function newRateLimitFrom(spec: Omit<RateLimitFields, 'escalate_to_deny_minutes' | 'labels'> & { escalate_to_deny_minutes?: number | undefined; labels?: Record<string, string> | undefined }): RateLimitFields {
  const { labels = {}, escalate_to_deny_minutes = 0, ...fields } = spec;
  return { ...fields, escalate_to_deny_minutes, labels };
}

export function toRateLimit(row: RateLimitRuleRow) {
  return {
    id: row.id,
    livemode: livemodeOf(row.org_id),
    site_id: row.site_id,
    identity: row.identity,
    url_pattern: row.url_pattern,
    method: row.method as HttpMethod,
    budget: row.budget,
    window_seconds: row.window_seconds,
    action: row.action as 'block' | 'challenge' | 'log',
    escalate_to_deny_minutes: row.escalate_to_deny_minutes,
    labels: row.labels,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export async function listRateLimits(db: Db, q: { siteId: string; after: string | null; limit: number; labels?: Record<string, string> | undefined }): Promise<RateLimitRuleRow[]> {
  let query = db.selectFrom('rate_limit_rules').selectAll().where('site_id', '=', q.siteId);
  if (q.after) query = query.where('id', '<', q.after);
  if (q.labels) query = query.where(labelsContain('labels', q.labels));
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}

export async function findRateLimit(db: Db, siteId: string, id: string): Promise<RateLimitRuleRow | undefined> {
  return db.selectFrom('rate_limit_rules').selectAll().where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
}

export async function insertRateLimit(db: Db, orgId: string, siteId: string, fields: RateLimitFields): Promise<RateLimitRuleRow> {
  return db
    .insertInto('rate_limit_rules')
    .values({ id: newId('rl'), org_id: orgId, site_id: siteId, ...jsonColumns(fields, ['labels']) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Inserts several rules in one statement; returns their rows in the order given. */
export async function insertRateLimits(db: Db, orgId: string, siteId: string, rules: readonly RateLimitFields[]): Promise<RateLimitRuleRow[]> {
  if (rules.length === 0) return [];
  const rows = rules.map((fields) => ({ id: newId('rl'), org_id: orgId, site_id: siteId, ...jsonColumns(fields, ['labels']) }));
  return inGivenOrder(rows, await db.insertInto('rate_limit_rules').values(rows).returningAll().execute());
}

/** Deletes several rules of the site in one statement; returns the ids that existed. Used by rule batches. */
export const deleteRateLimits = (db: Db, siteId: string, ids: readonly string[]): Promise<Set<string>> => deleteSiteRules(db, 'rate_limit_rules', siteId, ids);

export async function updateRateLimit(db: Db, siteId: string, id: string, changes: Partial<RateLimitFields>): Promise<RateLimitRuleRow | undefined> {
  return db
    .updateTable('rate_limit_rules')
    .set({ ...jsonColumns(changes, ['labels']), updated_at: sql<Date>`now()` })
    .where('site_id', '=', siteId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteRateLimit(db: Db, siteId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('rate_limit_rules').where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
