// /api/v1/api-keys: create, list, get, rotate, revoke. Admin only. Key values appear in exactly two
// responses (create and rotate) and nowhere else: not in lists, logs or the audit trail. A key never
// grows power (docs/security.md): it gets no scope its maker lacks, stays capped by the role of the
// person behind it, and a key in its rotation grace period manages no keys.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import type { Db } from '../../../platform/db/database.ts';
import { auditRequest } from '../../../platform/audit-log.ts';
import type { Authenticator } from './authenticator.ts';
import { principalOf } from '../auth/plugin.ts';
import { grants, SCOPES } from '../auth/scopes.ts';
import { ApiError, notFound, conflict } from '../../../platform/http/errors.ts';
import { dataSpaceOf, ENVIRONMENTS } from '../../../platform/db/environments.ts';
import { parseEnumList } from '../../../platform/http/filters.ts';
import { decodeCursor, pageLimit, toPage } from '../../../platform/http/pagination.ts';
import { filterParam, listResponseSchema, pageQueryProperties } from '../../../platform/http/schemas.ts';
import { requirePlan, type Plan } from '../people/plans.ts';
import { findKey, insertKey, KEY_STATUSES, keyStatus, listKeys, revokeKey, rotateKey } from './key-store.ts';
import { apiKeySchema, issuedKeySchema, toApiKey } from './key-resource.ts';
import { announceDeliveries, recordEvents } from '../../../platform/events/event-store.ts';

/** Plans on which `admin` keys may be created (spec 5.2). */
export const ADMIN_KEY_PLANS: readonly Plan[] = ['pro', 'enterprise'];

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;

export interface KeyRoutesOptions {
  db: Db;
  authenticator: Authenticator;
}

