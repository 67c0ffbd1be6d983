// Starting a session once a sign-in method has vouched for a person: the row, the audit entries
// (login, and "new device" for a browser/address pair this user has not signed in from before),
// and the cookie. Magic links, Google, SSO and invite links all end here.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { recordAudit } from '../../../platform/audit-log.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { SessionRow } from '../../../platform/db/schema.ts';
import { recordLogin } from '../people/user-store.ts';
import { SESSION_COOKIE, sessionCookieOptions } from '../auth/cookies.ts';
import { insertSession, knownDevice, type SignInMethod } from './session-store.ts';
import type { SessionTokens } from './session-token.ts';
import { describeBrowser } from './user-agent.ts';

export interface SignIn {
  userId: string;
  /** The organisation the session starts in (see accounts.ts organizationForSession). */
  orgId: string;
  method: SignInMethod;
  /** The organisation whose identity provider vouched (SSO sign-ins). */
  ssoOrgId?: string | null;
  /** A display name the identity provider gave, kept when the user has none. */
  name?: string | null;
}

export async function signIn(db: Db, tokens: SessionTokens, request: FastifyRequest, reply: FastifyReply, input: SignIn): Promise<SessionRow> {
  const browser = describeBrowser(request.headers['user-agent']);
  const session = await db.transaction().execute(async (trx) => {
    const known = await knownDevice(trx, input.userId, browser, request.ip);
    const row = await insertSession(trx, {
      userId: input.userId,
      orgId: input.orgId,
      method: input.method,
      ssoOrgId: input.ssoOrgId ?? null,
      userAgent: request.headers['user-agent'] ?? null,
      browser,
      ip: request.ip,
    });
    await recordLogin(trx, input.userId, input.name ?? null);
    const actor = { type: 'user' as const, id: input.userId };
    const target = { type: 'session', id: row.id };
    await recordAudit(trx, { orgId: input.orgId, actor, ip: request.ip, action: 'user.login', target, metadata: { method: input.method, browser } });
    if (!known) await recordAudit(trx, { orgId: input.orgId, actor, ip: request.ip, action: 'user.new_device', target, metadata: { browser } });
    return row;
  });
  reply.setCookie(SESSION_COOKIE, await tokens.issue(session.id, input.userId), sessionCookieOptions);
  return session;
}
