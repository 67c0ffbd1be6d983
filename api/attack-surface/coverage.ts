// Whether something of the organisation already covers an asset's host, computed in SQL when the
// inventory is read, so a Shield site or a schedule made a minute ago counts at once:
//   - Shield: a site whose domain is the host, or whose origin_url points at the host (the asset is
//     behind that site).
//   - Scan: an enabled schedule of a scan that probes a running service (dast, api, cve) whose
//     target URL's host is the host, or such a scan created in the last 30 days.
// Hosts are read out of URLs with PostgreSQL's own string functions (works on PGlite as well):
// the authority after `scheme://`, without user info, port or IPv6 brackets, lower case.
import { sql, type RawBuilder } from 'kysely';

/** Scan types whose target is a URL of a running service. */
export const URL_SCAN_TYPES = ['dast', 'api', 'cve'] as const;
/** How long a finished or running scan counts as covering its host. */
export const RECENT_SCAN_DAYS = 30;

/** The host of a URL column, as the inventory stores hosts. */
export function urlHost(column: string): RawBuilder<string | null> {
  const col = sql.ref(column);
  return sql<string | null>`rtrim(lower(regexp_replace(substring(${col} from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?(\\[[^]/?#]*\\]|[^/?#:]*)'), '^\\[|\\]$', '', 'g')), '.')`;
}

const urlTypes = sql.join(URL_SCAN_TYPES.map((t) => sql.lit(t)));

const recentScan = sql`x.created_at > now() - make_interval(days => ${sql.lit(RECENT_SCAN_DAYS)})`;

/** The covering site, schedule and scan of the asset row aliased `asset` (each null when none). */
export function coverageSelections() {
  return {
    shieldSiteId: sql<string | null>`(select s.id from shield_sites s where s.org_id = asset.org_id and (s.domain = asset.host or ${urlHost('s.origin_url')} = asset.host) order by s.id limit 1)`,
    scanScheduleId: sql<string | null>`(select sc.id from scan_schedules sc where sc.org_id = asset.org_id and sc.enabled and sc.scan_type in (${urlTypes}) and ${urlHost('sc.target')} = asset.host order by sc.id limit 1)`,
    scanId: sql<string | null>`(select x.id from scans x where x.org_id = asset.org_id and x.scan_type in (${urlTypes}) and ${recentScan} and ${urlHost('x.target')} = asset.host order by x.id desc limit 1)`,
  };
}

/** True when anything covers the asset row aliased `asset`. */
export function coveredCondition(): RawBuilder<boolean> {
  const { shieldSiteId, scanScheduleId, scanId } = coverageSelections();
  return sql<boolean>`(${shieldSiteId} is not null or ${scanScheduleId} is not null or ${scanId} is not null)`;
}

/** The enabled schedule that already covers `host` in `orgId`, if any (the one-call schedule refuses a second). */
export function coveringScheduleCondition(orgId: string, host: string): RawBuilder<boolean> {
  return sql<boolean>`org_id = ${orgId} and enabled and scan_type in (${urlTypes}) and ${urlHost('target')} = ${host}`;
}

export type Coverage = {
  covered: boolean;
  shield_site_id: string | null;
  scan_schedule_id: string | null;
  scan_id: string | null;
};

export function toCoverage(row: { shield_site_id: string | null; scan_schedule_id: string | null; scan_id: string | null }): Coverage {
  return {
    covered: row.shield_site_id !== null || row.scan_schedule_id !== null || row.scan_id !== null,
    shield_site_id: row.shield_site_id,
    scan_schedule_id: row.scan_schedule_id,
    scan_id: row.scan_id,
  };
}
