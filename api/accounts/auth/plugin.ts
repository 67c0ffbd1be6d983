// Authentication and authorisation for every route. Each /api route declares `config.auth`
// (public, authenticated, user, or a scope); a route that forgets is refused at start-up, so
// nothing is ever exposed by omission. A caller is an API key (Authorization: Bearer) or a signed-in
// person (the session cookie); both become a principal with scopes, checked the same way.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { ApiError } from '../../../platform/http/errors.ts';
import type { SessionAuthenticator } from '../sessions/session-authenticator.ts';
import { clearedCookieOptions, SESSION_COOKIE, sessionCookieOptions } from './cookies.ts';
import type { Authenticator } from '../keys/authenticator.ts';
import { fromOwnOrigin, SAFE_METHODS, sentByAnotherSite } from './csrf.ts';
import type { Principal } from './principal.ts';
import { grants, type AuthRequirement } from './scopes.ts';
import { refusalError } from './session-scope.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthRequirement;
    /** Changes the organisation itself (members, invites, SSO): refused in test mode. */
    organizationLevel?: boolean;
    /** Manages who may act (keys, members, invites, SSO, domains): writes refused to a key in its rotation grace period. */
    managesAccess?: boolean;
    /** A sign-in form post (it may start a session without one): refused when another site sent it (login CSRF). */
    signIn?: boolean;
    /** Why a browser post under /auth/ is legitimately cross-site (an identity provider posts it), instead of `signIn`. */
    crossSite?: string;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export interface AuthPluginOptions {
  authenticator: Authenticator;
  sessions: SessionAuthenticator;
  /** Aegis's public origin (scheme://host[:port]), for the CSRF check. */
  publicOrigin: () => string;
}

const unauthorized = (message: string) => new ApiError(401, 'unauthorized', message);

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

const authPlugin: FastifyPluginAsync<AuthPluginOptions> = async (app, { authenticator, sessions, publicOrigin }) => {
  app.decorateRequest('principal', null);

  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/api/') && route.config?.auth === undefined) {
      throw new Error(`route ${String(route.method)} ${route.url} does not declare config.auth`);
    }
    // Every browser post of the sign-in pages is CSRF-checked, or says why it cannot be.
    const methods = [route.method].flat();
    if (route.url.startsWith('/auth/') && methods.some((m) => !SAFE_METHODS.has(m)) && route.config?.auth === undefined && !route.config?.signIn && !route.config?.crossSite) {
      throw new Error(`route ${methods.join(',')} ${route.url} takes browser posts: declare config.signIn (CSRF-checked) or config.crossSite (why not)`);
    }
  });

  app.addHook('onRequest', async (request) => {
    if (!request.routeOptions.config.signIn || SAFE_METHODS.has(request.method)) return;
    if (sentByAnotherSite(request, publicOrigin())) {
      throw new ApiError(403, 'csrf_failed', 'sign-in forms are used from the pages Aegis shows for them, not from another site');
    }
  });

  async function keyPrincipal(value: string, reply: FastifyReply): Promise<Principal> {
    const principal = await authenticator.authenticate(value);
    if (!principal) {
      reply.header('WWW-Authenticate', 'Bearer error="invalid_token"');
      throw unauthorized('API key is not valid, or has been revoked');
    }
    return principal;
  }

  async function sessionPrincipal(cookie: string, request: FastifyRequest, reply: FastifyReply): Promise<Principal> {
    const check = await sessions.authenticate(cookie);
    if (!check) {
      reply.clearCookie(SESSION_COOKIE, clearedCookieOptions);
      throw unauthorized('your session has ended (expired, revoked or signed out): sign in again');
    }
    if (!SAFE_METHODS.has(request.method) && !fromOwnOrigin(request, publicOrigin())) {
      throw new ApiError(403, 'csrf_failed', 'a request made with the session cookie that changes something must come from Aegis itself (Origin header)');
    }
    const { principal } = check;
    if (check.refusal) throw refusalError(check.refusal, principal.organization);
    if (check.reissue) reply.setCookie(SESSION_COOKIE, await sessions.tokens.issue(principal.sessionId, principal.user.id), sessionCookieOptions);
    return principal;
  }

  app.addHook('onRequest', async (request, reply) => {
    const requirement = request.routeOptions.config.auth ?? 'public';
    if (requirement === 'public') return;
    const value = bearer(request);
    const cookie = value === undefined ? request.cookies[SESSION_COOKIE] : undefined;
    if (value === undefined && cookie === undefined) {
      reply.header('WWW-Authenticate', 'Bearer');
      throw unauthorized('missing credentials: send Authorization: Bearer <key>, or sign in');
    }
    const principal = value !== undefined ? await keyPrincipal(value, reply) : await sessionPrincipal(cookie ?? '', request, reply);
    request.principal = principal;
    if (principal.environment === 'test' && request.routeOptions.config.organizationLevel && !SAFE_METHODS.has(request.method)) {
      throw new ApiError(403, 'live_mode_required', 'this changes the organisation itself, which the sandbox cannot do: use a live key, or switch the session to live');
    }
    // A key being rotated out keeps working for its grace period, but must not be able to mint
    // keys, revoke its successor or change members and SSO: a leaked old key stays contained.
    if (principal.kind === 'api_key' && principal.rotating && request.routeOptions.config.managesAccess && !SAFE_METHODS.has(request.method)) {
      throw new ApiError(403, 'key_rotating', 'this key was rotated and is in its grace period: it still calls the API, but manages no keys, members or SSO; use its successor', { replaced: true });
    }
    if (requirement === 'authenticated') return;
    if (requirement === 'user') {
      if (principal.kind !== 'session') throw new ApiError(403, 'forbidden', 'this route belongs to a signed-in person; API keys have no sessions or invites');
      return;
    }
    if (!grants(principal.scopes, requirement)) {
      const who = principal.kind === 'session' ? `your role (${principal.role})` : 'this API key';
      throw new ApiError(403, 'forbidden', `${who} lacks the scope ${requirement}`, { required_scope: requirement });
    }
  });
};

export default fp(authPlugin, { name: 'aegis-auth', dependencies: ['@fastify/cookie'] });

/**
 * For a route plugin whose routes all belong to the organisation rather than to an environment's
 * data (members, invites, SSO): `app.addHook('onRoute', organizationLevel)`.
 */
export function organizationLevel(route: RouteOptions): void {
  route.config = { ...route.config, organizationLevel: true };
}

/** The caller of a route that requires authentication (the plugin guarantees it is set). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new ApiError(401, 'unauthorized', 'authentication required');
  return request.principal;
}

/** The signed-in person calling a route that declares `auth: 'user'`. */
export function sessionOf(request: FastifyRequest) {
  const principal = principalOf(request);
  if (principal.kind !== 'session') throw new ApiError(403, 'forbidden', 'this route belongs to a signed-in person');
  return principal;
}
