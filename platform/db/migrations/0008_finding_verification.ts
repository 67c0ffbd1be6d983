import { sql, type Kysely } from 'kysely';

// Verify-fix and virtual patches made from a finding: the latest verification of a vulnerability
// (status, evidence, when), and the Shield virtual patch derived from it, removed automatically when
// a verification finds the problem fixed if `virtual_patch_auto_remove`.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('vulnerabilities')
    .addColumn('verification', 'jsonb')
    .addColumn('virtual_patch_id', 'text')
    .addColumn('virtual_patch_auto_remove', 'boolean', (c) => c.notNull().defaultTo(sql`false`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('vulnerabilities').dropColumn('verification').dropColumn('virtual_patch_id').dropColumn('virtual_patch_auto_remove').execute();
}
