// A person's own sessions (spec 2.8, 5.3: Settings, Account, Sessions) and which organisation the
// current one works in. These routes belong to people: API keys get 403. A session an
// organisation's identity provider signed in sees and ends only that organisation's sessions of
// the person, and cannot switch organisation (session-scope.ts).
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { recordAudit } from '../../../platform/audit-log.ts';
import type { AuthChanges } from '../auth/auth-changes.ts';
import { sessionOf } from '../auth/plugin.ts';
import { reachOf, refusalError, refusalFor } from '../auth/session-scope.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { SessionRow } from '../../../platform/db/schema.ts';
import { notFound } from '../../../platform/http/errors.ts';
import { decodeCursor, pageLimit, toPage } from '../../../platform/http/pagination.ts';
import { listResponseSchema, pageQueryProperties, timestampSchema } from '../../../platform/http/schemas.ts';
import { organizationSchema } from '../people/resources.ts';
import { membershipsOf } from '../people/org-store.ts';
import { clearedCookieOptions, SESSION_COOKIE } from '../auth/cookies.ts';
import { listSessions, revokeSession, SIGN_IN_METHODS, switchSessionEnvironment, switchSessionOrganization } from './session-store.ts';
import { ENVIRONMENTS, ensureSandbox } from '../../../platform/db/environments.ts';

const sessionSchema = {
  type: 'object',
  required: ['id', 'browser', 'user_agent', 'ip', 'method', 'organization_id', 'environment', 'current', 'created_at', 'last_seen_at', 'expires_at'],
  properties: {
    id: { type: 'string' },
    browser: { type: ['string', 'null'], description: 'Browser and system, from the user agent (e.g. `Chrome 156 on Linux`).' },
    user_agent: { type: ['string', 'null'] },
    ip: { type: ['string', 'null'], description: 'Client IP at sign-in.' },
    method: { type: 'string', enum: SIGN_IN_METHODS, description: 'How the person signed in.' },
    organization_id: { type: 'string', description: 'The organisation the session works in.' },
    environment: { type: 'string', enum: ENVIRONMENTS, description: 'The environment it works in (PUT /api/v1/me/current-environment).' },
    current: { type: 'boolean', description: 'The session making this request.' },
    created_at: timestampSchema,
    last_seen_at: { ...timestampSchema, description: 'Last request (updated within about 10 s).' },
    expires_at: { ...timestampSchema, description: '30 days after the last request.' },
  },
} as const;

const toSession = (row: SessionRow, currentId: string) => ({
  id: row.id,
  browser: row.browser,
  user_agent: row.user_agent,
  ip: row.ip,
  method: row.method as (typeof SIGN_IN_METHODS)[number],
  organization_id: row.org_id,
  environment: row.environment,
  current: row.id === currentId,
  created_at: row.created_at.toISOString(),
  last_seen_at: row.last_seen_at.toISOString(),
  expires_at: row.expires_at.toISOString(),
});

export const sessionRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db; changes: AuthChanges } }> = async (app, { db, changes }) => {
  const tags = ['Sessions'];

  app.get(
    '/api/v1/me/sessions',
    {
      config: { auth: 'user' },
      schema: { tags, summary: 'List my sessions', querystring: { type: 'object', properties: pageQueryProperties }, response: { 200: listResponseSchema(sessionSchema) } },
    },
    async (request) => {
      const principal = sessionOf(request);
      const limit = pageLimit(request.query);
      const rows = await listSessions(db, reachOf(principal), decodeCursor(request.query.cursor), limit);
      return toPage(rows, limit, (row) => toSession(row, principal.sessionId));
    },
  );

  app.delete(
    '/api/v1/me/sessions/:id',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Revoke one of my sessions',
        description: 'It stops working at once, on every API process.',
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } },
        response: { 200: sessionSchema },
      },
    },
    async (request, reply) => {
      const principal = sessionOf(request);
      const revoked = await changes.commit(db, async (trx) => {
        const row = await revokeSession(trx, reachOf(principal), request.params.id);
        if (row) await recordAudit(trx, { orgId: principal.organization.id, actor: principal.actor, ip: request.ip, action: 'session.revoked', target: { type: 'session', id: row.id }, metadata: { browser: row.browser, ip: row.ip } });
        return row;
      });
      if (!revoked) throw notFound('session');
      if (revoked.id === principal.sessionId) reply.clearCookie(SESSION_COOKIE, clearedCookieOptions);
      return toSession(revoked, principal.sessionId);
    },
  );

  app.put(
    '/api/v1/me/current-organization',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Switch organisation',
        description:
          "Makes the session work in another organisation the person belongs to. A session signed in through an organisation's identity provider works in that organisation only: any other answers 404, as one the person does not belong to (sign in again by e-mail link to reach it). An organisation that enforces SSO needs a session that came through its identity provider (403 `sso_required`).",
        body: { type: 'object', additionalProperties: false, required: ['organization_id'], properties: { organization_id: { type: 'string', minLength: 1, maxLength: 64 } } },
        response: { 200: organizationSchema },
      },
    },
    async (request) => {
      const principal = sessionOf(request);
      const target = (await membershipsOf(db, principal.user.id)).find((m) => m.organization.id === request.body.organization_id);
      if (!target) throw notFound('organization');
      const refusal = refusalFor(principal.boundOrgId, { id: target.organization.id, ssoEnforced: target.sso_enforced });
      // A bound session learns nothing about the person's other organisations: 404, as for a stranger's.
      if (refusal === 'sign_in_required') throw notFound('organization');
      if (refusal) throw refusalError(refusal, target.organization);
      await changes.commit(db, (trx) => switchSessionOrganization(trx, principal.sessionId, target.organization.id));
      return target.organization;
    },
  );

  app.put(
    '/api/v1/me/current-environment',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Switch environment',
        description: "Makes the session work in its organisation's live data or its sandbox (`test`): the dashboard's test-mode toggle. Switching organisation starts in live.",
        body: { type: 'object', additionalProperties: false, required: ['environment'], properties: { environment: { type: 'string', enum: ENVIRONMENTS } } },
        response: {
          200: { type: 'object', required: ['environment', 'livemode'], properties: { environment: { type: 'string', enum: ENVIRONMENTS }, livemode: { type: 'boolean' } } },
        },
      },
    },
    async (request) => {
      const principal = sessionOf(request);
      const { environment } = request.body;
      await changes.commit(db, async (trx) => {
        if (environment === 'test') await ensureSandbox(trx, principal.organization.id);
        await switchSessionEnvironment(trx, principal.sessionId, environment);
      });
      return { environment, livemode: environment === 'live' };
    },
  );
};
