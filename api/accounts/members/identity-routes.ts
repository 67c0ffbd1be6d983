// Who is calling: GET /api/v1/me and GET /api/v1/orgs/current, for any valid key or session. A key
// answers from its cached principal; a session adds the person and their memberships (cached until
// a membership changes), so neither costs a query on the hot path.
//
// GET /auth/session is the browser's question "am I signed in?": the dashboard asks it on every
// load. Not being signed in is an answer there, not a failure, so it is a 200 `{signed_in: false}`
// (a 401 would be logged as an error by the browser on every signed-out page); signed in, it carries
// what GET /api/v1/me says, so the dashboard needs one request, not two.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { clearedCookieOptions, SESSION_COOKIE, sessionCookieOptions } from '../auth/cookies.ts';
import { principalOf } from '../auth/plugin.ts';
import type { Principal } from '../auth/principal.ts';
import { refusalError } from '../auth/session-scope.ts';
import { ROLES } from '../auth/roles.ts';
import { SCOPES } from '../auth/scopes.ts';
import { organizationSchema } from '../people/resources.ts';
import type { SessionAuthenticator } from '../sessions/session-authenticator.ts';
import { ENVIRONMENTS } from '../../../platform/db/environments.ts';

const meSchema = {
  type: 'object',
  required: ['type', 'api_key', 'user', 'organization', 'environment', 'livemode', 'role', 'scopes', 'memberships', 'session_id'],
  properties: {
    environment: { type: 'string', enum: ENVIRONMENTS, description: 'The environment the caller works in: a `svc_test_` key, or a session switched to test, sees only the sandbox.' },
    livemode: { type: 'boolean', description: '`environment` is live.' },
    type: { type: 'string', enum: ['api_key', 'session'], description: 'How the caller authenticated.' },
    api_key: {
      type: ['object', 'null'],
      description: 'The key, for API-key callers; null for sessions.',
      required: ['id', 'name', 'scopes'],
      properties: { id: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'array', items: { type: 'string', enum: SCOPES } } },
    },
    user: {
      type: ['object', 'null'],
      description: 'The person behind the session; null for API keys.',
      required: ['id', 'email', 'name'],
      properties: { id: { type: 'string' }, email: { type: 'string' }, name: { type: ['string', 'null'] } },
    },
    organization: { ...organizationSchema, description: 'The current organisation: the key’s, or the one the session works in.' },
    role: { type: ['string', 'null'], enum: [...ROLES, null], description: "The person's role in the current organisation; null for API keys." },
    scopes: { type: 'array', items: { type: 'string', enum: SCOPES }, description: 'What the caller may do (a role maps onto scopes).' },
    memberships: {
      type: 'array',
      description: "The person's organisations (empty for API keys); for a session signed in through an organisation's identity provider, that organisation only.",
      items: {
        type: 'object',
        required: ['organization', 'role', 'sso_enforced'],
        properties: { organization: organizationSchema, role: { type: 'string', enum: ROLES }, sso_enforced: { type: 'boolean' } },
      },
    },
    session_id: { type: ['string', 'null'], description: 'The current session; null for API keys.' },
  },
} as const;

const sessionProbeSchema = {
  type: 'object',
  required: ['signed_in', 'me'],
  properties: {
    signed_in: { type: 'boolean', description: 'Whether the request carries a live session cookie.' },
    me: { ...meSchema, type: ['object', 'null'], description: 'What GET /api/v1/me answers for this session; null when signed out.' },
  },
} as const;

export const identityRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { sessions: SessionAuthenticator } }> = async (app, { sessions }) => {
  const tags = ['Identity'];

  /** The body of GET /api/v1/me for a principal. */
  async function describe(principal: Principal) {
    const scopes = [...principal.scopes];
    const mode = { environment: principal.environment, livemode: principal.environment === 'live' };
    if (principal.kind === 'api_key') {
      return { type: 'api_key' as const, api_key: { id: principal.keyId, name: principal.keyName, scopes }, user: null, organization: principal.organization, ...mode, role: null, scopes, memberships: [], session_id: null };
    }
    const found = sessions.memberships(principal.user.id);
    const all = Array.isArray(found) ? found : await found;
    // A session an organisation's identity provider signed in is that organisation's only: the
    // person's other organisations are none of its business.
    const memberships = principal.boundOrgId === null ? all : all.filter((m) => m.organization.id === principal.boundOrgId);
    return {
      type: 'session' as const,
      api_key: null,
      user: principal.user,
      organization: principal.organization,
      ...mode,
      role: principal.role,
      scopes,
      memberships, // serialised by the response schema: only organization, role and sso_enforced leave
      session_id: principal.sessionId,
    };
  }

  app.get(
    '/api/v1/me',
    { config: { auth: 'authenticated' }, schema: { tags, summary: 'The caller', response: { 200: meSchema } } },
    async (request) => describe(principalOf(request)),
  );

  app.get(
    '/auth/session',
    {
      // Public: the session cookie is read here, where its absence or end is an answer (the auth
      // plugin would refuse it with a 401). API keys are not looked at: they ask GET /api/v1/me.
      config: { auth: 'public' },
      schema: {
        tags,
        summary: 'Whether this browser is signed in',
        description:
          'Always 200 for a browser with no session or an ended one (`signed_in: false`; an ended session’s cookie is cleared). Signed in, `me` is what GET /api/v1/me answers, and the session is refreshed as on any request. A session its organisation no longer accepts (SSO now required) is refused with 403 as on every route.',
        response: { 200: sessionProbeSchema },
      },
    },
    async (request, reply) => {
      const cookie = request.cookies[SESSION_COOKIE];
      const check = cookie === undefined ? null : await sessions.authenticate(cookie);
      if (!check) {
        if (cookie !== undefined) reply.clearCookie(SESSION_COOKIE, clearedCookieOptions);
        return { signed_in: false, me: null };
      }
      // The same steps as the auth plugin's for a session on any route (a GET: no CSRF check).
      if (check.refusal) throw refusalError(check.refusal, check.principal.organization);
      if (check.reissue) reply.setCookie(SESSION_COOKIE, await sessions.tokens.issue(check.principal.sessionId, check.principal.user.id), sessionCookieOptions);
      return { signed_in: true, me: await describe(check.principal) };
    },
  );

  app.get(
    '/api/v1/orgs/current',
    { config: { auth: 'authenticated' }, schema: { tags, summary: "The caller's organisation", response: { 200: organizationSchema } } },
    async (request) => principalOf(request).organization,
  );
};
