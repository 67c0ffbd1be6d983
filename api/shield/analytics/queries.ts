// The reads behind GET /api/v1/shield/sites/:id/analytics. Counts come from the per-minute rollups,
// which hold every decision (sampled-out allows included); the top lists come from the stored
// events. The recorder writes both in one transaction, so for any minute-aligned range the rollups'
// `recorded` equals the number of rows in shield_events exactly.
import { sql } from 'kysely';
import type { Db } from '../../../platform/db/database.ts';
import type { DecisionAction } from '../../../gateway/decision.ts';

export const ACTIONS = ['allow', 'block', 'challenge', 'log'] as const satisfies readonly DecisionAction[];
export const TOP_LIMIT = 10;

export type Granularity = 'minute' | 'hour' | 'day';

export const BUCKET_MS: Record<Granularity, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

export interface AnalyticsRange {
  siteId: string;
  orgId: string;
  /** Inclusive. */
  start: Date;
  /** Exclusive. */
  end: Date;
  granularity: Granularity;
}

export type ActionCounts = Record<DecisionAction, number> & { requests: number };

// Type aliases, not interfaces: the route's inferred response type needs their index signature.
export type SeriesPoint = ActionCounts & { start: string };

export interface Totals {
  /** Every decision observed. */
  observed: ActionCounts;
  /** Of those, the decisions stored in shield_events. */
  recorded: ActionCounts;
  series: SeriesPoint[];
}

export type TopLists = {
  client_ips: { client_ip: string; count: number }[];
  paths: { path: string; count: number }[];
  rules: { rule_kind: string; rule_id: string | null; count: number }[];
  asns: { asn: number; count: number }[];
};

const zero = (): ActionCounts => ({ requests: 0, allow: 0, block: 0, challenge: 0, log: 0 });

const isAction = (value: string): value is DecisionAction => (ACTIONS as readonly string[]).includes(value);

/** pg returns sums (numeric) as strings and counts as numbers; PGlite may differ. */
const num = (value: string | number | bigint | null): number => (value === null ? 0 : Number(value));

export async function totalsAndSeries(db: Db, range: AnalyticsRange): Promise<Totals> {
  const bucketSeconds = BUCKET_MS[range.granularity] / 1000;
  // Epoch arithmetic rather than date_trunc: date_trunc on timestamptz follows the session's time
  // zone, and the buckets must be UTC hours and days. The width is one of two constants, not input.
  const bucket = sql<string | number>`floor(extract(epoch from minute) / ${sql.lit(bucketSeconds)})`;
  const rows = await db
    .selectFrom('shield_event_rollups')
    .select([bucket.as('bucket'), 'action', sql<string | number>`sum(requests)`.as('requests'), sql<string | number>`sum(recorded)`.as('recorded')])
    .where('site_id', '=', range.siteId)
    .where('minute', '>=', range.start)
    .where('minute', '<', range.end)
    .groupBy([bucket, 'action'])
    .execute();

  // Every bucket of the range is present, zeros included, so that a chart needs no gap filling.
  const width = BUCKET_MS[range.granularity];
  const points = new Map<number, SeriesPoint>();
  for (let t = range.start.getTime(); t < range.end.getTime(); t += width) points.set(t, { start: new Date(t).toISOString(), ...zero() });

  const observed = zero();
  const recorded = zero();
  for (const row of rows) {
    // Unknown actions cannot be written by the recorder; skipping them keeps the sums well-defined.
    if (!isAction(row.action)) continue;
    const requests = num(row.requests);
    const stored = num(row.recorded);
    observed[row.action] += requests;
    observed.requests += requests;
    recorded[row.action] += stored;
    recorded.requests += stored;
    const point = points.get(num(row.bucket) * width);
    if (point) {
      point[row.action] += requests;
      point.requests += requests;
    }
  }
  return { observed, recorded, series: [...points.values()] };
}

export async function topLists(db: Db, range: AnalyticsRange): Promise<TopLists> {
  const events = () =>
    db
      .selectFrom('shield_events')
      .where('site_id', '=', range.siteId)
      .where('org_id', '=', range.orgId)
      .where('occurred_at', '>=', range.start)
      .where('occurred_at', '<', range.end);
  const count = sql<string | number>`count(*)`;

  const [ips, paths, rules, asns] = await Promise.all([
    events().select(['client_ip', count.as('count')]).groupBy('client_ip').orderBy('count', 'desc').orderBy('client_ip').limit(TOP_LIMIT).execute(),
    events().select(['path', count.as('count')]).groupBy('path').orderBy('count', 'desc').orderBy('path').limit(TOP_LIMIT).execute(),
    events()
      .select(['rule_kind', 'rule_id', count.as('count')])
      .where('rule_kind', 'is not', null)
      .groupBy(['rule_kind', 'rule_id'])
      .orderBy('count', 'desc')
      .orderBy('rule_kind')
      .orderBy('rule_id')
      .limit(TOP_LIMIT)
      .execute(),
    events().select(['asn', count.as('count')]).where('asn', 'is not', null).groupBy('asn').orderBy('count', 'desc').orderBy('asn').limit(TOP_LIMIT).execute(),
  ]);

  return {
    client_ips: ips.map((r) => ({ client_ip: r.client_ip, count: num(r.count) })),
    paths: paths.map((r) => ({ path: r.path, count: num(r.count) })),
    rules: rules.flatMap((r) => (r.rule_kind === null ? [] : [{ rule_kind: r.rule_kind, rule_id: r.rule_id, count: num(r.count) }])),
    asns: asns.flatMap((r) => (r.asn === null ? [] : [{ asn: r.asn, count: num(r.count) }])),
  };
}
