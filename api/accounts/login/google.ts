// Sign-in with Google, as OpenID Connect (authorization code + PKCE, state and nonce; the ID token
// verified against the issuer's keys — api/accounts/sign-in/oidc-client.ts):
//   GET /auth/google            starts: a flow row, the flow cookie, 302 to the provider
//   GET /auth/google/callback   the provider's answer: verified, then signs in like a magic link
// The account is the address Google vouches for (`email` with `email_verified: true`); a new
// address signs up as with a magic link (on an invite-only server: only with an invite). Organisations that enforce SSO refuse Google sign-ins of
// their members (403 sso_required, with where to sign in instead). The issuer is configurable
// (AEGIS_GOOGLE_ISSUER), so tests run a local OpenID provider. Without AEGIS_GOOGLE_CLIENT_ID both
// answer 404.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import type { Db } from '../../../platform/db/database.ts';
import { ApiError } from '../../../platform/http/errors.ts';
import { OidcClients, OidcDiscoveryError, OidcVerificationError, type OidcClientSettings } from '../sign-in/oidc-client.ts';
import { clearedCookieOptions, FLOW_COOKIE, flowCookieOptions } from '../auth/cookies.ts';
import type { SessionTokens } from '../sessions/session-token.ts';
import { signIn } from '../sessions/sign-in.ts';
import { finishFlow, startFlow } from '../sign-in/flows.ts';
import { accountFor, organizationForSession, type SignupMode } from '../sign-in/accounts.ts';
import { landingAfterSignIn, rememberReturnTo } from '../sign-in/return-to.ts';
import { callbackQuery, checkFlowCookie, FLOW_INVALID, oidcCallbackQuery } from '../sign-in/callbacks.ts';
import { returnToSchema } from '../sign-in/forms.ts';

export interface GoogleRoutesOptions {
  db: Db;
  tokens: SessionTokens;
  publicUrl: () => string;
  clientId: string | undefined;
  clientSecret: string | undefined;
  issuer: string;
  allowPrivateTargets: boolean;
  /** Who may get an account by signing in (AEGIS_SIGNUP). */
  signup: SignupMode;
}

export const googleRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: GoogleRoutesOptions }> = async (app, options) => {
  const { db, tokens, publicUrl } = options;
  const tags = ['Sign-in'];
  const clients = new OidcClients({ allowPrivate: options.allowPrivateTargets });
  const redirectUri = () => `${publicUrl()}/auth/google/callback`;

  function settings(): OidcClientSettings {
    if (!options.clientId || !options.clientSecret) throw new ApiError(404, 'not_found', 'Google sign-in is not configured (AEGIS_GOOGLE_CLIENT_ID and AEGIS_GOOGLE_CLIENT_SECRET)');
    return { issuer: options.issuer, clientId: options.clientId, clientSecret: options.clientSecret };
  }

  app.get(
    '/auth/google',
    {
      schema: {
        tags,
        summary: 'Sign in with Google',
        description:
          'Starts a Google sign-in (OpenID Connect, authorization code with PKCE): sets a short-lived cookie binding the sign-in to this browser and redirects (302) to Google. `return_to` (a path of this server) is where the browser lands once signed in. 404 when Google sign-in is not configured.',
        querystring: { type: 'object', properties: { return_to: returnToSchema } },
        response: { 302: { type: 'null', description: 'Redirect to the identity provider.' } },
      },
    },
    async (request, reply) => {
      const google = settings();
      const checks = OidcClients.newChecks();
      const { state } = await startFlow(db, { kind: 'google', purpose: 'login', ...checks });
      let url: string;
      try {
        url = await clients.authorizationUrl(google, { redirectUri: redirectUri(), state, ...checks });
      } catch (err) {
        if (!(err instanceof OidcDiscoveryError)) throw err;
        request.log.error({ err }, 'Google sign-in: the OpenID issuer could not be discovered');
        throw new ApiError(503, 'unavailable', 'Google sign-in is unavailable right now (the identity provider could not be reached); try again later or use an e-mail link');
      }
      reply.setCookie(FLOW_COOKIE, state, flowCookieOptions);
      rememberReturnTo(request, reply, request.query.return_to);
      return reply.redirect(url, 302);
    },
  );

  app.get(
    '/auth/google/callback',
    {
      schema: {
        tags,
        summary: 'Google sign-in callback',
        description:
          'Where Google sends the browser back. Checks the state against the cookie and the flow, redeems the code with the PKCE verifier, and verifies the ID token (signature against the issuer keys, issuer, audience, expiry, nonce). The account is the verified e-mail address; a new address signs up (on an invite-only server only with a pending invite, else 403 `signup_closed`). Redirects (303) with the session cookie to the `return_to` the sign-in started with, else the default landing page. Bad state or token: 401; unverified address: 403; an organisation that enforces SSO: 403 `sso_required`.',
        querystring: oidcCallbackQuery,
        response: { 303: { type: 'null', description: 'Signed in: redirect to the landing page.' } },
      },
    },
    async (request, reply) => {
      const google = settings();
      const state = checkFlowCookie(request, reply, request.query.state);
      const flow = await finishFlow(db, state, 'google');
      if (!flow?.code_verifier || !flow.nonce) throw new ApiError(401, 'unauthorized', FLOW_INVALID);
      let identity;
      try {
        identity = await clients.callback(google, { redirectUri: redirectUri(), query: callbackQuery(request), state, codeVerifier: flow.code_verifier, nonce: flow.nonce });
      } catch (err) {
        if (err instanceof OidcDiscoveryError) throw new ApiError(503, 'unavailable', 'Google sign-in is unavailable right now (the identity provider could not be reached)');
        if (!(err instanceof OidcVerificationError)) throw err;
        request.log.warn({ err: err.message }, 'Google sign-in refused');
        throw new ApiError(401, 'unauthorized', `Google sign-in failed: ${err.message}`);
      }
      if (!identity.email) {
        throw new ApiError(403, 'forbidden', `Google has not verified ${identity.claimedEmail ?? 'an e-mail address for this account'}; verify it with Google, or sign in with an e-mail link`);
      }
      const email = identity.email;
      // One transaction: a refused sign-in (SSO required, sign-up closed) creates no account.
      const signedIn = await db.transaction().execute(async (trx) => {
        const { user } = await accountFor(trx, email, request.ip, { name: identity.name, signup: options.signup });
        return { userId: user.id, orgId: await organizationForSession(trx, user.id) };
      });
      await signIn(db, tokens, request, reply, { userId: signedIn.userId, orgId: signedIn.orgId, method: 'google', name: identity.name });
      return reply.redirect(landingAfterSignIn(request, reply), 303);
    },
  );
};
