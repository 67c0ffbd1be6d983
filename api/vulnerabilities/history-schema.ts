// The entry of a finding's history (GET /api/v1/vulnerabilities/:id/history; ./history.ts).
import { timestampSchema } from '../../platform/http/schemas.ts';

export const HistoryEntryResource = {
  type: 'object',
  required: ['id', 'kind', 'type', 'action', 'at', 'actor', 'changes', 'metadata'],
  properties: {
    id: { type: 'string', description: 'The event (`evt_…`) or audit entry (`aud_…`) this entry comes from.' },
    kind: { type: 'string', enum: ['change', 'action'], description: '`change`: fields of the finding changed; `action`: a request that changed none at once (ticket, AI triage, …).' },
    type: { type: 'string', description: 'The event type (`vulnerability.updated`, …) or the audit action (`vulnerability.ticket_requested`, …).' },
    action: { type: ['string', 'null'], description: 'The audit action of the request that made the entry (`vulnerability.updated`, `virtual_patch.created`, …); null when Aegis made it.' },
    at: timestampSchema,
    actor: {
      type: ['object', 'null'],
      description: 'Who made it; null when Aegis did (a scan, a verify-fix result, a ticket closed at the tracker).',
      required: ['type', 'id', 'name'],
      properties: {
        type: { type: 'string', enum: ['user', 'api_key', 'system'] },
        id: { type: 'string' },
        name: { type: ['string', 'null'], description: "The person's e-mail address or the API key's name." },
      },
    },
    changes: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'from', 'to'],
        properties: { field: { type: 'string' }, from: {}, to: {} },
      },
    },
    metadata: { type: 'object', additionalProperties: true },
  },
} as const;
