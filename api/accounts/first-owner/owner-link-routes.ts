// The first-owner link the server prints on a fresh install (first-run.ts):
//   GET  /auth/first-owner?token=   a page asking for the owner's address (a GET uses nothing up:
//                                   link previewers fetch links)
//   POST /auth/first-owner          names that address the owner of `default` and signs the browser in
// The link proves its holder can read the server's log or outbox, not that they control the
// address they type. So the session it starts is bound to `default` (method `owner_link`, like an
// identity provider's session is bound to its organisation): it can never reach the account's
// other organisations, which only a sign-in that proves the address (an e-mail link, Google) may.
import formBody from '@fastify/formbody';
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import type { Db } from '../../../platform/db/database.ts';
import { ApiError } from '../../../platform/http/errors.ts';
import type { AuthChanges } from '../auth/auth-changes.ts';
import type { SessionTokens } from '../sessions/session-token.ts';
import { signIn } from '../sessions/sign-in.ts';
import { emailSchema, failForm, isFormPost, signedInSchema } from '../sign-in/forms.ts';
import { acceptsHtml, escapeHtml, sendPage } from '../sign-in/pages.ts';
import { OWNER_LINK_PATH } from './first-run.ts';
import { findOwnerLink, useOwnerLink, type OwnerLink, type OwnerLinkProblem } from './owner-links.ts';
import { findDefaultOrganization, nameFirstOwner } from './ownership.ts';

export interface OwnerLinkRoutesOptions {
  db: Db;
  tokens: SessionTokens;
  changes: AuthChanges;
}

const tokenSchema = { type: 'string', minLength: 1, maxLength: 200, description: 'The token from the owner link.' } as const;
/** Where the new owner lands: the dashboard. */
const OWNER_LANDING = '/';

const PROBLEMS: Record<OwnerLinkProblem, string> = {
  invalid: 'This owner link is not valid for this server: it was never issued here, or it was not copied whole. Copy the whole link from this server’s log or outbox.',
  used: 'This owner link was used already: it works once. Sign in with your e-mail address instead.',
  expired: 'This owner link has expired (owner links last 24 hours): restart the server to print a new one, or start it with AEGIS_OWNER_EMAIL.',
};

/** 401 naming what is wrong with the link; `details.reason` is invalid, used or expired. */
const unusableLink = (problem: OwnerLinkProblem): ApiError => new ApiError(401, 'unauthorized', PROBLEMS[problem], { reason: problem });

/** 409 once `default` has an owner: every owner link is dead from then on. */
const ownerExists = (): ApiError =>
  new ApiError(409, 'conflict', 'The organisation `default` has an owner already, so owner links no longer work: sign in with your e-mail address, or ask the owner for an invite.', { reason: 'owner_exists' });

/**
 * The link and its organisation, still ownerless. With `lock` (in a transaction) both stay locked
 * until it ends — `default` first, in the order start-up locks them, so the two never deadlock.
 */
async function usableLink(db: Db, token: string, lock: boolean): Promise<{ link: OwnerLink; orgId: string; orgName: string }> {
  const org = await findDefaultOrganization(db, { lock });
  const link = await findOwnerLink(db, token, { lock });
  if (typeof link === 'string') throw unusableLink(link);
  // An organisation renamed away from `default` is not what the link was printed for.
  if (!org || org.id !== link.orgId) throw unusableLink('invalid');
  if (org.owned) throw ownerExists();
  return { link, orgId: org.id, orgName: org.name };
}

export const ownerLinkRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: OwnerLinkRoutesOptions }> = async (app, { db, tokens, changes }) => {
  await app.register(formBody, { bodyLimit: 16 * 1024 });
  const tags = ['Sign-in'];

  app.get(
    OWNER_LINK_PATH,
    {
      schema: {
        tags,
        summary: 'First-owner link landing page',
        hide: true,
        querystring: { type: 'object', required: ['token'], properties: { token: tokenSchema } },
      },
    },
    async (request, reply) => {
      const { token } = request.query;
      let orgName: string;
      try {
        // Read only (no transaction, no lock): showing the page changes nothing.
        ({ orgName } = await usableLink(db, token, false));
      } catch (err) {
        if (!(err instanceof ApiError) || !acceptsHtml(request)) throw err;
        return sendPage(reply, err.statusCode, 'Owner link not usable', `<p>${escapeHtml(err.message)}</p><p><a href="/auth/login">Sign in</a></p>`);
      }
      return sendPage(
        reply,
        200,
        `Become the owner of ${orgName}`,
        `<p>This server's organisation <code>default</code> (${escapeHtml(orgName)}) has no owner yet. Enter your e-mail address to become its owner; you are signed in at once. The link works once.</p>` +
          `<form method="post" action="${OWNER_LINK_PATH}"><input type="hidden" name="token" value="${escapeHtml(token)}"><label>E-mail <input type="email" name="email" required autocomplete="email"></label> <button type="submit">Become the owner</button></form>`,
      );
    },
  );

  app.post(
    OWNER_LINK_PATH,
    {
      config: { signIn: true },
      schema: {
        tags,
        summary: 'Claim a fresh server with its first-owner link',
        description:
          'Uses the one-time link the server printed at start-up while the organisation `default` had no owner: the address becomes its owner (the account is created when missing) and a session starts in `default`, bound to it (method `owner_link`: the link does not prove the address, so the session reaches no other organisation). A form post is redirected (303) to the dashboard; JSON gets the account. Unknown, used or expired links: 401 with `details.reason`; once `default` has an owner: 409 (`owner_exists`). Audited as `member.first_owner`.',
        body: { type: 'object', additionalProperties: false, required: ['token', 'email'], properties: { token: tokenSchema, email: emailSchema } },
        response: { 200: signedInSchema },
      },
    },
    async (request, reply) => {
      const { token, email } = request.body;
      let owner: { userId: string; email: string; orgId: string };
      try {
        // One transaction: a refused claim leaves the link, the account and `default` as they were.
        owner = await changes.commit(db, async (trx) => {
          const { link, orgId } = await usableLink(trx, token, true);
          await useOwnerLink(trx, link.id);
          const { user } = await nameFirstOwner(trx, { orgId, email, actor: { type: 'system', id: 'owner-link' }, ip: request.ip, via: 'owner_link' });
          return { userId: user.id, email: user.email, orgId };
        });
      } catch (err) {
        return failForm(request, reply, err, 'Could not claim this server');
      }
      await signIn(db, tokens, request, reply, { userId: owner.userId, orgId: owner.orgId, method: 'owner_link', ssoOrgId: owner.orgId });
      if (isFormPost(request)) return reply.redirect(OWNER_LANDING, 303);
      return { user: { id: owner.userId, email: owner.email }, organization_id: owner.orgId };
    },
  );
};
