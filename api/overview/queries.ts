// The counts behind GET /api/v1/overview, each one aggregate query over the caller's data space.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';

export const RECENT_SCANS = 8;
const TOP_SITES = 10;
const DAY_MS = 86_400_000;

/** pg returns counts and sums as strings (bigint/numeric); PGlite may give numbers. */
const num = (value: string | number | bigint | null | undefined): number => (value === null || value === undefined ? 0 : Number(value));

export async function findingCounts(db: Db, orgId: string, now: Date) {
  const ago = (days: number) => new Date(now.getTime() - days * DAY_MS);
  const open = sql<boolean>`(status in ('open', 'acknowledged') and not false_positive)`;
  const openAnd = (condition: ReturnType<typeof sql>) => sql<string | number>`count(*) filter (where ${open} and ${condition})`;
  const row = await db
    .selectFrom('vulnerabilities')
    .select([
      sql<string | number>`count(*)`.as('total'),
      sql<string | number>`count(*) filter (where ${open})`.as('open'),
      openAnd(sql`severity = 'critical'`).as('critical'),
      openAnd(sql`severity = 'high'`).as('high'),
      openAnd(sql`severity = 'medium'`).as('medium'),
      openAnd(sql`severity = 'low'`).as('low'),
      openAnd(sql`severity = 'info'`).as('info'),
      openAnd(sql`first_seen_at > ${ago(7)}`).as('under_7'),
      openAnd(sql`first_seen_at <= ${ago(7)} and first_seen_at > ${ago(30)}`).as('d7_30'),
      openAnd(sql`first_seen_at <= ${ago(30)} and first_seen_at > ${ago(90)}`).as('d30_90'),
      openAnd(sql`first_seen_at <= ${ago(90)}`).as('over_90'),
    ])
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return {
    total: num(row.total),
    open: num(row.open),
    by_severity: { critical: num(row.critical), high: num(row.high), medium: num(row.medium), low: num(row.low), info: num(row.info) },
    by_age: { under_7_days: num(row.under_7), days_7_to_30: num(row.d7_30), days_30_to_90: num(row.d30_90), over_90_days: num(row.over_90) },
  };
}

export async function recentScans(db: Db, orgId: string) {
  const [counts, recent] = await Promise.all([
    db
      .selectFrom('scans')
      .select([sql<string | number>`count(*)`.as('total'), sql<string | number>`count(*) filter (where status in ('queued', 'running'))`.as('active')])
      .where('org_id', '=', orgId)
      .executeTakeFirstOrThrow(),
    db.selectFrom('scans').selectAll().where('org_id', '=', orgId).orderBy('id', 'desc').limit(RECENT_SCANS).execute(),
  ]);
  return { total: num(counts.total), active: num(counts.active), recent };
}

/** Blocks over the 24 hours before `now` (from the minute 24 h ago), from the per-minute rollups. */
export async function shieldBlocks(db: Db, orgId: string, now: Date) {
  const since = new Date(Math.floor((now.getTime() - DAY_MS) / 60_000) * 60_000);
  const blocked = sql<string | number>`coalesce(sum(r.requests) filter (where r.action = 'block'), 0)`;
  const requests = sql<string | number>`coalesce(sum(r.requests), 0)`;
  const perSite = () =>
    db
      .selectFrom('shield_sites as s')
      .leftJoin('shield_event_rollups as r', (join) => join.onRef('r.site_id', '=', 's.id').on('r.minute', '>=', since).on('r.minute', '<=', now))
      .where('s.org_id', '=', orgId);
  const [totals, sites] = await Promise.all([
    perSite().select([blocked.as('blocked'), requests.as('requests'), sql<string | number>`count(distinct s.id)`.as('sites')]).executeTakeFirstOrThrow(),
    perSite()
      .select(['s.id', 's.domain', 's.mode', blocked.as('blocked'), requests.as('requests')])
      .groupBy(['s.id', 's.domain', 's.mode'])
      .orderBy(blocked, 'desc')
      .orderBy('s.domain')
      .limit(TOP_SITES)
      .execute(),
  ]);
  return {
    since: since.toISOString(),
    until: now.toISOString(),
    blocked: num(totals.blocked),
    requests: num(totals.requests),
    sites_total: num(totals.sites),
    sites: sites.map((s) => ({ id: s.id, domain: s.domain, mode: s.mode, blocked: num(s.blocked), requests: num(s.requests) })),
  };
}
