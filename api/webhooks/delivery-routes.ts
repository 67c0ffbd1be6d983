// A webhook's delivery log and the actions on it: list and inspect deliveries (with every attempt),
// redeliver one, send a test ping, rotate the signing secret. Admin only, as the webhooks are.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { sql } from 'kysely';
import { WebhookCreated } from '../../schemas/index.ts';
import { auditRequest } from '../../platform/audit-log.ts';
import { principalOf } from '../accounts/auth/plugin.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { Db } from '../../platform/db/database.ts';
import { announceDeliveries, recordEvents } from '../../platform/events/event-store.ts';
import { notFound } from '../../platform/http/errors.ts';
import { decodeCursor, pageLimit, toPage } from '../../platform/http/pagination.ts';
import { filterParam, listResponseSchema, nullableTimestampSchema, pageQueryProperties, timestampSchema } from '../../platform/http/schemas.ts';
import { newId } from '../../platform/ids.ts';
import { attemptDelivery, previousSecretContext, senderFor, type DeliveryConfig, type DeliveryDeps } from './delivery-job.ts';
import { findDelivery, listAttempts, listDeliveries, loadDelivery, toAttempt, toDelivery } from './delivery-store.ts';
import { enqueueDeliveryJobs } from './fanout.ts';
import { findWebhook, generateWebhookSecret, openWebhookSecret, toWebhook } from './store.ts';
import { livemodeSchema } from '../../schemas/common.ts';

const webhookParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;
const deliveryParams = {
  type: 'object',
  required: ['id', 'delivery_id'],
  properties: { id: { type: 'string', maxLength: 64 }, delivery_id: { type: 'string', maxLength: 64 } },
} as const;

const responseFields = {
  response_status: { type: ['integer', 'null'], description: 'HTTP status the endpoint answered with; null when no response came (refused, unreachable, timed out).' },
  response_body: { type: ['string', 'null'], description: 'The first 1 KiB of the response body (at most 4 KiB is read).' },
  duration_ms: { type: ['integer', 'null'], description: 'How long the request took, in milliseconds.' },
  error: { type: ['string', 'null'], description: 'Why the attempt failed; null on success.' },
} as const;

