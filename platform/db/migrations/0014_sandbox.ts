import { sql, type Kysely } from 'kysely';

// The sandbox (test mode, DESIGN §7 and docs/sandbox.md). An organisation's test environment is a
// data space of its own: a row in `organizations` whose id is the organisation's with the `sbx_`
// prefix (platform/db/environments.ts), made the first time anyone works in test mode. Every
// organisation-scoped table already keys its rows by `org_id`, so test rows live beside live ones
// under a different owner, and per-organisation uniqueness (a site's domain, idempotency keys)
// becomes per environment with no index changed. `live_org_id` ties the sandbox to its
// organisation (deleting the organisation deletes the sandbox); `sandbox_targets` lists the hosts
// test-mode URL scans may probe.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('organizations')
    .addColumn('live_org_id', 'text', (c) => c.references('organizations.id').onDelete('cascade'))
    .addColumn('sandbox_targets', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute();
  // A session works in one environment of its organisation; the dashboard's toggle switches it.
  await db.schema
    .alterTable('sessions')
    .addColumn('environment', 'text', (c) => c.notNull().defaultTo('live').check(sql`environment in ('live', 'test')`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('environment').execute();
  await sql`delete from organizations where live_org_id is not null`.execute(db);
  await db.schema.alterTable('organizations').dropColumn('sandbox_targets').dropColumn('live_org_id').execute();
}
