// Emptying a sandbox (DELETE /api/v1/sandbox/data): every row the test environment owns goes, in
// one transaction, except its API keys (the caller's among them) and the sandbox row itself (with
// its targets). Tables are named, not discovered, so a reset never touches a table by accident; the
// sandbox test checks this list against every table with an `org_id` column, so a new
// environment-owned table cannot be forgotten.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import type { Database } from '../../platform/db/schema.ts';

/** Tables whose rows belong to one environment's data space (`org_id`); children go with parents by cascade too. */
export const ENVIRONMENT_TABLES = [
  'webhook_deliveries',
  'webhooks',
  'events',
  'config_repo_syncs',
  'config_repos',
  'vulnerability_tickets',
  'pull_request_checks',
  'attack_surface_runs',
  'attack_surface_assets',
  'integrations',
  'ai_usage',
  'scan_schedules',
  'vulnerabilities',
  'scans',
  'jobs',
  'virtual_patches',
  'ip_access_rules',
  'rate_limit_rules',
  'shield_schema_configs',
  'shield_schemas',
  'shield_alert_windows',
  'shield_certificate_orders',
  'shield_certificates',
  'shield_events',
  'shield_sites',
  'audit_events',
  'idempotency_keys',
] as const satisfies readonly (keyof Database)[];

/** Tables with an `org_id` a reset keeps: the sandbox's keys, and organisation-level ones (never sandbox rows). */
export const KEPT_TABLES = ['api_keys', 'memberships', 'invites', 'sessions', 'sso_connections', 'auth_flows', 'saml_assertions', 'stripe_events', 'organization_domains'] as const;

export async function resetSandbox(trx: Db, dataSpace: string): Promise<Record<string, number>> {
  const deleted: Record<string, number> = {};
  // Per-minute rollups name sites, not organisations.
  const rollups = await sql`delete from shield_event_rollups where site_id in (select id from shield_sites where org_id = ${dataSpace})`.execute(trx);
  deleted.shield_event_rollups = Number(rollups.numAffectedRows ?? 0);
  for (const table of ENVIRONMENT_TABLES) {
    const result = await sql`delete from ${sql.table(table)} where org_id = ${dataSpace}`.execute(trx);
    deleted[table] = (deleted[table] ?? 0) + Number(result.numAffectedRows ?? 0);
  }
  return deleted;
}
