// Shield sites in the database.
import { sql } from 'kysely';
import type { Db } from '../../../platform/db/database.ts';
import type { ManagedRulesSettings, ShieldSiteRow, SiteTlsSettings } from '../../../platform/db/schema.ts';
import { notFound } from '../../../platform/http/errors.ts';
import { newId } from '../../../platform/ids.ts';
import { jsonColumns } from '../../../platform/resources/json-columns.ts';
import { labelsContain } from '../../../platform/resources/labels.ts';
import { iso } from '../../../platform/resources/timestamps.ts';
import { livemodeOf } from '../../../platform/db/environments.ts';

export interface SiteFields {
  domain: string;
  origin_url: string;
  mode: string;
  path_case: string;
  managed_rules: ManagedRulesSettings;
  tls: SiteTlsSettings;
  labels: Record<string, string>;
}

/** What a site gets when its creator says nothing about managed rules (existing sites: migration 0009). */
export const MANAGED_RULES_DEFAULT: ManagedRulesSettings = { enabled: true, paranoia_level: 1, exclusions: [] };

export interface SiteListQuery {
  orgId: string;
  after: string | null;
  limit: number;
  labels?: Record<string, string> | undefined;
  modes?: string[] | undefined;
  domains?: string[] | undefined;
}

export function toSite(row: ShieldSiteRow) {
  return {
    id: row.id,
    livemode: livemodeOf(row.org_id),
    domain: row.domain,
    origin_url: row.origin_url,
    mode: row.mode as 'log' | 'block' | 'challenge',
    path_case: row.path_case as 'insensitive' | 'sensitive',
    managed_rules: row.managed_rules,
    tls: row.tls,
    labels: row.labels,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export async function listSites(db: Db, q: SiteListQuery): Promise<ShieldSiteRow[]> {
  let query = db.selectFrom('shield_sites').selectAll().where('org_id', '=', q.orgId);
  if (q.after) query = query.where('id', '<', q.after);
  if (q.labels) query = query.where(labelsContain('labels', q.labels));
  if (q.modes) query = query.where('mode', 'in', q.modes);
  if (q.domains) query = query.where('domain', 'in', q.domains);
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}

export async function findSite(db: Db, orgId: string, id: string): Promise<ShieldSiteRow | undefined> {
  return db.selectFrom('shield_sites').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

/** The site a rule route addresses; another organisation's site is a 404 like a missing one. */
export async function requireSite(db: Db, orgId: string, id: string): Promise<ShieldSiteRow> {
  const site = await findSite(db, orgId, id);
  if (!site) throw notFound('Shield site');
  return site;
}

export async function domainTaken(db: Db, orgId: string, domain: string): Promise<boolean> {
  const row = await db.selectFrom('shield_sites').select('id').where('org_id', '=', orgId).where('domain', '=', domain).executeTakeFirst();
  return row !== undefined;
}

export async function insertSite(db: Db, orgId: string, fields: SiteFields): Promise<ShieldSiteRow> {
  return db
    .insertInto('shield_sites')
    .values({ id: newId('site'), org_id: orgId, ...jsonColumns(fields, ['labels', 'managed_rules', 'tls']) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateSite(db: Db, orgId: string, id: string, changes: Partial<Omit<SiteFields, 'domain'>>): Promise<ShieldSiteRow | undefined> {
  return db
    .updateTable('shield_sites')
    .set({ ...jsonColumns(changes, ['labels', 'managed_rules', 'tls']), updated_at: sql<Date>`now()` })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Deletes the site; its rules, schema, settings and certificate go with it (foreign keys cascade),
 * and its domain is free for others. Its traffic record has no foreign key (a partitioned table at
 * the gateway's write rate), so it is deleted here: a deleted site's requests are not kept for days.
 */
export async function deleteSite(db: Db, orgId: string, id: string): Promise<ShieldSiteRow | undefined> {
  const deleted = await db.deleteFrom('shield_sites').where('org_id', '=', orgId).where('id', '=', id).returningAll().executeTakeFirst();
  if (deleted) await db.deleteFrom('shield_traffic').where('site_id', '=', deleted.id).execute();
  return deleted;
}
