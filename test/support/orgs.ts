// A second organisation with its own key, made through the same code as `aegis keys create`.
import type { Scope } from '../../api/accounts/auth/scopes.ts';
import { ensureOrganization } from '../../api/accounts/keys/bootstrap.ts';
import { insertKey } from '../../api/accounts/keys/key-store.ts';
import type { TestServer } from './server.ts';

export async function keyInOrganization(t: TestServer, slug: string, scopes: Scope[]): Promise<string> {
  const db = t.server.database.db;
  const orgId = await ensureOrganization(db, slug);
  const issued = await insertKey(db, { orgId, name: `${slug} key`, scopes, createdBy: null });
  return issued.value;
}
