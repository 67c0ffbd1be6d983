// JSON Schemas of the ticket API: the ticket resource and the request that creates one.
import type { JSONSchema } from 'json-schema-to-ts';
import { timestampSchema } from '../../../platform/http/schemas.ts';
import { PROVIDERS } from '../connections/schemas.ts';

export const TICKET_STATES = ['creating', 'open', 'closed', 'failed'] as const;

export const TicketResource = {
  type: 'object',
  required: ['object', 'vulnerability_id', 'connection', 'provider', 'project', 'state', 'key', 'url', 'external_id', 'error', 'created_at', 'updated_at'],
  properties: {
    object: { type: 'string', enum: ['ticket'] },
    vulnerability_id: { type: 'string' },
    connection: { type: ['string', 'null'], description: 'The connection (integration id) the ticket was created through; null once that connection is removed.' },
    provider: { type: 'string', enum: PROVIDERS },
    project: { type: ['string', 'null'], description: 'Jira project key, GitHub `owner/repo` or Linear team, as requested.' },
    state: {
      type: 'string',
      enum: TICKET_STATES,
      description: '`creating` while a job talks to the tracker; `open` / `closed` mirror the tracker; `failed` when the tracker refused (`error` says why) — request it again to retry.',
    },
    key: { type: ['string', 'null'], description: 'What people call it: PROJ-12, owner/repo#12, ENG-12.' },
    url: { type: ['string', 'null'] },
    external_id: { type: ['string', 'null'], description: 'The tracker’s own id of the ticket.' },
    error: { type: ['string', 'null'] },
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
} as const satisfies JSONSchema;

/** The ticket link a finding shows (`ticket` on the vulnerability). */
export const TicketLink = {
  type: ['object', 'null'],
  description: 'The ticket made from this finding (`POST …/ticket`), or null.',
  required: ['provider', 'key', 'url', 'state'],
  properties: {
    provider: { type: 'string' },
    key: { type: ['string', 'null'] },
    url: { type: ['string', 'null'] },
    state: { type: 'string', enum: TICKET_STATES },
  },
} as const satisfies JSONSchema;

export const TicketRequestBody = {
  type: 'object',
  additionalProperties: false,
  required: ['connection', 'project'],
  properties: {
    connection: { type: 'string', minLength: 1, maxLength: 64, description: 'The id of an active Jira, Linear or GitHub connection of this organisation.' },
    project: { type: 'string', minLength: 1, maxLength: 200, description: 'Jira project key, GitHub `owner/repo`, or Linear team key or id.' },
    assignee: { type: 'string', minLength: 1, maxLength: 200, description: 'Jira account id, GitHub login, or Linear user id.' },
    labels: { type: 'array', maxItems: 20, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 100 }, description: 'Added to `aegis` and `severity:<severity>`.' },
  },
} as const satisfies JSONSchema;
