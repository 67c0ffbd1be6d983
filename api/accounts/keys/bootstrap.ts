// The first key of an installation. AEGIS_BOOTSTRAP_API_KEY names it outright (for CI and
// containers); otherwise, on a database with no key at all, one is generated and written to
// <data-dir>/bootstrap-key with mode 0600 — its path is printed, never its value. The bootstrap
// organisation is on the enterprise plan: a self-hosted server keeps every feature.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Db } from '../../../platform/db/database.ts';
import { newId } from '../../../platform/ids.ts';
import { hashKey, isWellFormedKey } from './key-material.ts';
import { countKeys, insertKey } from './key-store.ts';
import type { Plan } from '../people/plans.ts';

export const DEFAULT_ORG_SLUG = 'default';

export type BootstrapResult =
  | { kind: 'env-key-created' | 'env-key-present' | 'existing-keys' }
  | { kind: 'env-key-revoked' }
  | { kind: 'key-file-written'; path: string };

/** The organisation with this slug, created (on `plan`, default trial) when missing. */
export async function ensureOrganization(db: Db, slug: string, name = slug, plan: Plan = 'trial'): Promise<string> {
  await db.insertInto('organizations').values({ id: newId('org'), slug, name, plan }).onConflict((oc) => oc.column('slug').doNothing()).execute();
  const org = await db.selectFrom('organizations').select('id').where('slug', '=', slug).executeTakeFirstOrThrow();
  return org.id;
}

export async function bootstrapKey(db: Db, options: { envKey?: string | undefined; dataDir: string }): Promise<BootstrapResult> {
  const { envKey } = options;
  if (envKey !== undefined && !isWellFormedKey(envKey)) {
    throw new Error('AEGIS_BOOTSTRAP_API_KEY must be svc_live_ followed by at least 32 letters or digits');
  }
  return db.transaction().execute(async (trx) => {
    // Several processes may start at once against one database: one of them bootstraps.
    await sql`select pg_advisory_xact_lock(712334001)`.execute(trx);
    if (envKey !== undefined) {
      const existing = await trx.selectFrom('api_keys').select(['revoked_at']).where('key_hash', '=', hashKey(envKey)).executeTakeFirst();
      // A revoked bootstrap key stays revoked: the variable lingering in an environment must not
      // resurrect a key someone deliberately killed.
      if (existing) return { kind: existing.revoked_at ? 'env-key-revoked' : 'env-key-present' };
      const orgId = await ensureOrganization(trx, DEFAULT_ORG_SLUG, 'Default organization', 'enterprise');
      await insertKey(trx, { orgId, name: 'bootstrap', scopes: ['admin'], createdBy: null, value: envKey });
      return { kind: 'env-key-created' };
    }
    if ((await countKeys(trx)) > 0) return { kind: 'existing-keys' };
    const orgId = await ensureOrganization(trx, DEFAULT_ORG_SLUG, 'Default organization', 'enterprise');
    const issued = await insertKey(trx, { orgId, name: 'bootstrap', scopes: ['admin'], createdBy: null });
    await mkdir(options.dataDir, { recursive: true });
    const path = join(options.dataDir, 'bootstrap-key');
    await writeFile(path, `${issued.value}\n`, { mode: 0o600 });
    await chmod(path, 0o600); // the mode option does not apply when the file already existed
    return { kind: 'key-file-written', path };
  });
}
