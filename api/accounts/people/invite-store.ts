// Invites: an e-mail address asked to join an organisation with a role. The link's token is stored
// as a digest; an invite is pending until accepted, revoked or expired (7 days).
import { sql } from 'kysely';
import type { Actor } from '../auth/principal.ts';
import type { Role } from '../auth/roles.ts';
import { hashToken, newToken } from '../../../platform/crypto/tokens.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { InviteRow } from '../../../platform/db/schema.ts';
import { newId } from '../../../platform/ids.ts';
import { normalizeEmail } from './user-store.ts';

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

/** The organisation's invites, newest first, optionally only those in `statuses` (fetches `limit + 1`). */
export async function listInvites(db: Db, q: { orgId: string; after: string | null; limit: number; statuses?: readonly InviteStatus[] | undefined }): Promise<InviteRow[]> {
  let query = db.selectFrom('invites').selectAll().where('org_id', '=', q.orgId);
  if (q.after) query = query.where('id', '<', q.after);
  const statuses = q.statuses;
  if (statuses) {
    // The same rules as inviteStatus, in SQL, so that filtering and paging agree.
    query = query.where((eb) =>
      eb.or(
        statuses.map((status) => {
          switch (status) {
            case 'accepted':
              return eb('accepted_at', 'is not', null);
            case 'revoked':
              return eb.and([eb('accepted_at', 'is', null), eb('revoked_at', 'is not', null)]);
            case 'expired':
              return eb.and([eb('accepted_at', 'is', null), eb('revoked_at', 'is', null), eb('expires_at', '<=', sql<Date>`now()`)]);
            case 'pending':
              return eb.and([eb('accepted_at', 'is', null), eb('revoked_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]);
          }
        }),
      ),
    );
  }
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}

export async function findInvite(db: Db, orgId: string, id: string): Promise<InviteRow | undefined> {
  return db.selectFrom('invites').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

/** Revokes the organisation's invite unless it was accepted; undefined when there is no such invite. */
export async function revokeInvite(db: Db, orgId: string, id: string): Promise<{ row: InviteRow; changed: boolean } | undefined> {
  const updated = await db
    .updateTable('invites')
    .set({ revoked_at: sql<Date>`now()` })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (updated) return { row: updated, changed: true };
  const row = await findInvite(db, orgId, id);
  return row && { row, changed: false };
}

/** Revokes the address's pending invites to the organisation: a new invite replaces them (a resend). */
export async function revokePendingInvites(db: Db, orgId: string, email: string): Promise<number> {
  const rows = await db
    .updateTable('invites')
    .set({ revoked_at: sql<Date>`now()` })
    .where('org_id', '=', orgId)
    .where('email', '=', normalizeEmail(email))
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .returning('id')
    .execute();
  return rows.length;
}
