// Invites: an e-mail address asked to join an organisation with a role. The link's token is stored
// as a digest; an invite is pending until accepted, revoked or expired (7 days).
import { sql } from 'kysely';
import type { Actor } from '../auth/principal.ts';
import type { Role } from '../auth/roles.ts';
import { hashToken, newToken } from '../crypto/tokens.ts';
import type { Db } from '../db/database.ts';
import type { InviteRow } from '../db/schema.ts';
import { newId } from '../ids.ts';
import { normalizeEmail } from '../users/user-store.ts';

export const INVITE_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;
export const INVITE_STATUSES = ['pending', 'accepted', 'revoked', 'expired'] as const;
export type InviteStatus = (typeof INVITE_STATUSES)[number];

export function inviteStatus(row: InviteRow, now = Date.now()): InviteStatus {
  if (row.accepted_at) return 'accepted';
  if (row.revoked_at) return 'revoked';
  return row.expires_at.getTime() <= now ? 'expired' : 'pending';
}

export async function createInvite(db: Db, input: { orgId: string; email: string; role: Role; invitedBy: Actor }): Promise<{ row: InviteRow; token: string }> {
  const token = newToken();
  const row = await db
    .insertInto('invites')
    .values({
      id: newId('inv'),
      org_id: input.orgId,
      email: normalizeEmail(input.email),
      role: input.role,
      token_hash: hashToken(token),
      invited_by_type: input.invitedBy.type,
      invited_by_id: input.invitedBy.id,
      expires_at: new Date(Date.now() + INVITE_LIFETIME_MS),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { row, token };
}

export async function findInviteByToken(db: Db, token: string): Promise<InviteRow | undefined> {
  return db.selectFrom('invites').selectAll().where('token_hash', '=', hashToken(token)).executeTakeFirst();
}

/** Pending invites for an address, oldest first. */
export async function pendingInvitesFor(db: Db, email: string): Promise<InviteRow[]> {
  return db
    .selectFrom('invites')
    .selectAll()
    .where('email', '=', normalizeEmail(email))
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .orderBy('id')
    .execute();
}

/** Marks a pending invite accepted by `userId`; false when it is no longer pending (raced, revoked, expired). */
export async function markInviteAccepted(db: Db, inviteId: string, userId: string): Promise<boolean> {
  const row = await db
    .updateTable('invites')
    .set({ accepted_at: sql<Date>`now()`, accepted_by: userId })
    .where('id', '=', inviteId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}
