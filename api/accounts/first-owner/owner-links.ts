// The one-time link that names the first owner of `default` on a fresh install. It proves only that
// its holder can read the server's log or outbox — the operator's word — so it is printed once,
// stored as a digest like every other sign-in token, works once, lasts 24 hours, and dies as soon
// as `default` has an owner. The rows live in auth_flows (kind `first_owner`): a sign-in flow the
// server started itself, swept with the others when expired.
import { sql } from 'kysely';
import { hashToken, isTokenShaped, newToken } from '../../../platform/crypto/tokens.ts';
import type { Db } from '../../../platform/db/database.ts';
import { newId } from '../../../platform/ids.ts';

export const OWNER_LINK_LIFETIME_MS = 24 * 60 * 60 * 1000;
const KIND = 'first_owner';

/** Why a link cannot be used: unknown (never issued here, or mangled), used up, or past its 24 hours. */
export type OwnerLinkProblem = 'invalid' | 'used' | 'expired';

export interface OwnerLink {
  id: string;
  orgId: string;
}

/** A new link for the organisation; the token goes into the URL, only its digest into the database. */
export async function issueOwnerLink(db: Db, orgId: string): Promise<string> {
  const token = newToken();
  await db
    .insertInto('auth_flows')
    .values({ id: newId('flw'), state_hash: hashToken(token), kind: KIND, purpose: 'claim', org_id: orgId, expires_at: new Date(Date.now() + OWNER_LINK_LIFETIME_MS) })
    .execute();
  return token;
}

/**
 * The link a token names, or what is wrong with it. `lock` holds the row until the transaction
 * ends, so two posts of one link cannot both get past this.
 */
export async function findOwnerLink(db: Db, token: string, options: { lock?: boolean } = {}): Promise<OwnerLink | OwnerLinkProblem> {
  if (!isTokenShaped(token)) return 'invalid';
  let query = db
    .selectFrom('auth_flows')
    .select(['id', 'org_id', 'used_at', sql<boolean>`expires_at <= now()`.as('expired')])
    .where('state_hash', '=', hashToken(token))
    .where('kind', '=', KIND);
  if (options.lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row?.org_id) return 'invalid';
  if (row.used_at) return 'used';
  if (row.expired) return 'expired';
  return { id: row.id, orgId: row.org_id };
}

/** Uses the link up (within the transaction that names the owner). */
export async function useOwnerLink(db: Db, linkId: string): Promise<void> {
  await db.updateTable('auth_flows').set({ used_at: sql<Date>`now()` }).where('id', '=', linkId).execute();
}

/** Ends every link of the organisation still unused: it has an owner now. */
export async function revokeOwnerLinks(db: Db, orgId: string): Promise<void> {
  await db.updateTable('auth_flows').set({ used_at: sql<Date>`now()` }).where('kind', '=', KIND).where('org_id', '=', orgId).where('used_at', 'is', null).execute();
}