export const keyRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: KeyRoutesOptions }> = async (app, { db, authenticator }) => {
  const tags = ['API keys'];

  app.post(
    '/api/v1/api-keys',
    {
      config: { auth: 'admin', managesAccess: true },
      schema: {
        tags,
        summary: 'Create an API key',
        description:
          'A key with scope `admin` needs the pro or enterprise plan (403 `plan_required` otherwise, naming them in `details.required_plans`). `environment: test` makes a `svc_test_` key, which sees only the sandbox; a test key or session can make only test keys (403 `live_mode_required`). A key never has more power than the person behind it: it gets no scope its maker lacks (403), is capped by that person’s role at every use (a demoted admin’s admin key acts as the new role; a removed member’s keys stop working), and never holds owner powers. A key in its rotation grace period cannot create, rotate or revoke keys (403 `key_rotating`).',
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['name', 'scopes'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 100, description: 'Human-readable name.' },
            scopes: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: SCOPES }, description: 'Scopes granted.' },
            environment: { type: 'string', enum: ENVIRONMENTS, description: "Where the key works: `live` or `test` (the sandbox). Defaults to the caller's environment." },
          },
        },
        response: { 201: issuedKeySchema },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const beyond = request.body.scopes.filter((scope) => !grants(principal.scopes, scope));
      if (beyond.length > 0) throw new ApiError(403, 'forbidden', `a key cannot be given scopes its maker lacks: ${beyond.join(', ')}`, { scopes: beyond });
      const environment = request.body.environment ?? principal.environment;
      if (environment === 'live' && principal.environment === 'test') throw new ApiError(403, 'live_mode_required', 'the sandbox cannot make live keys: use a live key, or switch the session to live');
      // Read from the database, not the cached principal: a plan change takes effect at once.
      if (request.body.scopes.includes('admin')) await requirePlan(db, principal.orgId, ADMIN_KEY_PLANS, 'an admin API key');
      const orgId = dataSpaceOf(principal.organization.id, environment);
      const issued = await db.transaction().execute(async (trx) => {
        const ownerUserId = principal.kind === 'session' ? principal.user.id : principal.ownerUserId;
        const created = await insertKey(trx, { orgId, name: request.body.name, scopes: request.body.scopes, createdBy: principal.actor.id, ownerUserId });
        await auditRequest(trx, request, {
          action: 'api_key.created',
          target: { type: 'api_key', id: created.row.id },
          metadata: { name: created.row.name, scopes: request.body.scopes },
        });
        // The event belongs with the key; the audit entry with whoever made it.
        const events = await recordEvents(trx, [{ orgId, type: 'api_key.created', object: toApiKey(created.row) }]);
        return { ...created, deliveries: events.deliveries };
      });
      announceDeliveries(db, issued.deliveries);
      return reply.code(201).send({ ...toApiKey(issued.row), key: issued.value });
    },
  );

  app.get(
    '/api/v1/api-keys',
    {
      config: { auth: 'admin', managesAccess: true },
      schema: {
        tags,
        summary: 'List API keys',
        querystring: { type: 'object', properties: { ...pageQueryProperties, status: filterParam('Filter by status: active, rotating, revoked.') } },
        response: { 200: listResponseSchema(apiKeySchema) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const limit = pageLimit(request.query);
      const rows = await listKeys(db, {
        orgId: principal.orgId,
        after: decodeCursor(request.query.cursor),
        limit,
        statuses: parseEnumList('status', request.query.status, KEY_STATUSES),
      });
      return toPage(rows, limit, toApiKey);
    },
  );

  app.get(
    '/api/v1/api-keys/:id',
    { config: { auth: 'admin', managesAccess: true }, schema: { tags, summary: 'Get an API key', params: idParams, response: { 200: apiKeySchema } } },
    async (request) => {
      const row = await findKey(db, principalOf(request).orgId, request.params.id);
      if (!row) throw notFound('API key');
      return toApiKey(row);
    },
  );

  app.post(
    '/api/v1/api-keys/:id/rotate',
    {
      config: { auth: 'admin', managesAccess: true },
      schema: {
        tags,
        summary: 'Rotate an API key',
        description: 'Issues a successor with the same name and scopes. The old key keeps working for 7 days, then is revoked.',
        params: idParams,
        response: { 201: issuedKeySchema },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { id } = request.params;
      const rotated = await db.transaction().execute(async (trx) => {
        const result = await rotateKey(trx, principal.orgId, id, principal.actor.id);
        if (!result) return undefined;
        await auditRequest(trx, request, {
          action: 'api_key.rotated',
          target: { type: 'api_key', id },
          metadata: { successor: result.next.row.id, old_key_expires_at: result.old.expires_at?.toISOString() },
        });
        const events = await recordEvents(trx, [{ orgId: principal.orgId, type: 'api_key.created', object: toApiKey(result.next.row) }]);
        return { ...result, deliveries: events.deliveries };
      });
      if (!rotated) {
        const existing = await findKey(db, principal.orgId, id);
        if (!existing) throw notFound('API key');
        throw conflict(keyStatus(existing) === 'revoked' ? 'API key is revoked' : 'API key was already rotated; rotate its successor instead', {
          replaced_by: existing.replaced_by,
        });
      }
      announceDeliveries(db, rotated.deliveries);
      authenticator.invalidate(rotated.old.key_hash);
      return reply.code(201).send({ ...toApiKey(rotated.next.row), key: rotated.next.value });
    },
  );

  app.delete(
    '/api/v1/api-keys/:id',
    {
      config: { auth: 'admin', managesAccess: true },
      schema: { tags, summary: 'Revoke an API key', description: 'Takes effect at once.', params: idParams, response: { 200: apiKeySchema } },
    },
    async (request) => {
      const principal = principalOf(request);
      const { id } = request.params;
      const outcome = await db.transaction().execute(async (trx) => {
        const result = await revokeKey(trx, principal.orgId, id);
        if (!result?.changed) return { row: result?.row, deliveries: 0 };
        await auditRequest(trx, request, { action: 'api_key.revoked', target: { type: 'api_key', id } });
        const events = await recordEvents(trx, [{ orgId: principal.orgId, type: 'api_key.revoked', object: toApiKey(result.row) }]);
        return { row: result.row, deliveries: events.deliveries };
      });
      announceDeliveries(db, outcome.deliveries);
      const revoked = outcome.row;
      if (!revoked) throw notFound('API key');
      authenticator.invalidate(revoked.key_hash);
      return toApiKey(revoked);
    },
  );
};
