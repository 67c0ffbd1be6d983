import { sql, type Kysely } from 'kysely';

// The gateway learns of configuration changes by polling one small table: every write to a site or
// any of its rules bumps that site's version, in the same transaction, through statement-level
// triggers. Triggers rather than application code, so no write path (route, CSV import, cascade
// from a site deletion, the expiry sweep) can forget; statement-level, so a 100 000-row import
// costs one upsert, not 100 000.
const RULE_TABLES = ['virtual_patches', 'ip_access_rules', 'rate_limit_rules', 'shield_schema_configs', 'shield_schemas'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('shield_config_versions')
    .addColumn('site_id', 'text', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
  await sql`create sequence shield_config_version_seq`.execute(db);

  for (const [name, column] of [['shield_config_touch_rules', 'site_id'], ['shield_config_touch_sites', 'id']] as const) {
    await sql`
      create function ${sql.raw(name)}() returns trigger language plpgsql as $$
      begin
        insert into shield_config_versions (site_id, version)
          select s.site_id, nextval('shield_config_version_seq')
          from (select distinct ${sql.raw(column)} as site_id from changed_rows) s
        on conflict (site_id) do update set version = excluded.version;
        return null;
      end $$`.execute(db);
  }

  const triggers = [...RULE_TABLES.map((table) => [table, 'shield_config_touch_rules'] as const), ['shield_sites', 'shield_config_touch_sites'] as const];
  for (const [table, fn] of triggers) {
    for (const [event, transition] of [['insert', 'new'], ['update', 'new'], ['delete', 'old']] as const) {
      await sql`
        create trigger ${sql.raw(`${table}_${event}_version`)} after ${sql.raw(event)} on ${sql.raw(table)}
        referencing ${sql.raw(transition)} table as changed_rows
        for each statement execute function ${sql.raw(fn)}()`.execute(db);
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [...RULE_TABLES, 'shield_sites']) {
    for (const event of ['insert', 'update', 'delete']) await sql`drop trigger ${sql.raw(`${table}_${event}_version`)} on ${sql.raw(table)}`.execute(db);
  }
  await sql`drop function shield_config_touch_rules()`.execute(db);
  await sql`drop function shield_config_touch_sites()`.execute(db);
  await sql`drop sequence shield_config_version_seq`.execute(db);
  await db.schema.dropTable('shield_config_versions').execute();
}
