// People who sign in. An e-mail address is the identity (lower-cased): a magic link, Google and an
// organisation's identity provider all vouch for one.
import { sql } from 'kysely';
import type { Db } from '../../../platform/db/database.ts';
import type { UserRow } from '../../../platform/db/schema.ts';
import { newId } from '../../../platform/ids.ts';

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
}

export async function findUser(db: Db, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The user with this address, created when there is none (concurrent sign-ups agree on one row). */
export async function ensureUser(db: Db, email: string, name: string | null = null): Promise<{ user: UserRow; created: boolean }> {
  const inserted = await db
    .insertInto('users')
    .values({ id: newId('usr'), email: normalizeEmail(email), name })
    .onConflict((oc) => oc.column('email').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { user: inserted, created: true };
  const existing = await findUserByEmail(db, email);
  if (!existing) throw new Error('user vanished during sign-up');
  return { user: existing, created: false };
}

export async function recordLogin(db: Db, userId: string, name: string | null): Promise<void> {
  await db
    .updateTable('users')
    .set((eb) => ({ last_login_at: sql<Date>`now()`, name: name === null ? eb.ref('name') : eb.fn.coalesce('name', eb.val(name)) }))
    .where('id', '=', userId)
    .execute();
}
