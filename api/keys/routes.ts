// /api/v1/api-keys: create, list, get, rotate, revoke. Admin only. Key values appear in exactly two
// responses (create and rotate) and nowhere else: not in lists, logs or the audit trail.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import type { Db } from '../db/database.ts';
import type { ApiKeyRow } from '../db/schema.ts';
import { auditRequest } from '../audit/audit-log.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { principalOf } from '../auth/plugin.ts';
import { SCOPES, type Scope } from '../auth/scopes.ts';
import { notFound, conflict } from '../http/errors.ts';
import { parseEnumList } from '../http/filters.ts';
import { decodeCursor, pageLimit, toPage } from '../http/pagination.ts';
import { filterParam, listResponseSchema, nullableTimestampSchema, pageQueryProperties, timestampSchema } from '../http/schemas.ts';
import { requirePlan, type Plan } from '../orgs/plans.ts';
import { findKey, insertKey, KEY_STATUSES, keyStatus, listKeys, revokeKey, rotateKey } from './key-store.ts';

const apiKeySchema = {
  type: 'object',
  required: ['id', 'name', 'prefix', 'last4', 'scopes', 'status', 'created_at', 'last_used_at', 'expires_at', 'revoked_at', 'replaced_by'],
  properties: {
    id: { type: 'string', description: 'Key id (not the secret).' },
    name: { type: 'string', description: 'Human-readable name.' },
    prefix: { type: 'string', description: '`svc_live_` or `svc_test_`.' },
    last4: { type: 'string', description: 'Last four characters of the value, to recognise it.' },
    scopes: { type: 'array', items: { type: 'string', enum: SCOPES }, description: 'What the key may do.' },
    status: { type: 'string', enum: KEY_STATUSES, description: '`active`; `rotating` (replaced, works until `expires_at`); `revoked`.' },
    created_at: timestampSchema,
    last_used_at: { ...nullableTimestampSchema, description: 'Last authenticated request (updated within about 10 s).' },
    expires_at: { ...nullableTimestampSchema, description: 'When the key stops working (set by rotation).' },
    revoked_at: nullableTimestampSchema,
    replaced_by: { type: ['string', 'null'], description: 'Id of the successor issued by rotation.' },
  },
} as const;

const issuedKeySchema = {
  ...apiKeySchema,
  required: [...apiKeySchema.required, 'key'],
  properties: { ...apiKeySchema.properties, key: { type: 'string', description: 'The key value. Shown this once only: store it now.' } },
} as const;

/** Plans on which `admin` keys may be created (spec 5.2). */
export const ADMIN_KEY_PLANS: readonly Plan[] = ['pro', 'enterprise'];

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;

function toApiKey(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    last4: row.last4,
    scopes: row.scopes as Scope[],
    status: keyStatus(row),
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
    expires_at: row.expires_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    replaced_by: row.replaced_by,
  };
}

export interface KeyRoutesOptions {
  db: Db;
  authenticator: Authenticator;
}

export const keyRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: KeyRoutesOptions }> = async (app, { db, authenticator }) => {
  const tags = ['API keys'];

  app.post(
    '/api/v1/api-keys',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Create an API key',
        description: 'A key with scope `admin` needs the pro or enterprise plan (403 `plan_required` otherwise, naming them in `details.required_plans`).',
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['name', 'scopes'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 100, description: 'Human-readable name.' },
            scopes: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: SCOPES }, description: 'Scopes granted.' },
          },
        },
        response: { 201: issuedKeySchema },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      // Read from the database, not the cached principal: a plan change takes effect at once.
      if (request.body.scopes.includes('admin')) await requirePlan(db, principal.orgId, ADMIN_KEY_PLANS, 'an admin API key');
      const issued = await db.transaction().execute(async (trx) => {
        const created = await insertKey(trx, { orgId: principal.orgId, name: request.body.name, scopes: request.body.scopes, createdBy: principal.actor.id });
        await auditRequest(trx, request, {
          action: 'api_key.created',
          target: { type: 'api_key', id: created.row.id },
          metadata: { name: created.row.name, scopes: request.body.scopes },
        });
        return created;
      });
      return reply.code(201).send({ ...toApiKey(issued.row), key: issued.value });
    },
  );

  app.get(
    '/api/v1/api-keys',
    {
      config: { auth: 'admin' },
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
    { config: { auth: 'admin' }, schema: { tags, summary: 'Get an API key', params: idParams, response: { 200: apiKeySchema } } },
    async (request) => {
      const row = await findKey(db, principalOf(request).orgId, request.params.id);
      if (!row) throw notFound('API key');
      return toApiKey(row);
    },
  );

  app.post(
    '/api/v1/api-keys/:id/rotate',
    {
      config: { auth: 'admin' },
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
        return result;
      });
      if (!rotated) {
        const existing = await findKey(db, principal.orgId, id);
        if (!existing) throw notFound('API key');
        throw conflict(keyStatus(existing) === 'revoked' ? 'API key is revoked' : 'API key was already rotated; rotate its successor instead', {
          replaced_by: existing.replaced_by,
        });
      }
      authenticator.invalidate(rotated.old.key_hash);
      return reply.code(201).send({ ...toApiKey(rotated.next.row), key: rotated.next.value });
    },
  );

  app.delete(
    '/api/v1/api-keys/:id',
    {
      config: { auth: 'admin' },
      schema: { tags, summary: 'Revoke an API key', description: 'Takes effect at once.', params: idParams, response: { 200: apiKeySchema } },
    },
    async (request) => {
      const principal = principalOf(request);
      const { id } = request.params;
      const revoked = await db.transaction().execute(async (trx) => {
        const result = await revokeKey(trx, principal.orgId, id);
        if (result?.changed) {
          await auditRequest(trx, request, { action: 'api_key.revoked', target: { type: 'api_key', id } });
        }
        return result?.row;
      });
      if (!revoked) throw notFound('API key');
      authenticator.invalidate(revoked.key_hash);
      return toApiKey(revoked);
    },
  );
};
