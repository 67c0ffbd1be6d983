// Inbound webhooks of provider connections: pull/merge requests (GitHub, GitLab) and ticket state
// changes (Jira, Linear, GitHub issues). Each connection has its own URL
// (`/api/v1/webhooks/<provider>?integration=<id>`) and secret; the delivery proves the secret in
// the provider's own scheme (connector.webhooks.verify), a delivery id already acted on is answered
// again without acting, and what the delivery means goes to the pull-request checks or the ticket
// sync. The answer is the same 401 whether the connection is unknown or the signature is wrong.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { IntegrationRow } from '../../platform/db/schema.ts';
import { ApiError, badRequest } from '../../platform/http/errors.ts';
import { handlePullRequestEvent } from './pull-requests/events.ts';
import type { ProviderName, WebhookHeaders } from './providers/types.ts';
import { connectorFor, type IntegrationDeps } from './connections/sessions.ts';
import { openWebhookSecret } from './connections/store.ts';
import { handleTicketChange } from './tickets/sync.ts';

/** Providers cap payloads at 25 MB (GitHub); pull-request and issue events are far smaller. */
export const INBOUND_BODY_LIMIT = 5 * 1024 * 1024;

export interface InboundAnswer {
  status: 'queued' | 'applied' | 'unchanged' | 'duplicate' | 'ignored';
  delivery_id: string | null;
  event: string;
  [key: string]: unknown;
}

export const InboundAnswerSchema = {
  type: 'object',
  required: ['status', 'delivery_id', 'event'],
  additionalProperties: true,
  properties: {
    status: { type: 'string', enum: ['queued', 'applied', 'unchanged', 'duplicate', 'ignored'] },
    delivery_id: { type: ['string', 'null'] },
    event: { type: 'string' },
  },
} as const;

const unauthorized = () => new ApiError(401, 'unauthorized', 'the delivery does not verify with the webhook secret of this connection');

/** JSON, or GitHub's form encoding with the JSON in `payload`. */
function parseBody(rawBody: Buffer, contentType: string | undefined): unknown {
  let text = rawBody.toString('utf8');
  if ((contentType ?? '').startsWith('application/x-www-form-urlencoded')) text = new URLSearchParams(text).get('payload') ?? '';
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('cannot read the delivery: the body is not JSON');
  }
}

export function inboundWebhooks(deps: IntegrationDeps) {
  const { db, secretBox } = deps;

  /** Claims the delivery id once per connection; false when it was acted on before. */
  async function firstDelivery(row: IntegrationRow, deliveryId: string): Promise<boolean> {
    const claimed = await db
      .insertInto('source_control_deliveries')
      .values({ provider: `integration:${row.id}`, delivery_id: deliveryId.slice(0, 200), sync_ids: '[]' })
      .onConflict((oc) => oc.columns(['provider', 'delivery_id']).doNothing())
      .returning('delivery_id')
      .executeTakeFirst();
    return claimed !== undefined;
  }

  async function release(row: IntegrationRow, deliveryId: string): Promise<void> {
    await db.deleteFrom('source_control_deliveries').where('provider', '=', `integration:${row.id}`).where('delivery_id', '=', deliveryId.slice(0, 200)).execute();
  }

  return {
    async receive(provider: ProviderName, integrationId: string, headers: WebhookHeaders, rawBody: Buffer, contentType: string | undefined): Promise<InboundAnswer> {
      const row = await db.selectFrom('integrations').selectAll().where('id', '=', integrationId.slice(0, 64)).where('provider', '=', provider).executeTakeFirst();
      const secret = row ? openWebhookSecret(secretBox, row) : null;
      if (!row || !secret) throw unauthorized();
      const webhooks = connectorFor(deps.connectors, row).webhooks;
      if (!webhooks.verify(headers, rawBody, secret)) throw unauthorized();

      const body = parseBody(rawBody, contentType);
      const inbound = webhooks.read(headers, body);
      const deliveryId = webhooks.deliveryId(headers, body);
      const eventName = inbound?.type ?? 'other';
      if (!inbound) return { status: 'ignored', delivery_id: deliveryId, event: eventName };
      if (row.status !== 'active') return { status: 'ignored', delivery_id: deliveryId, event: eventName, reason: `the connection is ${row.status}` };
      if (deliveryId && !(await firstDelivery(row, deliveryId))) return { status: 'duplicate', delivery_id: deliveryId, event: eventName };
      try {
        if (inbound.type === 'pull_request') {
          const answer = await handlePullRequestEvent(deps, row, inbound.event, deliveryId ?? `${inbound.event.repository}#${inbound.event.number}@${inbound.event.headSha}`);
          return { ...answer, delivery_id: deliveryId, event: eventName };
        }
        const answer = await handleTicketChange(deps, row, inbound.change);
        return { ...answer, delivery_id: deliveryId, event: eventName };
      } catch (err) {
        // Not acted on: let the provider's redelivery try again.
        if (deliveryId) await release(row, deliveryId);
        throw err;
      }
    },
  };
}

export type InboundWebhookReceiver = ReturnType<typeof inboundWebhooks>;

export const integrationIdOf = (request: FastifyRequest): string | undefined => {
  const value = (request.query as Record<string, unknown> | undefined)?.integration;
  return typeof value === 'string' && value.length > 0 ? value : undefined;
};

/** POST /api/v1/webhooks/jira and /linear: trackers' deliveries for one connection. */
export const trackerWebhookRoutes: FastifyPluginAsync<{ receiver: InboundWebhookReceiver }> = async (app, { receiver }) => {
  // Signatures cover the body as sent: keep the bytes (this plugin's scope only).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json'], { parseAs: 'buffer', bodyLimit: INBOUND_BODY_LIMIT }, (_request, body, done) => done(null, body));
  const labels = { jira: 'Jira Cloud (`jira:issue_updated`, signed with `X-Hub-Signature: sha256=…`)', linear: 'Linear (`Issue` updates, signed with `Linear-Signature`)' } as const;
  for (const provider of ['jira', 'linear'] as const) {
    app.post(
      `/api/v1/webhooks/${provider}`,
      {
        config: { auth: 'public' },
        bodyLimit: INBOUND_BODY_LIMIT,
        schema: {
          tags: ['Webhooks'],
          summary: `Inbound: ${provider === 'jira' ? 'Jira' : 'Linear'} ticket changes`,
          description: `Webhook of a ${labels[provider]} connection: \`?integration=<id>\` names the connection whose secret verifies it. A ticket moved to done (or closed) resolves its finding; moved back, the finding opens again.`,
          querystring: { type: 'object', required: ['integration'], properties: { integration: { type: 'string', minLength: 1, maxLength: 64 } } },
          response: { 200: InboundAnswerSchema, 202: InboundAnswerSchema },
        },
      },
      async (request, reply) => {
        const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const answer = await receiver.receive(provider, integrationIdOf(request) ?? '', request.headers, rawBody, request.headers['content-type']);
        return reply.code(answer.status === 'queued' ? 202 : 200).send(answer);
      },
    );
  }
};
