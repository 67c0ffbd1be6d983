// The impact preview's request and response, as JSON Schema (the OpenAPI document and the SDKs are
// generated from these). The response mirrors gateway/impact/impact-report.ts.
import { MAX_BATCH_OPERATIONS } from '../batch/operations.ts';
import { ShieldSiteUpdate } from '../../../schemas/index.ts';
import { SCHEMA_STRICTNESS } from '../../../schemas/shield-schema.ts';

const count = (description: string) => ({ type: 'integer', minimum: 0, description }) as const;
const instant = (description: string) => ({ type: ['string', 'null'], format: 'date-time', description }) as const;
const ranked = {
  type: 'array',
  items: { type: 'object',
  additionalProperties: false, required: ['value', 'requests'], properties: { value: { type: 'string' }, requests: { type: 'integer' } } },
} as const;

const changeStats = {
  type: 'object',
  additionalProperties: false,
  required: ['requests', 'clients', 'networks', 'top_clients', 'top_networks', 'origin_statuses', 'with_session', 'first_seen', 'last_seen', 'hourly', 'examples'],
  properties: {
    requests: count('Requests whose outcome changes this way.'),
    clients: count('Distinct client addresses among them.'),
    networks: count('Distinct client networks (/24 or /48) among them.'),
    top_clients: { ...ranked, description: 'The five addresses with most of these requests.' },
    top_networks: { ...ranked, description: 'The five networks with most of these requests.' },
    origin_statuses: {
      type: 'object',
  additionalProperties: false,
      required: ['classes', 'exact'],
      description: 'What these requests were actually answered when recorded (the origin’s status for a proxied request).',
      properties: {
        classes: { type: 'object', additionalProperties: { type: 'integer' }, description: 'By class: `2xx`, `3xx`, `4xx`, `5xx`.' },
        exact: { type: 'object', additionalProperties: { type: 'integer' }, description: 'By status code.' },
      },
    },
    with_session: count('How many carried a session or credentials (Cookie, Authorization, X-Api-Key).'),
    first_seen: instant('The first of them; null when none.'),
    last_seen: instant('The last of them; null when none.'),
    hourly: {
      type: 'array',
      description: 'Requests per hour (UTC), hours without any left out.',
      items: { type: 'object',
  additionalProperties: false, required: ['hour', 'requests'], properties: { hour: { type: 'string', format: 'date-time' }, requests: { type: 'integer' } } },
    },
    examples: {
      type: 'array',
      maxItems: 3,
      description: 'Up to three of them, redacted: parameter names with every value replaced by `…`, the client’s network rather than its address.',
      items: {
        type: 'object',
  additionalProperties: false,
        required: ['method', 'path', 'query', 'status', 'at', 'network', 'has_values'],
        properties: {
          method: { type: 'string' },
          path: { type: 'string' },
          query: { type: ['string', 'null'] },
          status: { type: 'integer' },
          at: { type: 'string', format: 'date-time' },
          network: { type: 'string' },
          has_values: { type: 'boolean', description: 'Whether the record kept this request’s (sealed) values.' },
        },
      },
    },
    warning: { type: 'string', description: 'On new blocks the origin had answered 2xx: each is a false positive or an exploit that worked.' },
  },
} as const;

const coverage = {
  type: 'object',
  additionalProperties: false,
  required: ['records', 'with_values', 'exact'],
  description: 'How far the counts go: `exact` when the verdicts read only metadata every record has; otherwise a lower bound over the `with_values` records that kept values.',
  properties: { records: { type: 'integer' }, with_values: { type: 'integer' }, exact: { type: 'boolean' }, note: { type: 'string' } },
} as const;

const groupProperties = { coverage, newly_blocked: changeStats, newly_challenged: changeStats, newly_allowed: changeStats } as const;
const groupRequired = ['coverage', 'newly_blocked', 'newly_challenged', 'newly_allowed'] as const;

export const impactBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    site: {
      type: 'object',
      additionalProperties: false,
      description: 'Proposed site settings, as PATCH /api/v1/shield/sites/{id} takes them (those a decision depends on).',
      properties: { mode: ShieldSiteUpdate.properties.mode, path_case: ShieldSiteUpdate.properties.path_case, managed_rules: ShieldSiteUpdate.properties.managed_rules },
    },
    operations: {
      type: 'array',
      maxItems: MAX_BATCH_OPERATIONS,
      description: 'Proposed rule writes, exactly as POST /api/v1/shield/sites/{id}/rules/batch takes them (checked the same way).',
      items: { type: 'object', additionalProperties: false, required: ['op', 'kind'], properties: { op: { type: 'string', enum: ['create', 'update', 'delete'] }, kind: { type: 'string', enum: ['ip_access_rule', 'virtual_patch', 'rate_limit_rule'] }, id: { type: 'string', minLength: 1, maxLength: 64 }, spec: { type: 'object', additionalProperties: true } } },
    },
    schema: {
      type: 'object',
      additionalProperties: false,
      description: 'Proposed schema enforcement, as PATCH /api/v1/shield/sites/{id}/schema-config takes it (a new OpenAPI document is not previewed).',
      properties: { strictness: { type: 'string', enum: SCHEMA_STRICTNESS } },
    },
    since: { type: 'string', format: 'date-time', description: 'Start of the window replayed (default: 24 hours ago).' },
    until: { type: 'string', format: 'date-time', description: 'End of the window (exclusive; default now).' },
  },
} as const;

export const impactResponseSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['site_id', 'window', 'covered', 'mode', 'totals', 'objects', 'differs_from_recorded', 'warnings'],
  properties: {
    site_id: { type: 'string' },
    window: { type: 'object', additionalProperties: false, required: ['since', 'until'], properties: { since: { type: 'string', format: 'date-time' }, until: { type: 'string', format: 'date-time' } } },
    covered: {
      type: 'object',
      additionalProperties: false,
      required: ['since', 'recorded_since'],
      description: 'What the record held of the window: it starts at `since`, or later when the record begins later (retention, or a site recorded only since then).',
      properties: { since: instant('Start of the part of the window the record covers; null when it holds nothing.'), recorded_since: instant('The oldest request the record keeps for the site.') },
    },
    mode: { type: 'object', additionalProperties: false, required: ['current', 'proposed'], properties: { current: { type: 'string' }, proposed: { type: 'string' } } },
    totals: {
      type: 'object',
      additionalProperties: false,
      required: [...groupRequired, 'unchanged', 'softened'],
      properties: { ...groupProperties, unchanged: count('Requests whose outcome (pass, block, challenge) stays the same.'), softened: count('Blocked now, challenged under the proposal.') },
    },
    objects: {
      type: 'array',
      description: 'Per object responsible for a change (a rule, or the site’s mode), most changed requests first.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['object', ...groupRequired],
        properties: {
          object: {
            type: 'object',
            additionalProperties: false,
            required: ['kind', 'id'],
            properties: {
              kind: { type: 'string', description: 'ip_access, escalation, rate_limit, inspection, virtual_patch, managed, schema, or mode.' },
              id: { type: ['string', 'null'], description: 'The rule’s id; for a rule the proposal creates, null (see `operation`).' },
              operation: { type: 'integer', description: 'The index in `operations` of the write that made this rule, when the proposal made or changed it.' },
            },
          },
          ...groupProperties,
        },
      },
    },
    differs_from_recorded: count('Requests the current configuration, replayed, decides otherwise than was recorded (a configuration that changed during the window, values not kept).'),
    warnings: { type: 'array', items: { type: 'string' } },
  },
} as const;
