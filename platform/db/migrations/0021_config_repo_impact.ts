import { sql, type Kysely } from 'kysely';

// Config repositories preview their plans' impact on recorded traffic (issue 43:
// docs/impact-preview.md): the window each sync previews (null: no preview; existing repositories
// get the default, 24 h) and the per-site gate on newly blocked requests (null: none). Each sync
// record keeps the preview's lines (null: none was made).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('config_repos').addColumn('impact_window', 'text', (c) => c.defaultTo('24h')).execute();
  await db.schema.alterTable('config_repos').addColumn('max_new_blocks', 'integer', (c) => c.check(sql`max_new_blocks >= 0`)).execute();
  await db.schema.alterTable('config_repo_syncs').addColumn('impact', 'jsonb').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('config_repo_syncs').dropColumn('impact').execute();
  await db.schema.alterTable('config_repos').dropColumn('max_new_blocks').execute();
  await db.schema.alterTable('config_repos').dropColumn('impact_window').execute();
}
