// POST /api/v1/shield/sites/:id/rules/batch: create, update and delete many virtual patches, IP
// access rules and rate-limit rules of one site in one request and one transaction, all or
// nothing. What the reconciler sends when a plan touches many rules; a batch counts as one request
// against the rate limit. Each operation is the body of the kind's single route, checked and stored
// exactly as there (operations.ts); the gateway sees the change through the same version triggers.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { auditRequest } from '../../../platform/audit-log.ts';
import { principalOf } from '../../accounts/auth/plugin.ts';
import type { Db } from '../../../platform/db/database.ts';
import { siteParams } from '../params.ts';
import { requireSite } from '../sites/store.ts';
import { applyOperations, BATCH_KINDS, BATCH_OPS, checkOperations, MAX_BATCH_OPERATIONS, type BatchKind, type BatchOutcome } from './operations.ts';

/** 1 000 operations with generous labels and notes fit comfortably; beyond is 413. */
export const MAX_BATCH_BYTES = 8 * 1024 * 1024;

const SINGLE_ROUTES = '`POST`/`PATCH` of `/api/v1/shield/sites/{id}/ip-access`, `/virtual-patches` and `/rate-limits`';

const operationSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['op', 'kind'],
  properties: {
    op: { type: 'string', enum: BATCH_OPS, description: 'What to do.' },
    kind: { type: 'string', enum: BATCH_KINDS, description: 'Which kind of rule.' },
    id: { type: 'string', minLength: 1, maxLength: 64, description: 'The rule to update or delete; not given for `create`.' },
    spec: {
      type: 'object',
      additionalProperties: true,
      description:
        `For \`create\`: the create body of the kind (IpAccessRule, VirtualPatch or RateLimitRule spec); for \`update\`: its update body. ` +
        `Exactly as accepted by the single routes (${SINGLE_ROUTES}), with the same defaults and checks. Not given for \`delete\`.`,
    },
  },
} as const;

const resultSchema = {
  type: 'object',
  required: ['op', 'kind', 'id', 'object'],
  properties: {
    op: { type: 'string', enum: BATCH_OPS },
    kind: { type: 'string', enum: BATCH_KINDS },
    id: { type: 'string', description: 'The rule created, updated or deleted.' },
    object: {
      type: ['object', 'null'],
      additionalProperties: true,
      description: 'The rule as its single route returns it (IpAccessRule, VirtualPatch or RateLimitRule); null for `delete`.',
    },
  },
} as const;

const countsSchema = {
  type: 'object',
  required: ['created', 'updated', 'deleted'],
  properties: { created: { type: 'integer' }, updated: { type: 'integer' }, deleted: { type: 'integer' } },
} as const;

export const ruleBatchRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db } }> = async (app, { db }) => {
  app.post(
    '/api/v1/shield/sites/:id/rules/batch',
    {
      config: { auth: 'shield:write' },
      bodyLimit: MAX_BATCH_BYTES,
      schema: {
        tags: ['Shield rule batches'],
        summary: 'Create, update and delete many rules of a site at once',
        description:
          `Up to ${MAX_BATCH_OPERATIONS} operations on the site's IP access rules, virtual patches and rate-limit rules, applied in order in one ` +
          `transaction: every operation applies or none does. Each \`spec\` is the body of the kind's single create or update route and is ` +
          `checked exactly as there. The first operation that cannot apply fails the batch with that route's error (422 invalid, 404 unknown id, ` +
          `409 conflict) and \`details.operation\`, its index in \`operations\`. More than ${MAX_BATCH_OPERATIONS} operations is 422. ` +
          `One audit entry (\`shield_rules.batch_applied\`) records the counts. The batch counts as one request against the rate limit.`,
        params: siteParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['operations'],
          properties: { operations: { type: 'array', minItems: 1, maxItems: MAX_BATCH_OPERATIONS, items: operationSchema, description: `1–${MAX_BATCH_OPERATIONS} operations, applied in order.` } },
        },
        response: {
          200: {
            type: 'object',
            required: ['results', 'counts'],
            properties: { results: { type: 'array', items: resultSchema, description: 'One per operation, in order.' }, counts: countsSchema },
          },
        },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const { operations } = request.body;
      checkOperations(operations);
      const outcome: BatchOutcome = await db.transaction().execute(async (trx) => {
        const site = await requireSite(trx, orgId, request.params.id);
        const applied = await applyOperations(trx, orgId, site.id, operations);
        const byKind: Partial<Record<BatchKind, { created: number; updated: number; deleted: number }>> = {};
        for (const { op, kind } of applied.results) {
          const counts = (byKind[kind] ??= { created: 0, updated: 0, deleted: 0 });
          counts[op === 'create' ? 'created' : op === 'update' ? 'updated' : 'deleted']++;
        }
        await auditRequest(trx, request, {
          action: 'shield_rules.batch_applied',
          target: { type: 'shield_site', id: site.id },
          metadata: { site_id: site.id, operations: operations.length, ...applied.counts, kinds: byKind },
        });
        return applied;
      });
      return outcome;
    },
  );
};
