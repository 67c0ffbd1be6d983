import { sql, type Kysely } from 'kysely';

// Shield inspection settings per site: how rule URL patterns compare with request paths
// (`path_case`), and the managed rules. Sites that exist when this runs keep managed rules off (they
// were configured without them and may be in `block` mode); sites created afterwards get them on,
// which the API writes explicitly, so the column default only speaks for existing rows.
export const MANAGED_RULES_OFF = { enabled: false, paranoia_level: 1, exclusions: [] };

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('shield_sites')
    .addColumn('path_case', 'text', (c) => c.notNull().defaultTo('insensitive'))
    .addColumn('managed_rules', 'jsonb', (c) => c.notNull().defaultTo(sql.raw(`'${JSON.stringify(MANAGED_RULES_OFF)}'::jsonb`)))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('shield_sites').dropColumn('path_case').dropColumn('managed_rules').execute();
}
