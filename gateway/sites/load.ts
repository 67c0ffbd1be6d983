// Reads what the gateway needs from the database: the per-site version map (bumped by triggers on
// every configuration write, migration 0003) and one site's complete, currently active rule set.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import { environmentOf, inEnvironment, type Environment } from '../../platform/db/environments.ts';
import type { IpAccessRuleRow, RateLimitRuleRow, ShieldSiteRow, VirtualPatchRow } from '../../platform/db/schema.ts';

export interface SiteConfig {
  site: Pick<ShieldSiteRow, 'id' | 'org_id' | 'domain' | 'origin_url' | 'mode' | 'path_case' | 'managed_rules' | 'tls' | 'domain_verified_at'>;
  ipRules: Pick<IpAccessRuleRow, 'id' | 'type' | 'value' | 'action' | 'expires_at'>[];
  patches: Pick<VirtualPatchRow, 'id' | 'url_pattern' | 'method' | 'match_param' | 'match_regex' | 'action' | 'expires_at'>[];
  rateLimits: Pick<RateLimitRuleRow, 'id' | 'identity' | 'url_pattern' | 'method' | 'budget' | 'window_seconds' | 'action' | 'escalate_to_deny_minutes'>[];
  schema: { hash: string; document: string; strictness: string } | null;
}

/** Versions of the sites of one environment: the live gateway never sees a sandbox site, and the reverse. */
export async function loadVersions(db: Db, environment: Environment): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('shield_config_versions as v')
    .innerJoin('shield_sites as s', 's.id', 'v.site_id')
    .select(['v.site_id', 'v.version'])
    .where(inEnvironment('s.org_id', environment))
    .execute();
  return new Map(rows.map((r) => [r.site_id, Number(r.version)]));
}

export async function loadSiteIds(db: Db, environment: Environment): Promise<string[]> {
  return (await db.selectFrom('shield_sites').select('id').where(inEnvironment('org_id', environment)).execute()).map((r) => r.id);
}

/** One site of `environment` with its active rules (expired ones excluded), or null when there is none. */
export async function loadSite(db: Db, siteId: string, environment: Environment): Promise<SiteConfig | null> {
  const active = sql<boolean>`(expires_at is null or expires_at > now())`;
  const [site, ipRules, patches, rateLimits, schema] = await Promise.all([
    db.selectFrom('shield_sites').select(['id', 'org_id', 'domain', 'origin_url', 'mode', 'path_case', 'managed_rules', 'tls', 'domain_verified_at']).where('id', '=', siteId).executeTakeFirst(),
    db.selectFrom('ip_access_rules').select(['id', 'type', 'value', 'action', 'expires_at']).where('site_id', '=', siteId).where(active).orderBy('id').execute(),
    db
      .selectFrom('virtual_patches')
      .select(['id', 'url_pattern', 'method', 'match_param', 'match_regex', 'action', 'expires_at'])
      .where('site_id', '=', siteId)
      .where(active)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('rate_limit_rules')
      .select(['id', 'identity', 'url_pattern', 'method', 'budget', 'window_seconds', 'action', 'escalate_to_deny_minutes'])
      .where('site_id', '=', siteId)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('shield_schemas as s')
      .leftJoin('shield_schema_configs as c', 'c.site_id', 's.site_id')
      .select(['s.hash', 's.document', 'c.strictness'])
      .where('s.site_id', '=', siteId)
      .executeTakeFirst(),
  ]);
  if (!site || environmentOf(site.org_id) !== environment) return null;
  return {
    site,
    ipRules,
    patches,
    rateLimits,
    schema: schema ? { hash: schema.hash, document: schema.document, strictness: schema.strictness ?? 'standard' } : null,
  };
}
