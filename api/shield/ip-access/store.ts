// IP access rules in the database.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { IpAccessRuleRow } from '../../db/schema.ts';
import { newId } from '../../ids.ts';
import { labelsContain } from '../../resources/labels.ts';
import { expiryStatus, iso, isoOrNull } from '../../resources/timestamps.ts';

export interface NewIpRule {
  type: string;
  value: string;
  valueKey: string;
  action: string;
  note: string;
  expiresAt: Date | null;
  labels: Record<string, string>;
}

export function toIpRule(row: IpAccessRuleRow) {
  return {
    id: row.id,
    site_id: row.site_id,
    type: row.type as 'ip' | 'cidr' | 'asn' | 'country',
    value: row.value,
    action: row.action as 'deny' | 'allow' | 'challenge',
    note: row.note,
    expires_at: isoOrNull(row.expires_at),
    status: expiryStatus(row.expires_at),
    labels: row.labels,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export interface IpRuleListQuery {
  siteId: string;
  after: string | null;
  limit: number;
  labels?: Record<string, string> | undefined;
  types?: string[] | undefined;
  actions?: string[] | undefined;
}

export async function listIpRules(db: Db, q: IpRuleListQuery): Promise<IpAccessRuleRow[]> {
  let query = db.selectFrom('ip_access_rules').selectAll().where('site_id', '=', q.siteId);
  if (q.after) query = query.where('id', '<', q.after);
  if (q.labels) query = query.where(labelsContain('labels', q.labels));
  if (q.types) query = query.where('type', 'in', q.types);
  if (q.actions) query = query.where('action', 'in', q.actions);
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}

export async function findIpRule(db: Db, siteId: string, id: string): Promise<IpAccessRuleRow | undefined> {
  return db.selectFrom('ip_access_rules').selectAll().where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
}

/** Which of these `type`/canonical-value pairs the site already has a rule for. */
export async function existingRuleKeys(db: Db, siteId: string, keys: readonly { type: string; valueKey: string }[]): Promise<Set<string>> {
  const found = new Set<string>();
  if (keys.length === 0) return found;
  const rows = await db
    .selectFrom('ip_access_rules')
    .select(['type', 'value_key'])
    .where('site_id', '=', siteId)
    .where('value_key', '=', sql<string>`any(${[...new Set(keys.map((k) => k.valueKey))]}::text[])`)
    .execute();
  for (const row of rows) found.add(ruleKey(row.type, row.value_key));
  return found;
}

export const ruleKey = (type: string, valueKey: string) => `${type}\u0000${valueKey}`;

function toRow(orgId: string, siteId: string, rule: NewIpRule) {
  return {
    id: newId('ipr'),
    org_id: orgId,
    site_id: siteId,
    type: rule.type,
    value: rule.value,
    value_key: rule.valueKey,
    action: rule.action,
    note: rule.note,
    expires_at: rule.expiresAt,
    labels: JSON.stringify(rule.labels),
  };
}

export async function insertIpRule(db: Db, orgId: string, siteId: string, rule: NewIpRule): Promise<IpAccessRuleRow> {
  return db.insertInto('ip_access_rules').values(toRow(orgId, siteId, rule)).returningAll().executeTakeFirstOrThrow();
}

/**
 * Inserts many rules and returns how many went in: a rule whose type and value the site already
 * has is skipped by the unique index. Each batch is one statement whose columns arrive as arrays
 * and are unnested server-side, a handful of parameters instead of ten per row: that is what makes
 * a 100 000-row import take seconds. The caller's transaction makes the whole set atomic.
 */
export async function insertIpRulesBulk(db: Db, orgId: string, siteId: string, rules: readonly NewIpRule[]): Promise<number> {
  const BATCH = 10_000;
  let inserted = 0;
  for (let i = 0; i < rules.length; i += BATCH) {
    const batch = rules.slice(i, i + BATCH);
    const result = await sql<{ n: number }>`
      with added as (
        insert into ip_access_rules (id, org_id, site_id, type, value, value_key, action, note, expires_at, labels)
        select id, ${orgId}, ${siteId}, type, value, value_key, action, note, expires_at, labels
        from unnest(
          ${batch.map(() => newId('ipr'))}::text[], ${batch.map((r) => r.type)}::text[], ${batch.map((r) => r.value)}::text[],
          ${batch.map((r) => r.valueKey)}::text[], ${batch.map((r) => r.action)}::text[], ${batch.map((r) => r.note)}::text[],
          ${batch.map((r) => r.expiresAt?.toISOString() ?? null)}::timestamptz[], ${batch.map((r) => JSON.stringify(r.labels))}::jsonb[]
        ) as t(id, type, value, value_key, action, note, expires_at, labels)
        on conflict (site_id, type, value_key) do nothing
        returning 1
      )
      select count(*)::int as n from added`.execute(db);
    inserted += result.rows[0]?.n ?? 0;
  }
  return inserted;
}

export interface IpRuleChanges {
  action?: string | undefined;
  note?: string | undefined;
  expiresAt?: Date | null | undefined;
  labels?: Record<string, string> | undefined;
}

export async function updateIpRule(db: Db, siteId: string, id: string, changes: IpRuleChanges): Promise<IpAccessRuleRow | undefined> {
  return db
    .updateTable('ip_access_rules')
    .set({
      ...(changes.action !== undefined ? { action: changes.action } : {}),
      ...(changes.note !== undefined ? { note: changes.note } : {}),
      ...(changes.expiresAt !== undefined ? { expires_at: changes.expiresAt } : {}),
      ...(changes.labels !== undefined ? { labels: JSON.stringify(changes.labels) } : {}),
      updated_at: sql<Date>`now()`,
    })
    .where('site_id', '=', siteId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteIpRule(db: Db, siteId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('ip_access_rules').where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
