// IP access rules in the database.
import { sql } from 'kysely';
import { copyField, CopyText, type CopyIn } from '../../../platform/db/copy.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { IpAccessRuleRow } from '../../../platform/db/schema.ts';
import { newId } from '../../../platform/ids.ts';
import { labelsContain } from '../../../platform/resources/labels.ts';
import { expiryStatus, iso, isoOrNull } from '../../../platform/resources/timestamps.ts';
import { deleteSiteRules, inGivenOrder } from '../rule-rows.ts';
import { livemodeOf } from '../../../platform/db/environments.ts';

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
    livemode: livemodeOf(row.org_id),
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

/** A rule of a bulk insert, with the caller's reference for it (a CSV import uses the record index). */
export interface StagedIpRule {
  ref: number;
  rule: NewIpRule;
}

export interface BulkInsertOutcome {
  created: number;
  /**
   * The refs of rules not inserted, in ref order: the site already has a rule of that type and
   * value, or an earlier rule of the same call (by ref) has them.
   */
  clashing: number[];
}

const STAGING_COLUMNS = ['ref', 'id', 'type', 'value', 'value_key', 'action', 'note', 'expires_at', 'labels'] as const;
const NO_LABELS = '{}';
const UNIQUE_VIOLATION = '23505';

const TABLE_COLUMNS = ['org_id', 'site_id', 'id', 'type', 'value', 'value_key', 'action', 'note', 'expires_at', 'labels'] as const;

/**
 * The rules as COPY text, in chunks: each row `lead` (the staging table's ref, or the table's org and
 * site) then the rule, as the columns above. Chunks, so that on PostgreSQL the server stores one
 * while the next is written.
 */
function* copyRows(rules: readonly StagedIpRule[], lead: (ref: number) => string): Generator<Uint8Array> {
  const ROWS_PER_CHUNK = 5_000;
  for (let start = 0; start < rules.length; start += ROWS_PER_CHUNK) {
    const text = new CopyText();
    for (const { ref, rule } of rules.slice(start, start + ROWS_PER_CHUNK)) {
      const labels = isEmpty(rule.labels) ? NO_LABELS : copyField(JSON.stringify(rule.labels));
      const expires = rule.expiresAt ? rule.expiresAt.toISOString() : '\\N';
      text.row(`${lead(ref)}\t${newId('ipr')}\t${copyField(rule.type)}\t${copyField(rule.value)}\t${copyField(rule.valueKey)}\t${copyField(rule.action)}\t${copyField(rule.note)}\t${expires}\t${labels}\n`);
    }
    yield text.bytes();
  }
}

function isEmpty(record: Record<string, string>): boolean {
  for (const _ in record) return false;
  return true;
}

/** Without COPY (a Kysely not opened by openDatabase): the staging table filled by batches of arrays. */
async function stageWithArrays(trx: Db, rules: readonly StagedIpRule[]): Promise<void> {
  const BATCH = 10_000;
  for (let i = 0; i < rules.length; i += BATCH) {
    const batch = rules.slice(i, i + BATCH);
    await sql`
      insert into ip_rule_import (ref, id, type, value, value_key, action, note, expires_at, labels)
      select * from unnest(
        ${batch.map((r) => r.ref)}::int[], ${batch.map(() => newId('ipr'))}::text[], ${batch.map((r) => r.rule.type)}::text[],
        ${batch.map((r) => r.rule.value)}::text[], ${batch.map((r) => r.rule.valueKey)}::text[], ${batch.map((r) => r.rule.action)}::text[],
        ${batch.map((r) => r.rule.note)}::text[], ${batch.map((r) => r.rule.expiresAt?.toISOString() ?? null)}::timestamptz[],
        ${batch.map((r) => JSON.stringify(r.rule.labels))}::jsonb[]
      )`.execute(trx);
  }
}

/** Runs `write` in a savepoint: true when it succeeded, false (and undone) when the unique index refused a row. */
async function withoutClash(trx: Db, write: () => Promise<unknown>): Promise<boolean> {
  await sql`savepoint ip_rule_write`.execute(trx);
  try {
    await write();
    await sql`release savepoint ip_rule_write`.execute(trx);
    return true;
  } catch (err) {
    if ((err as { code?: unknown }).code !== UNIQUE_VIOLATION) throw err;
    await sql`rollback to savepoint ip_rule_write`.execute(trx);
    return false;
  }
}

