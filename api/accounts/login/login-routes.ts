// Magic-link sign-in and sign-out (spec 3.2, 5.3):
//   GET  /auth/login          a page to ask for a link
//   POST /auth/login          sends a link (JSON or a form); the same answer for every address
//   GET  /auth/magic?token=   a page with a button: a GET never signs in (mail scanners follow links)
//   POST /auth/magic          uses the token up and starts a session
//   POST /auth/logout         ends every session of the account
// A form post gets HTML back, a JSON body gets JSON.
import formBody from '@fastify/formbody';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { recordAudit } from '../../../platform/audit-log.ts';
import type { AuthChanges } from '../auth/auth-changes.ts';
import { sessionOf } from '../auth/plugin.ts';
import { isTokenShaped } from '../../../platform/crypto/tokens.ts';
import type { Db } from '../../../platform/db/database.ts';
import { ApiError } from '../../../platform/http/errors.ts';
import type { Mailer } from '../../../platform/mail/mailer.ts';
import { membershipsOf } from '../people/org-store.ts';
import { clearedCookieOptions, SESSION_COOKIE } from '../auth/cookies.ts';
import { signIn } from '../sessions/sign-in.ts';
import { revokeAllSessions } from '../sessions/session-store.ts';
import { reachOf } from '../auth/session-scope.ts';
import type { SessionTokens } from '../sessions/session-token.ts';
import { findUserByEmail } from '../people/user-store.ts';
import { accountFor, organizationForSession, type SignupMode } from '../sign-in/accounts.ts';
import { consumeMagicLink, issueMagicLink, LINK_LIMITS, withinLinkBudget } from './magic-links.ts';
import { escapeHtml, postForm, sendPage } from '../sign-in/pages.ts';
import { DEFAULT_LANDING, emailSchema, failForm, isFormPost, returnToSchema, signedInSchema } from '../sign-in/forms.ts';

export interface LoginRoutesOptions {
  db: Db;
  tokens: SessionTokens;
  mailer: Mailer;
  changes: AuthChanges;
  publicUrl: () => string;
  /** Who may get an account by signing in (AEGIS_SIGNUP). */
  signup: SignupMode;
}

const tokenSchema = { type: 'string', minLength: 1, maxLength: 200, description: 'The token from the link.' } as const;

const LINK_SENT = 'If this address can sign in, a sign-in link is on its way. It works once, for 15 minutes.';
/** What the sign-in page tells people on an invite-only server, before they ask for a link in vain. */
const INVITE_ONLY = 'This Aegis server is invite-only: sign in with the address an organisation here invited, or that is already a member of one. Ask an administrator of your organisation for an invite.';
const LINK_INVALID = 'This sign-in link is not valid: it was used already, has expired (links last 15 minutes), or was never issued. Ask for a new one.';

