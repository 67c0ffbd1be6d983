// GET /api/v1/shield/sites/:id/live: the site's decisions as server-sent events (spec 4.5, 6).
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { principalOf } from '../../accounts/auth/plugin.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { RuleKind } from '../../../gateway/decision.ts';
import type { LiveBus } from '../../../gateway/events/live-bus.ts';
import { ApiError, badRequest } from '../../../platform/http/errors.ts';
import { parseEnumList } from '../../../platform/http/filters.ts';
import { errorEnvelopeSchema, filterParam } from '../../../platform/http/schemas.ts';
import { ACTIONS } from '../analytics/queries.ts';
import { siteParams } from '../params.ts';
import { requireSite } from '../sites/store.ts';
import { LiveHub } from './live-hub.ts';

export const RULE_KINDS = ['ip_access', 'escalation', 'rate_limit', 'inspection', 'virtual_patch', 'managed', 'schema'] as const satisfies readonly RuleKind[];

const EVENT_ID = /^dec_[0-9a-z]{26}$/;

const nullable = (type: string, description: string) => ({ type: [type, 'null'], description });
/**
 * The JSON of each `decision` event (gateway/decision.ts DecisionEvent). OpenAPI 3.1 has no
 * place for the schema of a stream's events (3.2's `itemSchema`), so it goes in an extension that
 * the SDK generator reads.
 */
const decisionEventSchema = {
  type: 'object',
  required: ['id', 'time', 'site_id', 'org_id', 'action', 'rule_kind', 'rule_id', 'would', 'client_ip', 'asn', 'country', 'method', 'host', 'path', 'status', 'request_id'],
  properties: {
    id: { type: 'string', description: '`dec_<ulid>`: sortable by time; also the event id to resume after (`Last-Event-ID`).' },
    time: { type: 'string', format: 'date-time', description: 'When the request arrived (ISO 8601 UTC).' },
    site_id: { type: 'string', description: 'The Shield site.' },
    org_id: { type: 'string', description: 'The organisation.' },
    action: { type: 'string', enum: [...ACTIONS], description: 'What the gateway did.' },
    rule_kind: { ...nullable('string', 'The kind of rule that decided, if any.'), enum: [...RULE_KINDS, null] },
    rule_id: nullable('string', 'The rule that decided, if any.'),
    would: { ...nullable('string', 'For `log`: what the rule would have done when enforced.'), enum: ['block', 'challenge', null] },
    client_ip: { type: 'string', description: 'The client address.' },
    asn: nullable('integer', "The client's autonomous system, when known."),
    country: nullable('string', "The client's country (ISO 3166-1 alpha-2), when known."),
    method: { type: 'string', description: 'HTTP method.' },
    host: { type: 'string', description: 'Host the request named.' },
    path: { type: 'string', description: 'Path without the query string, at most 1024 characters.' },
    status: { type: 'integer', description: 'HTTP status the client received.' },
    request_id: { type: 'string', description: 'The request id (X-Request-Id) the gateway gave the request.' },
  },
} as const;

/** True when the Accept header lists text/event-stream without q=0. A wildcard is not enough: spec 4.5 asks for the header. */
export function acceptsEventStream(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((part) => {
    const [type = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    return type === 'text/event-stream' && !params.some((p) => /^q=0(\.0{0,3})?$/.test(p));
  });
}

export interface LiveRouteOptions {
  db: Db;
  bus: LiveBus;
  heartbeatMs: number;
}

export const liveRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: LiveRouteOptions }> = async (app, { db, bus, heartbeatMs }) => {
  const hub = new LiveHub({ bus, db, heartbeatMs, log: app.log });
  // preClose, not onClose: the server waits for open connections before onClose hooks run, and
  // these never end by themselves.
  app.addHook('preClose', async () => hub.close());
  app.addHook('onClose', async () => hub.close());

  app.get(
    '/api/v1/shield/sites/:id/live',
    {
      config: { auth: 'shield:read' },
      schema: {
        tags: ['Shield live stream'],
        summary: "A site's decisions as they happen (server-sent events)",
        description:
          'Requires `Accept: text/event-stream` (otherwise 406). Each decision is an event `decision` whose `id` is the decision id and whose `data` is the decision as JSON ' +
          '(id, time, site_id, org_id, action, rule_kind, rule_id, would, client_ip, asn, country, method, host, path, status, request_id). ' +
          'A comment line (heartbeat) is sent every `AEGIS_SHIELD_LIVE_HEARTBEAT_MS` (15 s by default). A client that reads too slowly misses events and then receives `event: dropped` with `data: {"count": N}`. ' +
          'Reconnecting with `Last-Event-ID` resumes after that event (from memory, else from the stored events, at most 1000). ' +
          'Only stored decisions are streamed: every block, challenge and log, and the sampled allows.',
        params: siteParams,
        querystring: {
          type: 'object',
          properties: {
            action: filterParam(`Only these actions (${ACTIONS.join(', ')}).`),
            rule_kind: filterParam(`Only decisions of these rule kinds (${RULE_KINDS.join(', ')}).`),
          },
        },
        headers: {
          type: 'object',
          properties: { 'last-event-id': { type: 'string', maxLength: 64, description: 'Resume after this decision id (sent by EventSource on reconnect).' } },
        },
        response: {
          200: {
            description: 'An endless `text/event-stream`.',
            content: {
              'text/event-stream': { schema: { type: 'string', description: 'id: dec_…\\nevent: decision\\ndata: {…}\\n\\n' }, 'x-aegis-event-schema': decisionEventSchema },
            },
          },
          406: { ...errorEnvelopeSchema, description: 'The request does not accept `text/event-stream`.' },
        },
      },
    },
    async (request, reply) => {
      // Everything that can fail does so before the reply is taken over, in the usual envelope.
      if (!acceptsEventStream(request.headers.accept)) {
        throw new ApiError(406, 'not_acceptable', 'this endpoint streams server-sent events: send Accept: text/event-stream', { accept: 'text/event-stream' });
      }
      const { orgId } = principalOf(request);
      const filter = {
        actions: parseEnumList('action', request.query.action, ACTIONS),
        ruleKinds: parseEnumList('rule_kind', request.query.rule_kind, RULE_KINDS),
      };
      const lastEventId = request.headers['last-event-id'] || undefined;
      if (lastEventId !== undefined && !EVENT_ID.test(lastEventId)) {
        throw badRequest('Last-Event-ID is not a decision id', { fields: [{ field: 'last-event-id', message: 'must be a decision id (dec_…)' }] });
      }
      const site = await requireSite(db, orgId, request.params.id);

      reply.hijack();
      const headers: OutgoingHttpHeaders = {};
      // Headers hooks have set (request id, rate-limit counters) go out with the stream.
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
      reply.raw.writeHead(200, {
        ...headers,
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        // Reverse proxies (nginx) would otherwise buffer the stream.
        'x-accel-buffering': 'no',
        // When the server ends the stream (shutdown), the connection goes with it.
        connection: 'close',
      });
      reply.raw.write(': connected\n\n');
      await hub.open(reply.raw, { siteId: site.id, orgId, filter, lastEventId });
    },
  );
};
