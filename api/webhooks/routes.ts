// /api/v1/webhooks: list, get, create, update, delete (spec 4.10). Admin only. The signing secret is
// generated here and appears in exactly one response, the create response: not in get or list, not
// in logs, not in the audit trail. Delivering events is the delivery worker's job.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { EVENT_PATTERNS, EVENT_TYPE_INFO, EVENT_TYPES, WebhookCreated, WebhookResource, WebhookSpec, WebhookUpdate } from '../../schemas/index.ts';
import { auditRequest } from '../../platform/audit-log.ts';
import { principalOf } from '../accounts/auth/plugin.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { Db } from '../../platform/db/database.ts';
import { notFound, validationFailed } from '../../platform/http/errors.ts';
import { decodeCursor, pageLimit, toPage } from '../../platform/http/pagination.ts';
import { listResponseSchema, pageQueryProperties } from '../../platform/http/schemas.ts';
import { labelQueryProperty, parseLabelFilter } from '../../platform/resources/labels.ts';
import { webhookUrlRefusal, type WebhookUrlPolicy } from './url-policy.ts';
import { deleteWebhook, findWebhook, insertWebhook, listWebhooks, toWebhook, updateWebhook } from './store.ts';

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;

export interface WebhookRoutesOptions {
  db: Db;
  /** Seals signing secrets; without it webhooks can be read and changed but not created. */
  secretBox: SecretBox;
  /** Where deliveries may go (https, no private addresses unless allowed). */
  urlPolicy: WebhookUrlPolicy;
}

/** 422 on `url` when the policy refuses it. */
async function checkUrl(url: string, policy: WebhookUrlPolicy): Promise<void> {
  const refusal = await webhookUrlRefusal(url, policy);
  if (refusal) throw validationFailed(`request body is invalid: url ${refusal}`, { fields: [{ field: 'url', message: refusal }] });
}

/** The audit trail names the receiving host only: webhook paths and queries often embed tokens. */
const hostOf = (url: string): string => new URL(url).host;

export const webhookRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: WebhookRoutesOptions }> = async (app, { db, secretBox, urlPolicy }) => {
  const tags = ['Webhooks'];

  app.get(
    '/api/v1/webhooks',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'List webhooks',
        querystring: {
          type: 'object',
          properties: {
            ...pageQueryProperties,
            ...labelQueryProperty,
            enabled: { type: 'boolean', description: 'Only enabled (`true`) or only disabled (`false`) webhooks.' },
          },
        },
        response: { 200: listResponseSchema(WebhookResource) },
      },
    },
    async (request) => {
      const limit = pageLimit(request.query);
      const rows = await listWebhooks(db, {
        orgId: principalOf(request).orgId,
        after: decodeCursor(request.query.cursor),
        limit,
        labels: parseLabelFilter(request.query.label),
        enabled: request.query.enabled,
      });
      return toPage(rows, limit, toWebhook);
    },
  );

  // The catalogue a webhook subscribes from (for forms such as the dashboard's): a fixed reference,
  // so one answer rather than a paginated list.
  app.get(
    '/api/v1/webhooks/event-types',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'List the event types a webhook can subscribe to',
        description: 'Every event type of the catalogue with its payload version and meaning, and the families (`vulnerability.*`, `*`) a subscription may name instead. `ping` is not listed: it goes only to the webhook a test is sent to.',
        response: {
          200: {
            type: 'object',
            required: ['types', 'patterns'],
            properties: {
              types: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['type', 'version', 'description'],
                  properties: { type: { type: 'string', enum: EVENT_TYPES }, version: { type: 'integer' }, description: { type: 'string' } },
                },
              },
              patterns: { type: 'array', items: { type: 'string', enum: EVENT_PATTERNS }, description: 'Families: every type that starts with the prefix, or `*` for all.' },
            },
          },
        },
      },
    },
    async () => ({
      types: EVENT_TYPES.map((type) => ({ type, version: EVENT_TYPE_INFO[type].version, description: EVENT_TYPE_INFO[type].description })),
      patterns: [...EVENT_PATTERNS],
    }),
  );

  app.get(
    '/api/v1/webhooks/:id',
    { config: { auth: 'admin' }, schema: { tags, summary: 'Get a webhook', params: idParams, response: { 200: WebhookResource } } },
    async (request) => {
      const webhook = await findWebhook(db, principalOf(request).orgId, request.params.id);
      if (!webhook) throw notFound('webhook');
      return toWebhook(webhook);
    },
  );

  app.post(
    '/api/v1/webhooks',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Create a webhook',
        description:
          'Generates the signing secret and returns it in `secret`, this once; later responses show only `secret_last4`. The URL must be https:// and must not be or resolve to a private, loopback, link-local or reserved address (422), unless the server sets AEGIS_ALLOW_PRIVATE_TARGETS.',
        body: WebhookSpec,
        response: { 201: WebhookCreated },
      },
    },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      const { url, events, description = '', enabled = true, labels = {} } = request.body;
      await checkUrl(url, urlPolicy);
      const created = await db.transaction().execute(async (trx) => {
        const result = await insertWebhook(trx, secretBox, orgId, { url, events, description, enabled, labels });
        await auditRequest(trx, request, { action: 'webhook.created', target: { type: 'webhook', id: result.row.id }, metadata: { host: hostOf(url), events, enabled } });
        return result;
      });
      return reply.code(201).send({ ...toWebhook(created.row), secret: created.secret });
    },
  );

  app.patch(
    '/api/v1/webhooks/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Update a webhook',
        description: 'Changes the fields given and leaves the others. The signing secret does not change.',
        params: idParams,
        body: WebhookUpdate,
        response: { 200: WebhookResource },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const { id } = request.params;
      if (request.body.url !== undefined) await checkUrl(request.body.url, urlPolicy);
      const webhook = await db.transaction().execute(async (trx) => {
        const after = await updateWebhook(trx, orgId, id, request.body);
        if (!after) throw notFound('webhook');
        await auditRequest(trx, request, {
          action: 'webhook.updated',
          target: { type: 'webhook', id },
          metadata: { fields: Object.keys(request.body).sort(), host: hostOf(after.url) },
        });
        return after;
      });
      return toWebhook(webhook);
    },
  );

  app.delete(
    '/api/v1/webhooks/:id',
    {
      config: { auth: 'admin' },
      schema: { tags, summary: 'Delete a webhook', params: idParams, response: { 204: { type: 'null', description: 'Deleted.' } } },
    },
    async (request, reply) => {
      const { id } = request.params;
      await db.transaction().execute(async (trx) => {
        const deleted = await deleteWebhook(trx, principalOf(request).orgId, id);
        if (!deleted) throw notFound('webhook');
        await auditRequest(trx, request, { action: 'webhook.deleted', target: { type: 'webhook', id }, metadata: { host: hostOf(deleted.url) } });
      });
      return reply.code(204).send(null);
    },
  );
};
