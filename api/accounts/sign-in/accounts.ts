// From a verified e-mail address to an account and the organisation a session starts in.
import { recordAudit } from '../../../platform/audit-log.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { InviteRow, UserRow } from '../../../platform/db/schema.ts';
import { ApiError } from '../../../platform/http/errors.ts';
import type { Role } from '../auth/roles.ts';
import { ssoRequired } from '../auth/sso-required.ts';
import { markInviteAccepted, pendingInvitesFor } from '../people/invite-store.ts';
import { addMembership, createOrganization, membershipsOf } from '../people/org-store.ts';
import { ensureUser, findUserByEmail } from '../people/user-store.ts';

export interface Account {
  user: UserRow;
  created: boolean;
  /** Invites a new account joined instead of getting its own organisation. */
  joined: InviteRow[];
}

/** Accepts a pending invite for `userId`: the membership and its audit entry, or false when it is no longer pending. */
export async function joinByInvite(trx: Db, invite: InviteRow, userId: string, ip: string | null): Promise<boolean> {
  if (!(await markInviteAccepted(trx, invite.id, userId))) return false;
  await addMembership(trx, invite.org_id, userId, invite.role as Role);
  await recordAudit(trx, {
    orgId: invite.org_id,
    actor: { type: 'user', id: userId },
    ip,
    action: 'invite.accepted',
    target: { type: 'invite', id: invite.id },
    metadata: { email: invite.email, role: invite.role },
  });
  return true;
}

/**
 * Who may get an account by signing in: `open` (the hosted service) lets every verified address in,
 * a new one with a trial organisation of its own; `invite` (a self-hosted server) lets in members
 * and addresses with a pending invite only — a stranger's verified address is no reason to give
 * them a foothold, and the installer becomes owner through the first-owner link instead.
 */
export type SignupMode = 'invite' | 'open';

/** 403 for an address that may not get an account on an invite-only server. */
export const signupClosed = (): ApiError =>
  new ApiError(
    403,
    'signup_closed',
    'This Aegis server is invite-only: this address is not a member of any organisation here and has no pending invite. Ask an administrator of your organisation to invite you. (Installed it yourself? The owner link it printed at start-up makes you its owner.)',
    { signup: 'invite' },
  );

/** Whether an invite-only server lets this address in: a member, or an address someone invited. */
async function admitted(trx: Db, email: string): Promise<boolean> {
  const user = await findUserByEmail(trx, email);
  if (user && (await membershipsOf(trx, user.id)).length > 0) return true;
  return (await pendingInvitesFor(trx, email)).length > 0;
}

/**
 * The account behind an address a sign-in method has verified. A new address signs up: it joins
 * the organisations that invited it, or else (open sign-up only) gets a new organisation on the
 * trial plan that it owns. An existing account is returned as it is (it accepts invites
 * explicitly), except that on an invite-only server one that belongs nowhere joins what invited it.
 * Refused (403 `signup_closed`, nothing written) when an invite-only server does not let it in.
 */
export async function accountFor(trx: Db, email: string, ip: string | null, options: { name?: string | null; signup: SignupMode }): Promise<Account> {
  // Checked before anything is written: a refused address leaves no user row behind.
  if (options.signup === 'invite' && !(await admitted(trx, email))) throw signupClosed();
  const { user, created } = await ensureUser(trx, email, options.name ?? null);
  const joined: InviteRow[] = [];
  const belongsNowhere = async () => (await membershipsOf(trx, user.id)).length === 0;
  if (created || (options.signup === 'invite' && (await belongsNowhere()))) {
    for (const invite of await pendingInvitesFor(trx, user.email)) {
      if (await joinByInvite(trx, invite, user.id, ip)) joined.push(invite);
    }
  }
  if (options.signup === 'open' && (await belongsNowhere())) {
    const orgId = await createOrganization(trx, { name: `${user.email.split('@')[0] ?? 'my'}'s organization`, ownerId: user.id, plan: 'trial' });
    await recordAudit(trx, { orgId, actor: { type: 'user', id: user.id }, ip, action: 'organization.created', target: { type: 'organization', id: orgId } });
  }
  return { user, created, joined };
}

/**
 * The organisation a new session starts in: `prefer` when allowed, else the first membership.
 * Organisations that enforce SSO are allowed only to a sign-in through their own identity provider
 * (`ssoOrgId`); when that leaves nothing, the sign-in is refused with where to go instead.
 */
export async function organizationForSession(db: Db, userId: string, options: { prefer?: string | undefined; ssoOrgId?: string | null } = {}): Promise<string> {
  const memberships = await membershipsOf(db, userId);
  const allowed = memberships.filter((m) => !m.sso_enforced || m.organization.id === options.ssoOrgId);
  const chosen = allowed.find((m) => m.organization.id === options.prefer) ?? allowed.find((m) => m.organization.id === options.ssoOrgId) ?? allowed[0];
  if (chosen) return chosen.organization.id;
  const enforced = memberships.find((m) => m.sso_enforced);
  if (enforced) throw ssoRequired(enforced.organization);
  throw new ApiError(403, 'forbidden', 'this account belongs to no organisation');
}
