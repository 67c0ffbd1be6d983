// Following an invite link from the mail, in a browser:
//   GET  /auth/invite?token=   a page with a "Join <organisation>" button (a GET changes nothing:
//                              mail scanners fetch links)
//   POST /auth/invite/accept   joins and signs in. The token was mailed to the invited address, so
//                              holding it proves control of that address, as a magic link does: an
//                              unknown address gets an account, a known one is signed in.
// A form post gets HTML back (a redirect on success), a JSON body gets JSON.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import type { AuthChanges } from '../auth/auth-changes.ts';
import { ssoRequired } from '../auth/sso-required.ts';
import { isTokenShaped } from '../../../platform/crypto/tokens.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { InviteRow } from '../../../platform/db/schema.ts';
import { ApiError } from '../../../platform/http/errors.ts';
import { joinByInvite } from '../sign-in/accounts.ts';
import { acceptsHtml, escapeHtml, postForm, sendPage } from '../sign-in/pages.ts';
import { DEFAULT_LANDING, failForm, isFormPost, returnToSchema, signedInSchema } from '../sign-in/forms.ts';
import { signIn } from '../sessions/sign-in.ts';
import type { SessionTokens } from '../sessions/session-token.ts';
import { ensureUser } from '../people/user-store.ts';
import { findInviteByToken, inviteStatus, pendingInvitesFor, type InviteStatus } from '../people/invite-store.ts';
import { membershipsOf } from '../people/org-store.ts';

export type UnusableReason = Exclude<InviteStatus, 'pending'> | 'invalid';

const UNUSABLE: Record<Exclude<UnusableReason, 'accepted'> | 'used', string> = {
  invalid: 'This invite link is not valid: it was never issued, or it was not copied whole. Copy the whole link from the mail, or ask for a new invite.',
  used: 'This invite was accepted already: sign in to reach the organisation.',
  revoked: 'This invite was withdrawn by an administrator of the organisation: ask them for a new one.',
  expired: 'This invite has expired (invites last 7 days): ask an administrator of the organisation for a new one.',
};

/** 401 saying why an invite token cannot be used; `details.reason` is expired, used, revoked or invalid. */
export function unusableInvite(reason: UnusableReason): ApiError {
  const key = reason === 'accepted' ? 'used' : reason;
  return new ApiError(401, 'unauthorized', UNUSABLE[key], { reason: key });
}

/** The pending invite behind a token, or a 401 naming why it cannot be used. */
export async function pendingInviteByToken(db: Db, token: string): Promise<InviteRow> {
  const invite = isTokenShaped(token) ? await findInviteByToken(db, token) : undefined;
  if (!invite) throw unusableInvite('invalid');
  const status = inviteStatus(invite);
  if (status !== 'pending') throw unusableInvite(status);
  return invite;
}

export interface InvitePageOptions {
  db: Db;
  tokens: SessionTokens;
  changes: AuthChanges;
}

const tokenSchema = { type: 'string', minLength: 1, maxLength: 200, description: 'The token from the invite link.' } as const;
/** Where the link's page sends a person who joined: the dashboard's home. */
const INVITE_LANDING = '/';

export const invitePageRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: InvitePageOptions }> = async (app, { db, tokens, changes }) => {
  const tags = ['Members'];

  app.get(
    '/auth/invite',
    {
      schema: {
        tags,
        summary: 'Invite link landing page',
        description: 'Shows whom the invite is for and a button that joins (POST /auth/invite/accept). Following the link uses nothing up.',
        querystring: { type: 'object', required: ['token'], properties: { token: tokenSchema } },
      },
    },
    async (request, reply) => {
      const { token } = request.query;
      let invite: InviteRow;
      try {
        invite = await pendingInviteByToken(db, token);
      } catch (err) {
        // A browser gets a page; anything else the error envelope.
        if (!(err instanceof ApiError) || !acceptsHtml(request)) throw err;
        return sendPage(reply, err.statusCode, 'Invite not usable', `<p>${escapeHtml(err.message)}</p><p><a href="/auth/login">Sign in</a></p>`);
      }
      const org = await db.selectFrom('organizations').select('name').where('id', '=', invite.org_id).executeTakeFirstOrThrow();
      return sendPage(
        reply,
        200,
        `Join ${org.name}`,
        // A person following the mailed link lands in the dashboard once joined.
        `<p>${escapeHtml(invite.email)} is invited to join ${escapeHtml(org.name)} on Aegis as ${escapeHtml(invite.role)}.</p>${postForm('/auth/invite/accept', { token, return_to: INVITE_LANDING }, `Join ${org.name}`)}`,
      );
    },
  );

  app.post(
    '/auth/invite/accept',
    {
      config: { signIn: true },
      schema: {
        tags,
        summary: 'Accept an invite from its link',
        description:
          'Joins the organisation as the invited address (creating the account when the address has none) and starts a session there. A form post is redirected (303) to `return_to` (the page of the link sends `/`, the dashboard; default `/api/v1/me`); JSON gets the account. Used, revoked, expired or forged tokens: 401 with `details.reason`. An organisation that enforces SSO keeps the membership but sends the person to its identity provider (403 `sso_required`).',
        body: { type: 'object', additionalProperties: false, required: ['token'], properties: { token: tokenSchema, return_to: returnToSchema } },
        response: { 200: signedInSchema },
      },
    },
    async (request, reply) => {
      let joined: { userId: string; email: string; orgId: string };
      try {
        joined = await changes.commit(db, async (trx) => {
          const invite = await pendingInviteByToken(trx, request.body.token);
          const { user, created } = await ensureUser(trx, invite.email);
          if (!(await joinByInvite(trx, invite, user.id, request.ip))) throw unusableInvite('accepted');
          // A new address signs up here: like a sign-up by magic link, it joins every organisation
          // that invited it (and gets no organisation of its own).
          if (created) for (const other of await pendingInvitesFor(trx, user.email)) await joinByInvite(trx, other, user.id, request.ip);
          return { userId: user.id, email: user.email, orgId: invite.org_id };
        });
        const membership = (await membershipsOf(db, joined.userId)).find((m) => m.organization.id === joined.orgId);
        // The membership stands; only a sign-in through the organisation's identity provider may use it.
        if (membership?.sso_enforced) throw ssoRequired(membership.organization);
      } catch (err) {
        return failForm(request, reply, err, 'Could not join');
      }
      await signIn(db, tokens, request, reply, { userId: joined.userId, orgId: joined.orgId, method: 'invite' });
      if (isFormPost(request)) return reply.redirect(request.body.return_to ?? DEFAULT_LANDING, 303);
      return { user: { id: joined.userId, email: joined.email }, organization_id: joined.orgId };
    },
  );
};
