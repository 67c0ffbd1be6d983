import { createdAtSchema, idSchema, labelsSchema, siteIdSchema, updatedAtSchema, type KindMeta, withoutDefaults, livemodeSchema } from './common.ts';

export const IP_RULE_TYPES = ['ip', 'cidr', 'asn', 'country'] as const;
export const IP_RULE_ACTIONS = ['deny', 'allow', 'challenge'] as const;

const properties = {
  type: {
    type: 'string',
    enum: IP_RULE_TYPES,
    description: 'What `value` is: a single IPv4/IPv6 address (`ip`), a network (`cidr`), an autonomous system (`asn`) or an ISO 3166-1 alpha-2 country (`country`).',
  },
  value: {
    type: 'string',
    minLength: 1,
    maxLength: 64,
    description: '`203.0.113.7` or `2001:db8::1` (ip); `198.51.100.0/24` or `2001:db8::/48` without host bits (cidr); `AS64500` (asn); `NL` (country).',
  },
  action: {
    type: 'string',
    enum: IP_RULE_ACTIONS,
    description: '`allow` lets matching clients bypass the other rules; `deny` blocks them; `challenge` asks them to solve a proof-of-work.',
  },
  note: { type: 'string', maxLength: 1024, default: '', description: 'Free text: why the rule exists.' },
  expires_at: {
    type: ['string', 'null'],
    format: 'date-time',
    description: 'ISO 8601 UTC time after which the rule stops applying and is removed. Null or absent: no expiry.',
  },
  labels: labelsSchema,
} as const;

export const IpAccessRuleSpec = {
  $id: 'https://aegis.dev/schemas/IpAccessRule.json',
  title: 'IpAccessRule',
  description: 'Allow, deny or challenge clients by address, network, autonomous system or country.',
  type: 'object',
  additionalProperties: false,
  required: ['type', 'value', 'action'],
  properties,
} as const;

export const IpAccessRuleUpdate = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: withoutDefaults({ action: properties.action, note: properties.note, expires_at: properties.expires_at, labels: properties.labels }),
} as const;

export const IpAccessRuleResource = {
  type: 'object',
  required: ['livemode', 'id', 'site_id', 'type', 'value', 'action', 'note', 'expires_at', 'status', 'labels', 'created_at', 'updated_at'],
  properties: {
    livemode: livemodeSchema,
    id: idSchema,
    site_id: siteIdSchema,
    ...properties,
    status: { type: 'string', enum: ['active', 'expired'], readOnly: true, description: '`expired` once `expires_at` has passed, until the sweep removes it.' },
    created_at: createdAtSchema,
    updated_at: updatedAtSchema,
  },
} as const;

export const ipAccessRuleMeta: KindMeta = {
  kind: 'IpAccessRule',
  terraformType: 'aegis_ip_access_rule',
  parent: 'ShieldSite',
  identity: ['type', 'value'],
  mutable: ['action', 'note', 'expires_at', 'labels'],
  computed: ['id', 'site_id', 'status', 'created_at', 'updated_at'],
  sensitive: [],
};
