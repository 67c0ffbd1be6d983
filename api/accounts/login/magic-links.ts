// Magic-link tokens: single use, valid 15 minutes, stored only as a digest (spec 3.2, 5.3).
// Requests are limited per address and per client IP, counted from the tokens themselves, so every
// API process sharing the database shares the budget.
import { sql } from 'kysely';
import { hashToken, newToken } from '../../../platform/crypto/tokens.ts';
import type { Db } from '../../../platform/db/database.ts';
import { newId } from '../../../platform/ids.ts';
import { normalizeEmail } from '../people/user-store.ts';

export const MAGIC_LINK_LIFETIME_MS = 15 * 60 * 1000;
export const LINK_LIMITS = { windowMs: 15 * 60 * 1000, perAddress: 5, perIp: 30 } as const;

/** Whether another link may be sent now (false: the address or the IP used up its budget). */
export async function withinLinkBudget(db: Db, email: string, ip: string): Promise<boolean> {
  const since = new Date(Date.now() - LINK_LIMITS.windowMs);
  const row = await db
    .selectFrom('login_tokens')
    .select((eb) => [
      eb.fn.countAll<string>().filterWhere('email', '=', normalizeEmail(email)).as('by_address'),
      eb.fn.countAll<string>().filterWhere('ip', '=', ip).as('by_ip'),
    ])
    .where('created_at', '>', since)
    .where((eb) => eb.or([eb('email', '=', normalizeEmail(email)), eb('ip', '=', ip)]))
    .executeTakeFirstOrThrow();
  return Number(row.by_address) < LINK_LIMITS.perAddress && Number(row.by_ip) < LINK_LIMITS.perIp;
}

export async function issueMagicLink(db: Db, email: string, ip: string): Promise<string> {
  const token = newToken();
  await db
    .insertInto('login_tokens')
    .values({ id: newId('lnk'), token_hash: hashToken(token), email: normalizeEmail(email), ip, expires_at: new Date(Date.now() + MAGIC_LINK_LIFETIME_MS) })
    .execute();
  return token;
}

/** Uses the token up and returns its address; undefined when it is unknown, used or expired. */
export async function consumeMagicLink(db: Db, token: string): Promise<string | undefined> {
  const row = await db
    .updateTable('login_tokens')
    .set({ used_at: sql<Date>`now()` })
    .where('token_hash', '=', hashToken(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning('email')
    .executeTakeFirst();
  return row?.email;
}

/** Deletes tokens past their life (housekeeping). */
export async function sweepLoginTokens(db: Db): Promise<void> {
  await db.deleteFrom('login_tokens').where('expires_at', '<', new Date(Date.now() - LINK_LIMITS.windowMs)).execute();
}
