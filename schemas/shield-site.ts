import { createdAtSchema, idSchema, labelsSchema, updatedAtSchema, type KindMeta, withoutDefaults } from './common.ts';

const properties = {
  domain: {
    type: 'string',
    minLength: 3,
    maxLength: 253,
    pattern: '^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$',
    description: 'Domain the site protects, in lowercase (`shop.example.com`). Unique within the organisation. Cannot change: a new domain is a new site.',
  },
  origin_url: {
    type: 'string',
    maxLength: 2048,
    pattern: '^https?://[^\\s/?#]+([/?#][^\\s]*)?$',
    description: 'Where Shield forwards allowed traffic: an `http://` or `https://` URL.',
  },
  mode: {
    type: 'string',
    enum: ['log', 'block', 'challenge'],
    description: '`log` records what rules would do without acting; `block` enforces them; `challenge` answers suspicious clients with a proof-of-work page.',
  },
  labels: labelsSchema,
} as const;

export const ShieldSiteSpec = {
  $id: 'https://aegis.dev/schemas/ShieldSite.json',
  title: 'ShieldSite',
  description: 'A protection layer (reverse proxy) in front of a domain.',
  type: 'object',
  additionalProperties: false,
  required: ['domain', 'origin_url', 'mode'],
  properties,
} as const;

export const ShieldSiteUpdate = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: withoutDefaults({ mode: properties.mode, origin_url: properties.origin_url, labels: properties.labels }),
} as const;

export const ShieldSiteResource = {
  type: 'object',
  required: ['id', 'domain', 'origin_url', 'mode', 'labels', 'created_at', 'updated_at'],
  properties: { id: idSchema, ...properties, created_at: createdAtSchema, updated_at: updatedAtSchema },
} as const;

export const shieldSiteMeta: KindMeta = {
  kind: 'ShieldSite',
  terraformType: 'aegis_shield_site',
  parent: null,
  identity: ['domain'],
  mutable: ['mode', 'origin_url', 'labels'],
  computed: ['id', 'created_at', 'updated_at'],
  sensitive: [],
};