const DeliveryResource = {
  type: 'object',
  description: 'One event on its way to one webhook.',
  required: ['livemode', 'id', 'object', 'webhook_id', 'event_id', 'event_type', 'status', 'attempt_count', 'next_attempt_at', 'last_attempt_at', 'response_status', 'response_body', 'duration_ms', 'error', 'created_at', 'updated_at'],
  properties: {
    livemode: livemodeSchema,
    id: { type: 'string', description: 'Delivery id (`whd_…`), sent as `X-Service-Delivery-Id`.' },
    object: { type: 'string', enum: ['webhook_delivery'] },
    webhook_id: { type: 'string' },
    event_id: { type: 'string', description: 'The event delivered (`X-Service-Event-Id`); redeliveries carry the same id, so receivers dedupe by it.' },
    event_type: { type: 'string' },
    status: {
      type: 'string',
      enum: ['pending', 'succeeded', 'failed'],
      description: '`pending`: not delivered yet, attempts left; `succeeded`: an attempt got a 2xx; `failed`: every attempt failed, or the webhook is disabled.',
    },
    attempt_count: { type: 'integer', description: 'Attempts made so far (automatic, redeliveries and tests).' },
    next_attempt_at: { ...nullableTimestampSchema, description: 'When the retry schedule tries again; null when no retry is due.' },
    last_attempt_at: { ...nullableTimestampSchema, description: 'When the last attempt started.' },
    ...responseFields,
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
} as const;

const AttemptResource = {
  type: 'object',
  required: ['id', 'trigger', 'started_at', 'duration_ms', 'succeeded', 'response_status', 'response_body', 'error'],
  properties: {
    id: { type: 'string' },
    trigger: { type: 'string', enum: ['automatic', 'manual', 'test'], description: '`automatic`: the retry schedule; `manual`: a redelivery; `test`: a test ping.' },
    started_at: timestampSchema,
    succeeded: { type: 'boolean', description: 'The endpoint answered 2xx.' },
    ...responseFields,
    duration_ms: { type: 'integer', description: 'How long the request took, in milliseconds.' },
  },
} as const;

const DeliveryDetail = {
  ...DeliveryResource,
  required: [...DeliveryResource.required, 'attempts'],
  properties: { ...DeliveryResource.properties, attempts: { type: 'array', items: AttemptResource, description: 'Every attempt, oldest first.' } },
} as const;

export interface DeliveryRoutesOptions {
  db: Db;
  secretBox: SecretBox;
  config: DeliveryConfig;
}

/** How long a rotated-out secret keeps signing, unless the rotation says otherwise. */
const PREVIOUS_SECRET_HOURS = 24;

/** The audit trail names the receiving host only: webhook paths and queries often embed tokens. */
const hostOf = (url: string): string => new URL(url).host;

export const webhookDeliveryRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: DeliveryRoutesOptions }> = async (app, { db, secretBox, config }) => {
  const tags = ['Webhooks'];
  // Test pings go out from the API process: its own connection pool, closed with the app.
  const deps: DeliveryDeps = { db, secretBox, config, sender: senderFor(config) };
  app.addHook('onClose', async () => deps.sender.close());

  async function webhookOf(orgId: string, id: string) {
    const webhook = await findWebhook(db, orgId, id);
    if (!webhook) throw notFound('webhook');
    return webhook;
  }

  app.get(
    '/api/v1/webhooks/:id/deliveries',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: "List a webhook's deliveries",
        description: 'Newest first. Deliveries are kept as long as their events (30 days).',
        params: webhookParams,
        querystring: {
          type: 'object',
          properties: {
            ...pageQueryProperties,
            status: filterParam('Only deliveries in these states (`pending`, `succeeded`, `failed`).'),
            event_type: filterParam('Only deliveries of these event types.'),
          },
        },
        response: { 200: listResponseSchema(DeliveryResource) },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      await webhookOf(orgId, request.params.id);
      const limit = pageLimit(request.query);
      const split = (v: string | undefined) => v?.split(',').map((s) => s.trim()).filter(Boolean);
      const rows = await listDeliveries(db, {
        orgId,
        webhookId: request.params.id,
        after: decodeCursor(request.query.cursor),
        limit,
        statuses: split(request.query.status),
        eventTypes: split(request.query.event_type),
      });
      return toPage(rows, limit, toDelivery);
    },
  );

  app.get(
    '/api/v1/webhooks/:id/deliveries/:delivery_id',
    { config: { auth: 'admin' }, schema: { tags, summary: 'Get a delivery and its attempts', params: deliveryParams, response: { 200: DeliveryDetail } } },
    async (request) => {
      const delivery = await findDelivery(db, principalOf(request).orgId, request.params.id, request.params.delivery_id);
      if (!delivery) throw notFound('delivery');
      return { ...toDelivery(delivery), attempts: (await listAttempts(db, delivery.id)).map(toAttempt) };
    },
  );

  app.post(
    '/api/v1/webhooks/:id/deliveries/:delivery_id/redeliver',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Redeliver an event',
        description:
          'Queues one more attempt of this delivery, outside the retry schedule and never retried itself; the event keeps its id. A failed delivery becomes `pending` until the attempt is made; a failed redelivery does not undo an earlier success. The webhook must be enabled for the attempt to be made.',
        params: deliveryParams,
        response: { 202: DeliveryResource },
      },
    },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      const delivery = await db.transaction().execute(async (trx) => {
        const found = await findDelivery(trx, orgId, request.params.id, request.params.delivery_id);
        if (!found) throw notFound('delivery');
        await enqueueDeliveryJobs(trx, [found], 'manual', 1);
        const after =
          found.status === 'failed'
            ? await trx.updateTable('webhook_deliveries').set({ status: 'pending', updated_at: sql<Date>`now()` }).where('id', '=', found.id).returningAll().executeTakeFirstOrThrow()
            : found;
        await auditRequest(trx, request, { action: 'webhook.delivery.redelivered', target: { type: 'webhook', id: found.webhook_id }, metadata: { delivery_id: found.id, event_id: found.event_id } });
        return after;
      });
      announceDeliveries(db, 1);
      return reply.code(202).send(toDelivery(delivery));
    },
  );

  app.post(
    '/api/v1/webhooks/:id/test',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Send a test ping',
        description:
          'Records a `ping` event and delivers it to this webhook at once, in the request (one attempt, not retried), disabled webhooks included; answers with the delivery. Only this webhook receives pings.',
        params: webhookParams,
        response: { 200: DeliveryResource },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const webhook = await webhookOf(orgId, request.params.id);
      const deliveryId = await db.transaction().execute(async (trx) => {
        const { rows } = await recordEvents(trx, [
          { orgId, type: 'ping', object: { object: 'ping', webhook_id: webhook.id, message: 'A test delivery from Aegis: your endpoint is reachable and can check signatures.' } },
        ]);
        const event = rows[0]!;
        const id = newId('whd');
        await trx.insertInto('webhook_deliveries').values({ id, org_id: orgId, webhook_id: webhook.id, event_id: event.id, event_type: event.type }).execute();
        await auditRequest(trx, request, { action: 'webhook.tested', target: { type: 'webhook', id: webhook.id }, metadata: { delivery_id: id, host: hostOf(webhook.url) } });
        return id;
      });
      const loaded = await loadDelivery(db, deliveryId);
      if (!loaded) throw notFound('webhook');
      const outcome = await attemptDelivery(deps, loaded, 'test');
      const delivery = outcome.delivery ?? (await loadDelivery(db, deliveryId))?.delivery ?? loaded.delivery;
      return toDelivery(delivery);
    },
  );

  app.post(
    '/api/v1/webhooks/:id/rotate-secret',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Rotate the signing secret',
        description:
          'Generates a new signing secret and returns it in `secret`, this once. Until `previous_secret_expires_at` deliveries carry two `v1=` signatures, one per secret, so receivers can switch without missing a delivery. `expire_previous_in_hours: 0` drops the previous secret at once.',
        params: webhookParams,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            expire_previous_in_hours: { type: 'number', minimum: 0, maximum: 24, default: PREVIOUS_SECRET_HOURS, description: 'How long the previous secret keeps signing (0–24 hours, default 24).' },
          },
        },
        response: { 200: WebhookCreated },
      },
      // The body is optional: a POST without one gets the defaults. A JSON `null` is a body, and invalid.
      preValidation: async (request) => {
        if (request.body === undefined) request.body = { expire_previous_in_hours: PREVIOUS_SECRET_HOURS };
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const { id } = request.params;
      const hours = request.body.expire_previous_in_hours;
      const secret = generateWebhookSecret();
      const row = await db.transaction().execute(async (trx) => {
        const current = await trx.selectFrom('webhooks').selectAll().where('org_id', '=', orgId).where('id', '=', id).forUpdate().executeTakeFirst();
        if (!current) throw notFound('webhook');
        // The previous secret is sealed again under its own context: a sealed value opens only with
        // the context it was sealed with, and the current secret's context is the bare id.
        const keepPrevious = hours > 0;
        const updated = await trx
          .updateTable('webhooks')
          .set({
            secret_sealed: secretBox.seal(secret, id),
            secret_last4: secret.slice(-4),
            previous_secret_sealed: keepPrevious ? secretBox.seal(openWebhookSecret(secretBox, current), previousSecretContext(id)) : null,
            previous_secret_expires_at: keepPrevious ? sql<Date>`now() + ${hours * 3_600_000} * interval '1 millisecond'` : null,
            updated_at: sql<Date>`now()`,
          })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await auditRequest(trx, request, { action: 'webhook.secret_rotated', target: { type: 'webhook', id }, metadata: { expire_previous_in_hours: hours } });
        return updated;
      });
      return { ...toWebhook(row), secret };
    },
  );
};
