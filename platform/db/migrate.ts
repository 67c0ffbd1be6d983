// Versioned migrations, applied in name order at start-up and by `aegis migrate`. The list is
// static imports rather than a directory scan so that it works the same from any working directory.
import { Migrator, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';
import type { Db } from './database.ts';
import * as foundation from './migrations/0001_foundation.ts';
import * as managedResources from './migrations/0002_managed_resources.ts';
import * as shieldConfigVersions from './migrations/0003_shield_config_versions.ts';
import * as shieldEvents from './migrations/0004_shield_events.ts';
import * as jobs from './migrations/0005_jobs.ts';
import * as scans from './migrations/0006_scans.ts';
import * as configRepos from './migrations/0007_config_repos.ts';
import * as findingVerification from './migrations/0008_finding_verification.ts';
import * as shieldInspection from './migrations/0009_shield_inspection.ts';
import * as ipRulesSiteCheck from './migrations/0010_ip_rules_site_check.ts';
import * as people from './migrations/0011_people.ts';
import * as events from './migrations/0012_events.ts';
import * as billing from './migrations/0013_billing.ts';
import * as sandbox from './migrations/0014_sandbox.ts';
import * as integrations from './migrations/0015_integrations.ts';
import * as triageAndAttackSurface from './migrations/0016_triage_and_attack_surface.ts';
import * as identityBoundaries from './migrations/0017_identity_boundaries.ts';
import * as shieldEdge from './migrations/0018_shield_edge.ts';
import * as managedRuleScores from './migrations/0019_managed_rule_scores.ts';
import * as shieldTraffic from './migrations/0020_shield_traffic.ts';
import * as configRepoImpact from './migrations/0021_config_repo_impact.ts';
import * as shieldTrafficColumns from './migrations/0022_shield_traffic_columns.ts';

const migrations: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_managed_resources': managedResources,
  '0003_shield_config_versions': shieldConfigVersions,
  '0004_shield_events': shieldEvents,
  '0005_jobs': jobs,
  '0006_scans': scans,
  '0007_config_repos': configRepos,
  '0008_finding_verification': findingVerification,
  '0009_shield_inspection': shieldInspection,
  '0010_ip_rules_site_check': ipRulesSiteCheck,
  '0011_people': people,
  '0012_events': events,
  '0013_billing': billing,
  '0014_sandbox': sandbox,
  '0015_integrations': integrations,
  '0016_triage_and_attack_surface': triageAndAttackSurface,
  '0017_identity_boundaries': identityBoundaries,
  '0018_shield_edge': shieldEdge,
  '0019_managed_rule_scores': managedRuleScores,
  '0020_shield_traffic': shieldTraffic,
  '0021_config_repo_impact': configRepoImpact,
  '0022_shield_traffic_columns': shieldTrafficColumns,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Every migration this code knows, oldest first (backups refuse a database migrated past the last). */
export const MIGRATION_NAMES: readonly string[] = Object.keys(migrations);

// Kysely's Migrator serialises runs across processes: on PostgreSQL (and PGlite, which uses the same
// PostgresAdapter) it holds a session-level pg_advisory_lock on one connection while it reads what
// is applied and applies the rest in one transaction (test/ops/migrations.test.ts shows it).
const migrator = (db: Db) => new Migrator({ db, provider, migrationTableName: 'aegis_migrations', migrationLockTableName: 'aegis_migrations_lock' });

export async function migrateToLatest(db: Db): Promise<string[]> {
  return applied(await migrator(db).migrateToLatest());
}

/** Up (or down) to `name` exactly: the upgrade tests build the previous release's schema with it. */
export async function migrateTo(db: Db, name: string): Promise<string[]> {
  if (!MIGRATION_NAMES.includes(name)) throw new Error(`no migration named ${name}`);
  return applied(await migrator(db).migrateTo(name));
}

function applied(result: MigrationResultSet): string[] {
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${String(result.error instanceof Error ? result.error.message : result.error)}`);
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
