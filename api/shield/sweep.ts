// Expired virtual patches and IP rules stop counting the moment they expire (every reader checks
// `expires_at`); this sweep then deletes them so they do not accumulate.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';

export async function sweepExpiredRules(db: Db): Promise<{ patches: number; ipRules: number }> {
  const patches = await db.deleteFrom('virtual_patches').where('expires_at', '<=', sql<Date>`now()`).executeTakeFirst();
  const ipRules = await db.deleteFrom('ip_access_rules').where('expires_at', '<=', sql<Date>`now()`).executeTakeFirst();
  return { patches: Number(patches.numDeletedRows), ipRules: Number(ipRules.numDeletedRows) };
}
