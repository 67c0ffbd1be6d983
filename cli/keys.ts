// `aegis keys create`: a key straight into the database, for when no key exists to call the API
// with (the embedded database is one process: stop the server first).
import { loadConfig } from '../api/config.ts';
import { openCommandDatabase } from './open-database.ts';
import { migrateToLatest } from '../platform/db/migrate.ts';
import { SCOPES, type Scope } from '../api/accounts/auth/scopes.ts';
import { ensureOrganization } from '../api/accounts/keys/bootstrap.ts';
import { insertKey } from '../api/accounts/keys/key-store.ts';
import { dataSpaceOf } from '../platform/db/environments.ts';
import { recordAudit } from '../platform/audit-log.ts';

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

export interface KeysCreateOptions {
  org?: string | undefined;
  scopes?: string | undefined;
  name?: string | undefined;
  dataDir?: string | undefined;
  /** A `svc_test_` key of the organisation's sandbox. */
  test?: boolean | undefined;
}

export async function keysCreateCommand(values: KeysCreateOptions): Promise<number> {
  if (!values.org || !SLUG.test(values.org)) throw new Error('--org SLUG is required (lowercase letters, digits, dashes)');
  const scopes = (values.scopes ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (scopes.length === 0 || unknown.length > 0) {
    throw new Error(`--scopes takes a comma-separated list of ${SCOPES.join(', ')}${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`);
  }
  const name = values.name ?? 'created with aegis keys create';
  const config = loadConfig({ dataDir: values.dataDir });
  const database = await openCommandDatabase(config, 'keys');
  try {
    await migrateToLatest(database.db);
    const issued = await database.db.transaction().execute(async (trx) => {
      const orgId = dataSpaceOf(await ensureOrganization(trx, values.org!), values.test ? 'test' : 'live');
      const created = await insertKey(trx, { orgId, name, scopes: scopes as Scope[], createdBy: null });
      await recordAudit(trx, {
        orgId,
        actor: { type: 'system', id: 'cli' },
        action: 'api_key.created',
        target: { type: 'api_key', id: created.row.id },
        metadata: { name, scopes, via: 'aegis keys create' },
      });
      return created;
    });
    process.stderr.write(`created ${values.test ? 'test (sandbox) ' : ''}API key ${issued.row.id} in organisation ${values.org} with scopes ${scopes.join(',')}; it is shown once:\n`);
    process.stdout.write(`${issued.value}\n`);
    return 0;
  } finally {
    await database.close();
  }
}
