// E-mail domains an organisation claims, and whether DNS proved the claim. A claim starts
// unverified with a token to publish; one organisation at a time holds a domain verified (a unique
// index), so discovering an organisation's SSO from an address is never ambiguous.
import { sql } from 'kysely';
import { newToken } from '../../../platform/crypto/tokens.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { OrganizationDomainRow } from '../../../platform/db/schema.ts';
import { newId } from '../../../platform/ids.ts';

export async function listDomains(db: Db, orgId: string, after: string | null, limit: number): Promise<OrganizationDomainRow[]> {
  let query = db.selectFrom('organization_domains').selectAll().where('org_id', '=', orgId);
  if (after) query = query.where('id', '<', after);
  return query.orderBy('id', 'desc').limit(limit + 1).execute();
}

export async function findDomain(db: Db, orgId: string, id: string): Promise<OrganizationDomainRow | undefined> {
  return db.selectFrom('organization_domains').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

/** The organisation's claim on `domain`, made now with a fresh token when it has none. */
export async function claimDomain(db: Db, orgId: string, domain: string): Promise<{ row: OrganizationDomainRow; created: boolean }> {
  const created = await db
    .insertInto('organization_domains')
    .values({ id: newId('dom'), org_id: orgId, domain, token: newToken() })
    .onConflict((oc) => oc.columns(['org_id', 'domain']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (created) return { row: created, created: true };
  const row = await db.selectFrom('organization_domains').selectAll().where('org_id', '=', orgId).where('domain', '=', domain).executeTakeFirstOrThrow();
  return { row, created: false };
}

export async function deleteDomain(db: Db, orgId: string, id: string): Promise<OrganizationDomainRow | undefined> {
  return db.deleteFrom('organization_domains').where('org_id', '=', orgId).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Which organisation holds `domain` verified, if any. */
export async function verifiedHolder(db: Db, domain: string): Promise<string | undefined> {
  const row = await db.selectFrom('organization_domains').select('org_id').where('domain', '=', domain).where('verified_at', 'is not', null).executeTakeFirst();
  return row?.org_id;
}

/** Whether `orgId` holds `domain` verified. */
export async function holdsVerified(db: Db, orgId: string, domain: string): Promise<boolean> {
  return (await verifiedHolder(db, domain)) === orgId;
}

/** Records a check's outcome: verified keeps (or sets) `verified_at`; not verified clears it. */
export async function recordCheck(db: Db, id: string, outcome: { verified: boolean; error: string | null }): Promise<OrganizationDomainRow> {
  return db
    .updateTable('organization_domains')
    .set((eb) => ({
      checked_at: sql<Date>`now()`,
      check_error: outcome.error,
      verified_at: outcome.verified ? eb.fn.coalesce('verified_at', sql<Date>`now()`) : null,
    }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Records a check the resolver could not answer: the domain keeps its state, the error is kept. */
export async function recordCheckFailure(db: Db, id: string, error: string): Promise<void> {
  await db.updateTable('organization_domains').set({ checked_at: sql<Date>`now()`, check_error: error }).where('id', '=', id).execute();
}

/**
 * Verified domains due for another look (checked before `before`), claimed by moving their
 * `checked_at` forward so that processes running the same sweep do not check them twice.
 */
export async function claimDueRechecks(db: Db, before: Date, limit: number): Promise<OrganizationDomainRow[]> {
  return db
    .updateTable('organization_domains')
    .set({ checked_at: sql<Date>`now()` })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('organization_domains')
        .select('id')
        .where('verified_at', 'is not', null)
        .where((w) => w.or([w('checked_at', 'is', null), w('checked_at', '<', before)]))
        .orderBy('checked_at')
        .limit(limit),
    )
    .where((w) => w.or([w('checked_at', 'is', null), w('checked_at', '<', before)]))
    .returningAll()
    .execute();
}
