import { sql, type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely } from 'kysely';

// Columns every managed object has: identity, owner organisation, labels, timestamps. Rules hang
// off a site, which already ties them to the organisation (and cascades its deletion), so they skip
// the second foreign key: one check per inserted row instead of two, on imports of 100 000 rows.
type Table = CreateTableBuilder<string, string>;

function managed(table: Table, { siteOwned = false } = {}): Table {
  return table
    .addColumn('org_id', 'text', (c) => (siteOwned ? c.notNull() : c.notNull().references('organizations.id').onDelete('cascade')))
    .addColumn('labels', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`));
}

const siteRef = (c: ColumnDefinitionBuilder) => c.notNull().references('shield_sites.id').onDelete('cascade');

export async function up(db: Kysely<unknown>): Promise<void> {
  await managed(
    db.schema
      .createTable('shield_sites')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('domain', 'text', (c) => c.notNull())
      .addColumn('origin_url', 'text', (c) => c.notNull())
      .addColumn('mode', 'text', (c) => c.notNull()),
  )
    .addUniqueConstraint('shield_sites_domain_unique', ['org_id', 'domain'])
    .execute();
  await db.schema.createIndex('shield_sites_org_idx').on('shield_sites').columns(['org_id', 'id']).execute();

  await managed(
    db.schema
      .createTable('virtual_patches')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('site_id', 'text', siteRef)
      .addColumn('url_pattern', 'text', (c) => c.notNull())
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('match_param', 'text', (c) => c.notNull())
      .addColumn('match_regex', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('expires_in_days', 'integer')
      .addColumn('expires_at', 'timestamptz')
      .addColumn('source_finding_id', 'text'),
    { siteOwned: true },
  ).execute();
  await db.schema.createIndex('virtual_patches_site_idx').on('virtual_patches').columns(['site_id', 'id']).execute();

  // Keyed by (site_id, id): the key doubles as the index for a site's rules in id order, one index
  // fewer to maintain on bulk imports.
  await managed(
    db.schema
      .createTable('ip_access_rules')
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('site_id', 'text', siteRef)
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      // Canonical form of value (compressed lowercase IPv6, upper-case AS/country) for uniqueness.
      .addColumn('value_key', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('note', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('expires_at', 'timestamptz'),
    { siteOwned: true },
  )
    .addPrimaryKeyConstraint('ip_access_rules_pk', ['site_id', 'id'])
    .addUniqueConstraint('ip_access_rules_unique', ['site_id', 'type', 'value_key'])
    .execute();

  await managed(
    db.schema
      .createTable('rate_limit_rules')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('site_id', 'text', siteRef)
      .addColumn('identity', 'text', (c) => c.notNull())
      .addColumn('url_pattern', 'text', (c) => c.notNull())
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('budget', 'integer', (c) => c.notNull())
      .addColumn('window_seconds', 'integer', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('escalate_to_deny_minutes', 'integer', (c) => c.notNull().defaultTo(0)),
    { siteOwned: true },
  ).execute();
  await db.schema.createIndex('rate_limit_rules_site_idx').on('rate_limit_rules').columns(['site_id', 'id']).execute();

  // One row per site that has had its schema settings touched; strictness defaults to standard.
  await managed(
    db.schema
      .createTable('shield_schema_configs')
      .addColumn('site_id', 'text', (c) => c.primaryKey().references('shield_sites.id').onDelete('cascade'))
      .addColumn('strictness', 'text', (c) => c.notNull().defaultTo('standard')),
    { siteOwned: true },
  ).execute();

  await db.schema
    .createTable('shield_schemas')
    .addColumn('site_id', 'text', (c) => c.primaryKey().references('shield_sites.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('openapi_version', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('operations', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await managed(
    db.schema
      .createTable('scan_schedules')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('scan_type', 'text', (c) => c.notNull())
      .addColumn('target', 'text', (c) => c.notNull())
      .addColumn('cron', 'text', (c) => c.notNull())
      .addColumn('timezone', 'text', (c) => c.notNull())
      .addColumn('enabled', 'boolean', (c) => c.notNull())
      .addColumn('config', 'jsonb', (c) => c.notNull())
      .addColumn('next_run_at', 'timestamptz'),
  ).execute();
  await db.schema.createIndex('scan_schedules_org_idx').on('scan_schedules').columns(['org_id', 'id']).execute();

  await managed(
    db.schema
      .createTable('webhooks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('events', 'jsonb', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('enabled', 'boolean', (c) => c.notNull())
      // AES-256-GCM sealed signing secret (see platform/crypto); never stored in clear.
      .addColumn('secret_sealed', 'text', (c) => c.notNull())
      .addColumn('secret_last4', 'text', (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex('webhooks_org_idx').on('webhooks').columns(['org_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['webhooks', 'scan_schedules', 'shield_schemas', 'shield_schema_configs', 'rate_limit_rules', 'ip_access_rules', 'virtual_patches', 'shield_sites']) {
    await db.schema.dropTable(table).execute();
  }
}
