import type { Kysely } from 'kysely';

// Managed rules score requests (issue 42: docs/shield-gateway.md, "Managed rules"): a decision by
// managed rules records the request's anomaly score and the rules that made it up, so an operator
// can see why weak signals added up to a block. Null for every other decision.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('shield_events').addColumn('anomaly', 'jsonb').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('shield_events').dropColumn('anomaly').execute();
}
