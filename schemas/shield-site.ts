import { createdAtSchema, idSchema, labelsSchema, updatedAtSchema, urlPatternSchema, type KindMeta, withoutDefaults, livemodeSchema } from './common.ts';
import { certificateSummarySchema, domainVerificationSchema, siteStatusSchema, tlsResource, tlsSpec, tlsUpdate } from './shield-site-edge.ts';

export * from './shield-site-edge.ts';

/** Managed-rule ids are `<category>.<name>`; an exclusion may name a whole category. */
export const MANAGED_RULE_REF_PATTERN = '^[a-z][a-z0-9_]*(\\.[a-z0-9_]+)?$';
export const MAX_PARANOIA_LEVEL = 4;

const managedRuleExclusion = {
  type: 'object',
  additionalProperties: false,
  required: ['rules'],
  description: 'Managed rules that do not apply to some requests (a known false positive). With neither `url_pattern` nor `parameter`, the rules are off for the whole site.',
  properties: {
    rules: {
      type: 'array',
      minItems: 1,
      maxItems: 64,
      items: { type: 'string', maxLength: 64, pattern: MANAGED_RULE_REF_PATTERN, description: 'A rule id (`sqli.tautology`) or a category (`sqli`).' },
      description: 'Rule ids (`xss.event_handler`) or whole categories (`xss`) from `GET /api/v1/shield/managed-rules`.',
    },
    url_pattern: { ...urlPatternSchema, description: 'Only on paths matching this pattern (same syntax and normalisation as virtual patches). Omit for every path.' },
    parameter: {
      type: 'string',
      minLength: 1,
      maxLength: 256,
      description: 'Only for the values of this parameter (query, form, multipart or JSON key at any depth; matched like a virtual patch parameter). Omit for the whole request.',
    },
  },
} as const;

const managedRules = {
  type: 'object',
  additionalProperties: false,
  description:
    'Generic attack detection that needs no per-vulnerability rule: SQL injection, XSS, path traversal, command injection, SSRF to cloud metadata and protocol anomalies, ' +
    'honouring the site `mode`. Omitted on create: on at paranoia level 1. Omitted in config: left as it is.',
  properties: {
    enabled: { type: 'boolean', default: true, description: 'Whether managed rules inspect this site’s requests.' },
    paranoia_level: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_PARANOIA_LEVEL,
      default: 1,
      description: 'How far detection reaches (1–4). Level 1 blocks unambiguous attacks with very few false positives; each level adds rules that catch more and misfire more.',
    },
    exclusions: { type: 'array', maxItems: 256, default: [], items: managedRuleExclusion, description: 'Rules switched off for some paths or parameters.' },
  },
} as const;

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
    description: 'Where Shield forwards allowed traffic: an `http://` or `https://` URL. A host that is or resolves to a link-local or cloud-metadata address is refused.',
  },
  mode: {
    type: 'string',
    enum: ['log', 'block', 'challenge'],
    description: '`log` records what rules would do without acting; `block` enforces them; `challenge` answers suspicious clients with a proof-of-work page.',
  },
  path_case: {
    type: 'string',
    enum: ['insensitive', 'sensitive'],
    default: 'insensitive',
    description:
      'How rule URL patterns compare with request paths. `insensitive` (default) matches `/Search` to `/search`, as case-insensitive routers (Express, ASP.NET, IIS) do; `sensitive` only when the origin routes by exact case.',
  },
  managed_rules: managedRules,
  tls: tlsSpec,
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
  properties: withoutDefaults({
    mode: properties.mode,
    origin_url: properties.origin_url,
    path_case: properties.path_case,
    // Merged into the stored settings: the fields given replace theirs, the others stay.
    managed_rules: { ...managedRules, properties: withoutDefaults(managedRules.properties) },
    tls: tlsUpdate,
    labels: properties.labels,
  }),
} as const;

const managedRulesResource = {
  ...managedRules,
  required: ['enabled', 'paranoia_level', 'exclusions'],
} as const;

export const ShieldSiteResource = {
  type: 'object',
  required: ['livemode', 'id', 'domain', 'origin_url', 'mode', 'path_case', 'managed_rules', 'tls', 'status', 'domain_verification', 'certificate', 'labels', 'created_at', 'updated_at'],
  properties: {
    id: idSchema,
    livemode: livemodeSchema,
    ...properties,
    managed_rules: managedRulesResource,
    tls: tlsResource,
    status: siteStatusSchema,
    domain_verification: domainVerificationSchema,
    certificate: certificateSummarySchema,
    created_at: createdAtSchema,
    updated_at: updatedAtSchema,
  },
} as const;

export const shieldSiteMeta: KindMeta = {
  kind: 'ShieldSite',
  terraformType: 'aegis_shield_site',
  parent: null,
  identity: ['domain'],
  mutable: ['mode', 'origin_url', 'path_case', 'managed_rules', 'tls', 'labels'],
  computed: ['id', 'status', 'domain_verification', 'certificate', 'created_at', 'updated_at'],
  sensitive: [],
};
