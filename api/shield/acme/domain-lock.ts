// One domain, one ACME order at a time: whoever claims an order for a domain, or stores what one
// obtained, first locks the rows of every site with that domain (organisations may share one), in
// id order — the order Part C's domain proofs lock them in (api/shield/domain-proof/store.ts), so
// the two never deadlock.
import type { Db } from '../../../platform/db/database.ts';

/** Locks the domain's sites until the transaction ends; returns their ids. */
export async function lockDomainSites(trx: Db, domain: string): Promise<string[]> {
  const rows = await trx.selectFrom('shield_sites').select('id').where('domain', '=', domain).orderBy('id').forUpdate().execute();
  return rows.map((r) => r.id);
}
