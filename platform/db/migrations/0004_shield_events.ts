import type { Kysely } from 'kysely';

// Shield decisions: every non-allow decision and a sample of allows (`shield_events`), and
// per-minute counts of every decision (`shield_event_rollups`), written by the gateway's recorder in
// one transaction per batch so that the two always agree. No foreign keys: a batch must not fail
// because a site was deleted a moment before it was written; retention removes such rows in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('shield_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('site_id', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('rule_kind', 'text')
    .addColumn('rule_id', 'text')
    .addColumn('would', 'text')
    .addColumn('client_ip', 'text', (c) => c.notNull())
    .addColumn('asn', 'integer')
    .addColumn('country', 'text')
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .execute();
  // Analytics and retention read one site's events by time.
  await db.schema.createIndex('shield_events_site_time_idx').on('shield_events').columns(['site_id', 'occurred_at']).execute();

  await db.schema
    .createTable('shield_event_rollups')
    .addColumn('site_id', 'text', (c) => c.notNull())
    .addColumn('minute', 'timestamptz', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    // '' rather than null: a primary-key column cannot be null.
    .addColumn('rule_kind', 'text', (c) => c.notNull().defaultTo(''))
    // Decisions observed, sampled-out allows included.
    .addColumn('requests', 'bigint', (c) => c.notNull().defaultTo(0))
    // Of those, the ones stored in shield_events.
    .addColumn('recorded', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('shield_event_rollups_pk', ['site_id', 'minute', 'action', 'rule_kind'])
    .execute();
  // Retention finds the sites with old data through this index instead of an occurred_at index on
  // shield_events, which every decision would have to maintain.
  await db.schema.createIndex('shield_event_rollups_minute_idx').on('shield_event_rollups').column('minute').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('shield_event_rollups').execute();
  await db.schema.dropTable('shield_events').execute();
}