export const loginRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: LoginRoutesOptions }> = async (app, { db, tokens, mailer, changes, publicUrl, signup }) => {
  await app.register(formBody, { bodyLimit: 16 * 1024 });
  const tags = ['Sign-in'];

  /** The mail for an address: a link, or (for accounts whose organisations all demand SSO) where to sign in instead. */
  async function loginMail(email: string, ip: string, returnTo: string | undefined) {
    const token = await issueMagicLink(db, email, ip);
    const user = await findUserByEmail(db, email);
    const memberships = user ? await membershipsOf(db, user.id) : [];
    const enforced = memberships.filter((m) => m.sso_enforced);
    if (memberships.length > 0 && enforced.length === memberships.length) {
      const links = enforced.map((m) => `${m.organization.name}: ${publicUrl()}/auth/sso?org=${encodeURIComponent(m.organization.slug)}`).join('\n');
      return { to: email, subject: 'Sign in to Aegis through your identity provider', text: `Your organisation signs in through its identity provider, not with e-mail links:\n\n${links}\n` };
    }
    const link = new URL('/auth/magic', publicUrl());
    link.searchParams.set('token', token);
    if (returnTo) link.searchParams.set('return_to', returnTo);
    const note = enforced.length > 0 ? `\n\n${enforced.map((m) => m.organization.name).join(', ')} can only be reached by signing in through its identity provider.` : '';
    return { to: email, subject: 'Your Aegis sign-in link', text: `Sign in to Aegis:\n\n${link.toString()}\n\nThe link works once, for 15 minutes. If you did not ask for it, ignore this mail.${note}` };
  }

  app.get('/auth/login', { schema: { tags, summary: 'Sign-in page', hide: true } }, async (_request, reply) =>
    sendPage(
      reply,
      200,
      'Sign in',
      `${signup === 'invite' ? `<p>${escapeHtml(INVITE_ONLY)}</p>` : ''}<form method="post" action="/auth/login"><label>E-mail <input type="email" name="email" required autocomplete="email"></label> <button type="submit">Send me a sign-in link</button></form><p><a href="/auth/google">Sign in with Google</a></p><form method="get" action="/auth/sso"><label>Organisation or work e-mail <input name="email" required></label> <button type="submit">Sign in with SSO</button></form>`,
    ),
  );

  app.post(
    '/auth/login',
    {
      config: { signIn: true },
      schema: {
        tags,
        summary: 'Send a magic link',
        description: `Sends a single-use sign-in link, valid 15 minutes, to the address. The answer is the same whether or not the address has an account (an unknown address signs up when it follows the link; on an invite-only server only with a pending invite). At most ${LINK_LIMITS.perAddress} links per address and ${LINK_LIMITS.perIp} per client IP in 15 minutes. Accepts JSON or a form.`,
        body: { type: 'object', additionalProperties: false, required: ['email'], properties: { email: emailSchema, return_to: returnToSchema } },
        response: { 202: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } } },
      },
    },
    async (request, reply) => {
      const { email, return_to: returnTo } = request.body;
      try {
        if (!(await withinLinkBudget(db, email, request.ip))) {
          reply.header('Retry-After', String(LINK_LIMITS.windowMs / 1000));
          throw new ApiError(429, 'rate_limited', 'too many sign-in links asked for this address or from this network; try again in 15 minutes', {
            retry_after_seconds: LINK_LIMITS.windowMs / 1000,
          });
        }
        const mail = await loginMail(email, request.ip, returnTo);
        // Sent after answering: the answer takes the same time whatever the address.
        void mailer.send(mail).catch((err: unknown) => request.log.error({ err }, 'sign-in mail could not be sent'));
      } catch (err) {
        return failForm(request, reply, err, 'Sign-in link not sent');
      }
      if (isFormPost(request)) return sendPage(reply, 200, 'Check your e-mail', `<p>${escapeHtml(LINK_SENT)}</p>`);
      return reply.code(202).send({ message: LINK_SENT });
    },
  );

  app.get(
    '/auth/magic',
    {
      schema: {
        tags,
        summary: 'Magic link landing page',
        description: 'Shows a button that signs in (POST /auth/magic). Following the link does not use it up, so mail scanners that fetch links cannot burn it.',
        querystring: { type: 'object', required: ['token'], properties: { token: tokenSchema, return_to: returnToSchema } },
      },
    },
    async (request, reply) => {
      const { token, return_to: returnTo } = request.query;
      return sendPage(reply, 200, 'Sign in to Aegis', postForm('/auth/magic', { token, ...(returnTo ? { return_to: returnTo } : {}) }, 'Sign in'));
    },
  );

  app.post(
    '/auth/magic',
    {
      config: { signIn: true },
      schema: {
        tags,
        summary: 'Sign in with a magic link',
        description: 'Uses the token up and sets the session cookie. A form post is redirected (303) to `return_to` (default `/api/v1/me`); JSON gets the account. Used, expired or forged tokens: 401. A new address with no invite on an invite-only server (AEGIS_SIGNUP=invite): 403 `signup_closed`, and the link stays unused.',
        body: { type: 'object', additionalProperties: false, required: ['token'], properties: { token: tokenSchema, return_to: returnToSchema } },
        response: { 200: signedInSchema },
      },
    },
    async (request, reply) => {
      const { token, return_to: returnTo } = request.body;
      let signedIn: { userId: string; email: string; orgId: string };
      try {
        if (!isTokenShaped(token)) throw new ApiError(401, 'unauthorized', LINK_INVALID);
        // One transaction: a refused sign-in (SSO required, sign-up closed) leaves the link and the account untouched.
        signedIn = await db.transaction().execute(async (trx) => {
          const email = await consumeMagicLink(trx, token);
          if (!email) throw new ApiError(401, 'unauthorized', LINK_INVALID);
          const { user } = await accountFor(trx, email, request.ip, { signup });
          return { userId: user.id, email: user.email, orgId: await organizationForSession(trx, user.id) };
        });
      } catch (err) {
        return failForm(request, reply, err, 'Could not sign in');
      }
      await signIn(db, tokens, request, reply, { userId: signedIn.userId, orgId: signedIn.orgId, method: 'magic_link' });
      if (isFormPost(request)) return reply.redirect(returnTo ?? DEFAULT_LANDING, 303);
      return { user: { id: signedIn.userId, email: signedIn.email }, organization_id: signedIn.orgId };
    },
  );

  app.post(
    '/auth/logout',
    {
      config: { auth: 'user' },
      schema: { tags, summary: 'Sign out everywhere', description: 'Ends every session of the account (spec 3.2) and clears the cookie. Needs the session cookie and a same-origin request.' },
    },
    async (request, reply) => {
      const principal = sessionOf(request);
      await changes.commit(db, async (trx) => {
        const ended = await revokeAllSessions(trx, reachOf(principal));
        await recordAudit(trx, { orgId: principal.organization.id, actor: principal.actor, ip: request.ip, action: 'user.logout', target: { type: 'user', id: principal.user.id }, metadata: { sessions_ended: ended } });
      });
      reply.clearCookie(SESSION_COOKIE, clearedCookieOptions);
      if (isFormPost(request)) return reply.redirect('/auth/login', 303);
      return reply.code(204).send();
    },
  );
};
