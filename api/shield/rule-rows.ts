// What the three rule stores (IP access, rate limits, virtual patches) share for rule batches.
import type { Db } from '../../platform/db/database.ts';

type RuleTable = 'ip_access_rules' | 'rate_limit_rules' | 'virtual_patches';

/** Deletes several rules of the site from `table` in one statement; returns the ids that existed. */
export async function deleteSiteRules(db: Db, table: RuleTable, siteId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.deleteFrom(table).where('site_id', '=', siteId).where('id', 'in', [...ids]).returning('id').execute();
  return new Set(rows.map((r) => r.id));
}

/** Rows a multi-row `insert … returning` gave back, in the order they were given (SQL promises none). */
export function inGivenOrder<R extends { id: string }>(given: readonly { id: string }[], returned: readonly R[]): R[] {
  const byId = new Map(returned.map((row) => [row.id, row]));
  return given.map((row) => byId.get(row.id)!);
}
