import { sql, type Kysely } from 'kysely';

// Billing from Stripe (api/billing): an organisation remembers its Stripe customer, the status of
// its subscription and the Stripe time of the last billing event applied to it (events arrive out
// of order, so an older one must not undo a newer one). Every Stripe event received is kept by its
// id, which makes redeliveries harmless and says what was done with each.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('organizations')
    .addColumn('stripe_customer_id', 'text', (c) => c.unique())
    // Stripe's word for the subscription (active, past_due, canceled, …); null: never billed.
    .addColumn('billing_status', 'text')
    .addColumn('billing_updated_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('stripe_events')
    .addColumn('id', 'text', (c) => c.primaryKey()) // Stripe's evt_…
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.references('organizations.id').onDelete('set null'))
    .addColumn('received_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // applied | unchanged | ignored | unmatched | unknown_plan | stale (api/billing/subscription-events.ts)
    .addColumn('outcome', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('stripe_events_org_idx').on('stripe_events').columns(['org_id', 'received_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('stripe_events').execute();
  await db.schema.alterTable('organizations').dropColumn('billing_updated_at').dropColumn('billing_status').dropColumn('stripe_customer_id').execute();
}
