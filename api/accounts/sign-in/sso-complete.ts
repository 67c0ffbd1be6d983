// The end of every SSO sign-in, whichever protocol vouched for the person: a "Try login" only
// records that the connection works; a real sign-in admits members, people the organisation
// invited, and — when the organisation lists their e-mail domain and has verified it — people
// just in time, then starts a session bound to this organisation. An organisation's identity
// provider vouches for people *to that organisation only*: the session can never switch to
// another one (docs/security.md), so an IdP that names someone else's address gains nothing
// beyond what the organisation already had.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { recordAudit, type Actor } from '../../../platform/audit-log.ts';
import type { AuthChanges } from '../auth/auth-changes.ts';
import type { Db } from '../../../platform/db/database.ts';
import { ApiError } from '../../../platform/http/errors.ts';
import { escapeHtml, sendPage } from './pages.ts';
import { landingAfterSignIn } from './return-to.ts';
import { joinByInvite } from './accounts.ts';
import { holdsVerified } from '../people/domain-store.ts';
import { pendingInvitesFor } from '../people/invite-store.ts';
import { addMembership } from '../people/org-store.ts';
import type { SessionTokens } from '../sessions/session-token.ts';
import { signIn } from '../sessions/sign-in.ts';
import { ensureUser } from '../people/user-store.ts';
import type { SsoConnection } from './sso-connection-store.ts';
import { markSsoTested } from './sso-connection-store.ts';
import type { FlowPurpose } from './flows.ts';

export interface SsoIdentity {
  /** The address the identity provider vouches for (OIDC: `email` with `email_verified`; SAML: NameID or the mail attribute). */
  email: string;
  name: string | null;
}

export interface SsoContext {
  db: Db;
  tokens: SessionTokens;
  changes: AuthChanges;
}

export interface CompletedFlow {
  purpose: FlowPurpose;
  /** Who started a "Try login": an admin's user id or an admin key's id. */
  userId: string | null;
}

/** The actor a flow's starter id names (ids carry their type: `usr_…`, `key_…`). */
const starter = (id: string | null): Actor => (id?.startsWith('key_') ? { type: 'api_key', id } : { type: id ? 'user' : 'system', id: id ?? 'sso' });

/** Writes a refused SSO sign-in to the organisation's audit log (a bad signature, a replay, a stranger). */
export async function auditSsoRefusal(db: Db, request: FastifyRequest, orgId: string, protocol: 'oidc' | 'saml', reason: string): Promise<void> {
  await recordAudit(db, { orgId, actor: { type: 'system', id: 'sso' }, ip: request.ip, action: 'sso.login_refused', metadata: { protocol, reason } });
}

export async function completeSsoSignIn(
  ctx: SsoContext,
  request: FastifyRequest,
  reply: FastifyReply,
  input: { connection: SsoConnection; flow: CompletedFlow; identity: SsoIdentity },
): Promise<FastifyReply> {
  const { connection, flow, identity } = input;
  const orgId = connection.orgId;
  const email = identity.email.toLowerCase();
  if (flow.purpose === 'test') {
    await ctx.db.transaction().execute(async (trx) => {
      await markSsoTested(trx, orgId);
      await recordAudit(trx, { orgId, actor: starter(flow.userId), ip: request.ip, action: 'sso.tested', metadata: { protocol: connection.protocol, email } });
    });
    return sendPage(reply, 200, 'SSO works', `<p>The identity provider signed in <strong>${escapeHtml(email)}</strong>. Nothing was enforced; you can now enforce SSO for the organisation.</p>`);
  }

  const userId = await ctx.changes.commit(ctx.db, async (trx) => {
    const member = await trx
      .selectFrom('memberships')
      .innerJoin('users', 'users.id', 'memberships.user_id')
      .select('users.id')
      .where('memberships.org_id', '=', orgId)
      .where('users.email', '=', email)
      .executeTakeFirst();
    if (member) return member.id;
    const invite = (await pendingInvitesFor(trx, email)).find((i) => i.org_id === orgId);
    const domain = email.split('@')[1] ?? '';
    if (!invite && !(connection.jitDomains.includes(domain) && (await holdsVerified(trx, orgId, domain)))) return undefined;
    const { user } = await ensureUser(trx, email, identity.name);
    if (invite) {
      await joinByInvite(trx, invite, user.id, request.ip);
    } else {
      await addMembership(trx, orgId, user.id, connection.jitRole);
      await recordAudit(trx, { orgId, actor: { type: 'user', id: user.id }, ip: request.ip, action: 'member.joined_by_sso', target: { type: 'user', id: user.id }, metadata: { email, role: connection.jitRole } });
    }
    return user.id;
  });
  if (!userId) {
    await auditSsoRefusal(ctx.db, request, orgId, connection.protocol, `${email} is not a member, not invited, and its domain is not a verified just-in-time domain`);
    throw new ApiError(403, 'forbidden', `${email} is not a member of this organisation; ask an admin for an invite`);
  }
  await signIn(ctx.db, ctx.tokens, request, reply, { userId, orgId, method: connection.protocol === 'oidc' ? 'sso_oidc' : 'sso_saml', ssoOrgId: orgId, name: identity.name });
  return reply.redirect(landingAfterSignIn(request, reply), 303);
}
