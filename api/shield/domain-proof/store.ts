// The domain-proof columns of shield_sites (migration 0018): setting and clearing a proof, noting a
// check, and handing out the DNS proofs due for another look.
import { sql } from 'kysely';
import type { Db } from '../../../platform/db/database.ts';
import { environmentOf, inEnvironment } from '../../../platform/db/environments.ts';
import type { DomainProofMethod, ShieldSiteRow } from '../../../platform/db/schema.ts';
import type { DomainPeer } from '../sites/serving.ts';

export async function siteById(db: Db, siteId: string): Promise<ShieldSiteRow | undefined> {
  return db.selectFrom('shield_sites').selectAll().where('id', '=', siteId).executeTakeFirst();
}

/**
 * Every site of the environment registered for `domain`, locked in id order (so two proofs of one
 * domain never deadlock, and the second sees what the first decided).
 */
export async function lockDomainPeers(db: Db, orgId: string, domain: string): Promise<DomainPeer[]> {
  return db
    .selectFrom('shield_sites')
    .select(['id', 'org_id', 'domain', 'domain_verified_at'])
    .where('domain', '=', domain)
    .where(inEnvironment('org_id', environmentOf(orgId)))
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Records a proof: the first one sets `domain_verified_at`, later ones keep it. */
export async function markVerified(db: Db, siteId: string, method: DomainProofMethod): Promise<ShieldSiteRow> {
  return db
    .updateTable('shield_sites')
    .set((eb) => ({
      domain_verified_at: eb.fn.coalesce('domain_verified_at', sql<Date>`now()`),
      domain_verified_by: method,
      domain_checked_at: sql<Date>`now()`,
      domain_check_error: null,
    }))
    .where('id', '=', siteId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A check found no proof: the site is unverified (again), with what was found. */
export async function markUnverified(db: Db, siteId: string, error: string): Promise<ShieldSiteRow> {
  return db
    .updateTable('shield_sites')
    .set({ domain_verified_at: null, domain_verified_by: null, domain_checked_at: sql<Date>`now()`, domain_check_error: error })
    .where('id', '=', siteId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A check that changed nothing (a refused proof of an unverified site, or a resolver that failed): only noted. */
export async function noteCheck(db: Db, siteId: string, error: string): Promise<ShieldSiteRow> {
  return db.updateTable('shield_sites').set({ domain_checked_at: sql<Date>`now()`, domain_check_error: error }).where('id', '=', siteId).returningAll().executeTakeFirstOrThrow();
}

/** A check found the proof still there (claimDueDnsRechecks already moved `domain_checked_at`). */
export async function clearCheckError(db: Db, siteId: string): Promise<void> {
  await db.updateTable('shield_sites').set({ domain_check_error: null }).where('id', '=', siteId).execute();
}

/**
 * Sites verified by DNS whose record is due for another look (checked before `before`), claimed by
 * moving `domain_checked_at` forward so processes running the same sweep do not check them twice.
 * HTTP and ACME proofs are not looked at again (docs/shield-edge.md, "Domain proof").
 */
export async function claimDueDnsRechecks(db: Db, before: Date, limit: number): Promise<ShieldSiteRow[]> {
  return db
    .updateTable('shield_sites')
    .set({ domain_checked_at: sql<Date>`now()` })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('shield_sites')
        .select('id')
        .where('domain_verified_at', 'is not', null)
        .where('domain_verified_by', '=', 'dns')
        .where((w) => w.or([w('domain_checked_at', 'is', null), w('domain_checked_at', '<', before)]))
        .orderBy('domain_checked_at')
        .limit(limit),
    )
    .where((w) => w.or([w('domain_checked_at', 'is', null), w('domain_checked_at', '<', before)]))
    .returningAll()
    .execute();
}