/**
 * Inserts many rules in one statement. With COPY (`copyIn`), optimistically straight into the table:
 * when no rule clashes (the usual case), that is the whole job. Otherwise, and without COPY, the
 * rules are loaded into a staging table that lives until the transaction ends, then moved by one
 * `insert … select` (see below for conflicts): a rule whose type and value
 * the site already has, or that repeats an earlier one of `rules`, is left out by the unique index
 * (so a rule added meanwhile by someone else counts too) and reported by ref; of repeats, the one
 * with the lowest ref goes in. Must run in a transaction (the caller's makes the set atomic).
 */
export async function insertIpRulesBulk(trx: Db, copyIn: CopyIn | null, orgId: string, siteId: string, rules: readonly StagedIpRule[]): Promise<BulkInsertOutcome> {
  if (rules.length === 0) return { created: 0, clashing: [] };
  // Optimistic first, as a plain insert that is the whole job when nothing clashes (the usual case):
  // with COPY straight into the table, else from the staging table. `on conflict do nothing` would
  // cover both cases in one statement, but its speculative insertion makes every row dearer
  // (measured: about 1.6 times the plain insert on the embedded database), so it runs only after a
  // unique violation, which the savepoint undoes.
  if (copyIn) {
    const lead = `${copyField(orgId)}\t${copyField(siteId)}`;
    if (await withoutClash(trx, () => copyIn('ip_access_rules', TABLE_COLUMNS, copyRows(rules, () => lead)))) return { created: rules.length, clashing: [] };
  }
  await sql`
    create temp table ip_rule_import (
      ref int not null, id text not null, type text not null, value text not null, value_key text not null,
      action text not null, note text not null, expires_at timestamptz, labels jsonb not null
    ) on commit drop`.execute(trx);
  if (copyIn) await copyIn('ip_rule_import', STAGING_COLUMNS, copyRows(rules, String));
  else await stageWithArrays(trx, rules);
  const moveRules = (onConflict: boolean) => sql`
    insert into ip_access_rules (id, org_id, site_id, type, value, value_key, action, note, expires_at, labels)
    select id, ${orgId}, ${siteId}, type, value, value_key, action, note, expires_at, labels from ip_rule_import
    ${onConflict ? sql`order by ref on conflict (site_id, type, value_key) do nothing` : sql``}`;
  // After a clash of the COPY the plain insert is known to fail.
  if (!copyIn && (await withoutClash(trx, () => moveRules(false).execute(trx)))) {
    await sql`drop table ip_rule_import`.execute(trx);
    return { created: rules.length, clashing: [] };
  }
  const inserted = await moveRules(true).execute(trx);
  const created = Number(inserted.numAffectedRows ?? 0);
  let clashing: number[] = [];
  if (created < rules.length) {
    const skipped = await sql<{ ref: number }>`
      select ref from ip_rule_import s
      where not exists (select 1 from ip_access_rules r where r.site_id = ${siteId} and r.id = s.id)
      order by ref`.execute(trx);
    clashing = skipped.rows.map((r) => r.ref);
  }
  await sql`drop table ip_rule_import`.execute(trx);
  return { created, clashing };
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

/** Inserts several rules in one statement (no clash handling: check first); returns their rows in the order given. Used by rule batches. */
export async function insertIpRules(db: Db, orgId: string, siteId: string, rules: readonly NewIpRule[]): Promise<IpAccessRuleRow[]> {
  if (rules.length === 0) return [];
  const rows = rules.map((rule) => toRow(orgId, siteId, rule));
  return inGivenOrder(rows, await db.insertInto('ip_access_rules').values(rows).returningAll().execute());
}

/** Deletes several rules of the site in one statement; returns the ids that existed. Used by rule batches. */
export const deleteIpRules = (db: Db, siteId: string, ids: readonly string[]): Promise<Set<string>> => deleteSiteRules(db, 'ip_access_rules', siteId, ids);
