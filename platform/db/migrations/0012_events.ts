import { sql, type Kysely } from 'kysely';

// Events out: what happens in an organisation is an event row (written in the same transaction as
// the change), fanned out to the webhooks that subscribe to its type as deliveries, each delivered
// by a job and logged attempt by attempt. Shield blocks are first counted per site, rule and time
// window, so that an attack becomes a bounded number of events.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    // The version of the type's payload (api/events/catalogue.ts); bumped only on breaking changes.
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    // { object: <snapshot>, previous_attributes?: {...} }
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('events_org_idx').on('events').columns(['org_id', 'id']).execute();
  await db.schema.createIndex('events_org_type_idx').on('events').columns(['org_id', 'type', 'id']).execute();

  // Subscriptions were written with the first catalogue's names.
  await sql`
    update webhooks set events = (
      select jsonb_agg(case e when 'finding.created' then 'vulnerability.created'
                              when 'finding.updated' then 'vulnerability.updated'
                              when 'shield.blocked' then 'shield.block'
                              else e end)
      from jsonb_array_elements_text(webhooks.events) as e)`.execute(db);
  await db.schema
    .alterTable('webhooks')
    // Secret rotation: the previous secret keeps signing (a second v1=) until it expires.
    .addColumn('previous_secret_sealed', 'text')
    .addColumn('previous_secret_expires_at', 'timestamptz')
    // Since when every delivery has failed (null: the last one succeeded); disabled past a limit.
    .addColumn('failing_since', 'timestamptz')
    .addColumn('disabled_reason', 'text')
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('event_type', 'text', (c) => c.notNull())
    // pending (attempts left), succeeded, failed (gave up, or the endpoint was disabled)
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending').check(sql`status in ('pending', 'succeeded', 'failed')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz')
    .addColumn('last_attempt_at', 'timestamptz')
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('duration_ms', 'integer')
    .addColumn('error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('webhook_deliveries_event_unique', ['webhook_id', 'event_id'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_webhook_idx').on('webhook_deliveries').columns(['webhook_id', 'id']).execute();
  await db.schema.createIndex('webhook_deliveries_event_idx').on('webhook_deliveries').column('event_id').execute();

  await db.schema
    .createTable('webhook_delivery_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    // automatic (the schedule), manual (redeliver), test (ping)
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('succeeded', 'boolean', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('webhook_delivery_attempts_delivery_idx').on('webhook_delivery_attempts').columns(['delivery_id', 'id']).execute();

  // Blocks and challenges counted per site, rule and window by the decision writers; closed windows
  // become `shield.block` / `shield.challenge` events (api/events/shield-alerts.ts).
  await db.schema
    .createTable('shield_alert_windows')
    .addColumn('site_id', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('rule_kind', 'text', (c) => c.notNull())
    .addColumn('rule_id', 'text', (c) => c.notNull())
    .addColumn('window_start', 'timestamptz', (c) => c.notNull())
    .addColumn('window_end', 'timestamptz', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addColumn('samples', 'jsonb', (c) => c.notNull())
    .addColumn('first_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('shield_alert_windows_pk', ['site_id', 'action', 'rule_kind', 'rule_id', 'window_start'])
    .execute();
  await db.schema.createIndex('shield_alert_windows_end_idx').on('shield_alert_windows').column('window_end').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['shield_alert_windows', 'webhook_delivery_attempts', 'webhook_deliveries', 'events']) await db.schema.dropTable(table).execute();
  await db.schema
    .alterTable('webhooks')
    .dropColumn('previous_secret_sealed')
    .dropColumn('previous_secret_expires_at')
    .dropColumn('failing_since')
    .dropColumn('disabled_reason')
    .execute();
}
