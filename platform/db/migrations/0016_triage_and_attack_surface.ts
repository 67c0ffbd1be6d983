import { sql, type Kysely } from 'kysely';

// The last two connection kinds of spec 5.5 (docs/triage.md, docs/attack-surface.md):
//   - `ai` connections (OpenAI-compatible, Anthropic) hold the customer's sealed API key; a finding
//     keeps its latest triage in `vulnerabilities.triage`; `ai_usage` counts, per organisation and
//     month, the tokens spent with the customer's provider and the triages of the bundled fallback,
//     which is what budgets and quotas are checked against.
//   - `cloud` connections (AWS: a read-only role assumed with an external id) feed the attack-surface
//     inventory: one row per public endpoint a discovery found, with when it was first and last seen
//     and `gone_at` once a later discovery of that service and region no longer finds it. Each
//     discovery is a run with what it added, kept and removed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table integrations drop constraint if exists integrations_kind_check`.execute(db);
  await sql`alter table integrations add constraint integrations_kind_check check (kind in ('source_control', 'ticket_tracker', 'ai', 'cloud'))`.execute(db);
  // `role`: an assumed cloud role (no token of ours is stored, only the role and its external id).
  await sql`alter table integrations drop constraint if exists integrations_auth_type_check`.execute(db);
  await sql`alter table integrations add constraint integrations_auth_type_check check (auth_type in ('oauth', 'token', 'role'))`.execute(db);

  await db.schema.alterTable('vulnerabilities').addColumn('triage', 'jsonb').execute();

  await db.schema
    .createTable('ai_usage')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    // The first day of the month (UTC) the usage counts against.
    .addColumn('month', 'date', (c) => c.notNull())
    .addColumn('tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('triages', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('fallback_triages', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('ai_usage_pkey', ['org_id', 'month'])
    .execute();

  await db.schema
    .createTable('attack_surface_assets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('integration_id', 'text', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    // A DNS name (lower case, no trailing dot) or an IP address.
    .addColumn('host', 'text', (c) => c.notNull())
    // The cloud resource that exposes it: an ARN, or the provider's id.
    .addColumn('resource_id', 'text', (c) => c.notNull())
    .addColumn('resource_name', 'text')
    // Null for global services (CloudFront, Route 53).
    .addColumn('region', 'text')
    // The discovery scope that saw it (`elbv2:eu-west-1`): a later run of that scope decides whether it is gone.
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('details', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('first_seen_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('gone_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('attack_surface_assets_identity_idx').on('attack_surface_assets').columns(['integration_id', 'kind', 'resource_id', 'host']).unique().execute();
  await db.schema.createIndex('attack_surface_assets_org_idx').on('attack_surface_assets').columns(['org_id', 'id']).execute();
  await db.schema.createIndex('attack_surface_assets_host_idx').on('attack_surface_assets').columns(['org_id', 'host']).execute();

  await db.schema
    .createTable('attack_surface_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('integration_id', 'text', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('queued', 'running', 'completed', 'failed')`))
    .addColumn('trigger', 'text', (c) => c.notNull().check(sql`trigger in ('schedule', 'manual', 'connect')`))
    .addColumn('job_id', 'text')
    // { total, added, removed, unchanged } once completed.
    .addColumn('counts', 'jsonb')
    // Scopes that failed ({ scope, code, message }): their assets were left as they were.
    .addColumn('errors', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('attack_surface_runs_integration_idx').on('attack_surface_runs').columns(['integration_id', 'created_at']).execute();
  await db.schema.createIndex('attack_surface_runs_org_idx').on('attack_surface_runs').columns(['org_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('attack_surface_runs').execute();
  await db.schema.dropTable('attack_surface_assets').execute();
  await db.schema.dropTable('ai_usage').execute();
  await db.schema.alterTable('vulnerabilities').dropColumn('triage').execute();
  await sql`delete from integrations where kind in ('ai', 'cloud') or auth_type = 'role'`.execute(db);
  await sql`alter table integrations drop constraint integrations_auth_type_check`.execute(db);
  await sql`alter table integrations add constraint integrations_auth_type_check check (auth_type in ('oauth', 'token'))`.execute(db);
  await sql`alter table integrations drop constraint integrations_kind_check`.execute(db);
  await sql`alter table integrations add constraint integrations_kind_check check (kind in ('source_control', 'ticket_tracker'))`.execute(db);
}
