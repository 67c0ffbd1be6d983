// Response sections of GET /api/v1/overview (./routes.ts).
const count = { type: 'integer', minimum: 0 } as const;

export const OverviewFindings = {
  type: ['object', 'null'],
  description: 'Null without `vulnerabilities:read`.',
  required: ['total', 'open', 'by_severity', 'by_age'],
  properties: {
    total: { ...count, description: 'Every finding of the environment, whatever its status (0 for a new organisation).' },
    open: { ...count, description: 'Open findings: status `open` or `acknowledged`, not a false positive.' },
    by_severity: {
      type: 'object',
      required: ['critical', 'high', 'medium', 'low', 'info'],
      properties: { critical: count, high: count, medium: count, low: count, info: count },
    },
    by_age: {
      type: 'object',
      description: 'Open findings by time since first seen: under 7 days, 7–30, 30–90, over 90.',
      required: ['under_7_days', 'days_7_to_30', 'days_30_to_90', 'over_90_days'],
      properties: { under_7_days: count, days_7_to_30: count, days_30_to_90: count, over_90_days: count },
    },
  },
} as const;

export const OverviewShield = {
  type: ['object', 'null'],
  description: 'Null without `shield:read`.',
  required: ['since', 'until', 'blocked', 'requests', 'sites_total', 'sites'],
  properties: {
    since: { type: 'string', format: 'date-time', description: 'Start of the window (24 hours before `until`, to the minute).' },
    until: { type: 'string', format: 'date-time' },
    blocked: { ...count, description: 'Requests blocked by every site over the window.' },
    requests: { ...count, description: 'Requests every site decided over the window.' },
    sites_total: count,
    sites: {
      type: 'array',
      description: 'Up to 10 sites, most blocks first (sites without traffic included while there is room).',
      items: {
        type: 'object',
        required: ['id', 'domain', 'mode', 'blocked', 'requests'],
        properties: { id: { type: 'string' }, domain: { type: 'string' }, mode: { type: 'string' }, blocked: count, requests: count },
      },
    },
  },
} as const;
