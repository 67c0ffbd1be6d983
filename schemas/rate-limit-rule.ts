import { createdAtSchema, idSchema, labelsSchema, methodSchema, siteIdSchema, updatedAtSchema, urlPatternSchema, type KindMeta, withoutDefaults, livemodeSchema } from './common.ts';

const properties = {
  identity: {
    type: 'string',
    pattern: '^(ip|api_key|header:[A-Za-z0-9-]{1,64})$',
    description: 'What requests are counted by: the client `ip`, the `api_key` presented (Authorization bearer or X-API-Key), or a request header (`header:X-Tenant`).',
  },
  url_pattern: urlPatternSchema,
  method: methodSchema,
  budget: { type: 'integer', minimum: 1, maximum: 1000000000, description: 'Requests allowed per identity per window.' },
  window_seconds: { type: 'integer', minimum: 1, maximum: 86400, description: 'Length of the sliding window, in seconds (1 to 86 400).' },
  action: {
    type: 'string',
    enum: ['block', 'challenge', 'log'],
    description: 'What happens to requests over budget: `block` (429), `challenge`, or `log` only.',
  },
  escalate_to_deny_minutes: {
    type: 'integer',
    minimum: 0,
    maximum: 10080,
    default: 0,
    description: 'Once over budget, deny the identity outright for this many minutes (0 to 10 080); 0 disables escalation.',
  },
  labels: labelsSchema,
} as const;

export const RateLimitRuleSpec = {
  $id: 'https://aegis.dev/schemas/RateLimitRule.json',
  title: 'RateLimitRule',
  description: 'A request budget per client identity on matching requests, with optional escalation to a temporary deny.',
  type: 'object',
  additionalProperties: false,
  required: ['identity', 'url_pattern', 'method', 'budget', 'window_seconds', 'action'],
  properties,
} as const;

export const RateLimitRuleUpdate = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: withoutDefaults(properties),
} as const;

export const RateLimitRuleResource = {
  type: 'object',
  required: ['livemode', 'id', 'site_id', 'identity', 'url_pattern', 'method', 'budget', 'window_seconds', 'action', 'escalate_to_deny_minutes', 'labels', 'created_at', 'updated_at'],
  properties: { id: idSchema, livemode: livemodeSchema, site_id: siteIdSchema, ...properties, created_at: createdAtSchema, updated_at: updatedAtSchema },
} as const;

export const rateLimitRuleMeta: KindMeta = {
  kind: 'RateLimitRule',
  terraformType: 'aegis_rate_limit_rule',
  parent: 'ShieldSite',
  identity: ['identity', 'url_pattern', 'method'],
  mutable: ['identity', 'url_pattern', 'method', 'budget', 'window_seconds', 'action', 'escalate_to_deny_minutes', 'labels'],
  computed: ['id', 'site_id', 'created_at', 'updated_at'],
  sensitive: [],
};
