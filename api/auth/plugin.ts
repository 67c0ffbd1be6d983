// Authentication and authorisation for every route. Each /api route declares `config.auth`
// (public, authenticated, or a scope); a route that forgets is refused at start-up, so nothing is
// ever exposed by omission.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { ApiError } from '../http/errors.ts';
import type { Authenticator, Principal } from './authenticator.ts';
import { grants, type AuthRequirement } from './scopes.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthRequirement;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export interface AuthPluginOptions {
  authenticator: Authenticator;
}

const unauthorized = (message: string) => new ApiError(401, 'unauthorized', message);

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

const authPlugin: FastifyPluginAsync<AuthPluginOptions> = async (app, { authenticator }) => {
  app.decorateRequest('principal', null);

  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/api/') && route.config?.auth === undefined) {
      throw new Error(`route ${String(route.method)} ${route.url} does not declare config.auth`);
    }
  });

  app.addHook('onRequest', async (request, reply) => {
    const requirement = request.routeOptions.config.auth ?? 'public';
    if (requirement === 'public') return;
    const value = bearer(request);
    if (!value) {
      reply.header('WWW-Authenticate', 'Bearer');
      throw unauthorized('missing API key: send Authorization: Bearer <key>');
    }
    const principal = await authenticator.authenticate(value);
    if (!principal) {
      reply.header('WWW-Authenticate', 'Bearer error="invalid_token"');
      throw unauthorized('API key is not valid, or has been revoked');
    }
    request.principal = principal;
    if (requirement !== 'authenticated' && !grants(principal.scopes, requirement)) {
      throw new ApiError(403, 'forbidden', `this API key lacks the scope ${requirement}`, { required_scope: requirement });
    }
  });
};

export default fp(authPlugin, { name: 'aegis-auth' });

/** The caller of a route that requires authentication (the plugin guarantees it is set). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new ApiError(401, 'unauthorized', 'authentication required');
  return request.principal;
}
