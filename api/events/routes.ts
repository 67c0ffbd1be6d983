// GET /api/v1/events and /api/v1/events/:id: what happened, for clients catching up on what their
// webhook missed (Stripe's events API). Any key or session may call them; each sees only the types
// its scopes can read (api/events/catalogue.ts), so a `scans:read` key sees scan events only.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { principalOf } from '../accounts/auth/plugin.ts';
import { grants } from '../accounts/auth/scopes.ts';
import type { Db } from '../../platform/db/database.ts';
import { notFound } from '../../platform/http/errors.ts';
import { parseList } from '../../platform/http/filters.ts';
import { decodeCursor, pageLimit, toPage } from '../../platform/http/pagination.ts';
import { filterParam, listResponseSchema, pageQueryProperties } from '../../platform/http/schemas.ts';
import { EVENT_TYPES, eventMatches } from '../../schemas/events.ts';
import { eventSchema, readableEventTypes } from './catalogue.ts';
import { findEvent, listEvents, toEvent } from '../../platform/events/event-store.ts';

const EventResource = eventSchema(['ping', ...EVENT_TYPES], { type: 'object', additionalProperties: true, description: 'The object as it was when the event happened (see the `webhooks` section for each type).' } as const);
const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;

export const eventRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db } }> = async (app, { db }) => {
  const tags = ['Events'];

  app.get(
    '/api/v1/events',
    {
      config: { auth: 'authenticated' },
      schema: {
        tags,
        summary: 'List events',
        description:
          'Newest first. Events are kept 30 days. Only the types the caller’s scopes can read are listed (vulnerability events need `vulnerabilities:read`, scan events `scans:read`, Shield events `shield:read`, the rest `admin`).',
        querystring: {
          type: 'object',
          properties: {
            ...pageQueryProperties,
            type: filterParam('Event types, or families such as `vulnerability.*`.'),
            ending_before: { type: 'string', maxLength: 64, description: 'Only events newer than this event id: catch up from the last event seen.' },
          },
        },
        response: { 200: listResponseSchema(EventResource) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const limit = pageLimit(request.query);
      const wanted = parseList('type', request.query.type);
      const readable = readableEventTypes((scope) => grants(principal.scopes, scope));
      const types = wanted ? readable.filter((type) => wanted.some((pattern) => eventMatches(pattern, type) || pattern === type)) : readable;
      const rows = await listEvents(db, { orgId: principal.orgId, after: decodeCursor(request.query.cursor), limit, types, since: request.query.ending_before });
      return toPage(rows, limit, toEvent);
    },
  );

  app.get(
    '/api/v1/events/:id',
    { config: { auth: 'authenticated' }, schema: { tags, summary: 'Get an event', params: idParams, response: { 200: EventResource } } },
    async (request) => {
      const principal = principalOf(request);
      const row = await findEvent(db, principal.orgId, request.params.id);
      // An event of a type the caller may not read is as absent as one of another organisation.
      if (!row || !readableEventTypes((scope) => grants(principal.scopes, scope)).includes(row.type)) throw notFound('event');
      return toEvent(row);
    },
  );
};
