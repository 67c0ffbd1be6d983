// `aegis keys create`: a key straight into the database, for when no key exists to call the API
// with (the embedded database is one process: stop the server first).
import { parseArgs } from 'node:util';
import { loadConfig } from '../api/config.ts';
import { openDatabase } from '../api/db/database.ts';
import { migrateToLatest } from '../api/db/migrate.ts';
import { SCOPES, type Scope } from '../api/auth/scopes.ts';
import { ensureOrganization } from '../api/keys/bootstrap.ts';
import { insertKey } from '../api/keys/key-store.ts';
import { recordAudit } from '../api/audit/audit-log.ts';

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

export async function keysCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'create') {
    process.stderr.write('usage: aegis keys create --org SLUG --scopes a,b [--name N] [--data-dir DIR]\n');
    return 1;
  }
  const { values } = parseArgs({
    args: rest,
    options: { org: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' }, 'data-dir': { type: 'string' } },
  });
  if (!values.org || !SLUG.test(values.org)) throw new Error('--org SLUG is required (lowercase letters, digits, dashes)');
  const scopes = (values.scopes ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (scopes.length === 0 || unknown.length > 0) {
    throw new Error(`--scopes takes a comma-separated list of ${SCOPES.join(', ')}${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`);
  }
  const name = values.name ?? 'created with aegis keys create';
  const config = loadConfig({ dataDir: values['data-dir'] });
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrateToLatest(database.db);
    const issued = await database.db.transaction().execute(async (trx) => {
      const orgId = await ensureOrganization(trx, values.org!);
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
    process.stderr.write(`created API key ${issued.row.id} in organisation ${values.org} with scopes ${scopes.join(',')}; it is shown once:\n`);
    process.stdout.write(`${issued.value}\n`);
    return 0;
  } finally {
    await database.close();
  }
}
