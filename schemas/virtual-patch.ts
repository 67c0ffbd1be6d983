import { createdAtSchema, idSchema, labelsSchema, methodSchema, siteIdSchema, updatedAtSchema, urlPatternSchema, type KindMeta, withoutDefaults, livemodeSchema } from './common.ts';

export const MAX_REGEX_LENGTH = 1024;

const properties = {
  url_pattern: urlPatternSchema,
  method: methodSchema,
  match_param: {
    type: 'string',
    minLength: 1,
    maxLength: 256,
    description:
      'Name of the request parameter inspected, compared without case: a query parameter, form or multipart field, or JSON body key at any depth (with the values below it); ' +
      '`q` also covers `q[]`, `q[0]` and `q[key]`, and a dotted name (`user.email`, `items.0.id`) names a path. Every value of a repeated parameter is tested.',
  },
  match_regex: {
    type: 'string',
    minLength: 1,
    maxLength: MAX_REGEX_LENGTH,
    description: 'Regular expression tested against the parameter, in RE2 syntax (linear time: no backreferences or lookaround). `(?i)` makes it case-insensitive.',
  },
  action: {
    type: 'string',
    enum: ['block', 'log', 'challenge'],
    default: 'block',
    description: 'What happens to a matching request: `block` (403), `log` (recorded only) or `challenge`.',
  },
  expires_in_days: {
    type: 'integer',
    minimum: 1,
    maximum: 3650,
    description: 'Lifetime in days from creation; the patch is removed afterwards. Omit for a patch that does not expire.',
  },
  labels: labelsSchema,
} as const;

export const VirtualPatchSpec = {
  $id: 'https://aegis.dev/schemas/VirtualPatch.json',
  title: 'VirtualPatch',
  description: 'A rule that blocks requests whose named parameter matches a pattern: a stop-gap for a known vulnerability until the code is fixed.',
  type: 'object',
  additionalProperties: false,
  required: ['url_pattern', 'method', 'match_param', 'match_regex'],
  properties,
} as const;

export const VirtualPatchUpdate = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: withoutDefaults({ labels: properties.labels }),
} as const;

export const VirtualPatchResource = {
  type: 'object',
  required: ['livemode', 'id', 'site_id', 'url_pattern', 'method', 'match_param', 'match_regex', 'action', 'expires_in_days', 'expires_at', 'status', 'source_finding_id', 'labels', 'created_at', 'updated_at'],
  properties: {
    livemode: livemodeSchema,
    id: idSchema,
    site_id: siteIdSchema,
    ...properties,
    expires_in_days: { ...properties.expires_in_days, type: ['integer', 'null'] },
    expires_at: { type: ['string', 'null'], format: 'date-time', readOnly: true, description: 'When the patch expires (creation time + `expires_in_days`); null if it does not.' },
    status: { type: 'string', enum: ['active', 'expired'], readOnly: true, description: '`expired` once `expires_at` has passed, until the sweep removes it.' },
    source_finding_id: { type: ['string', 'null'], readOnly: true, description: 'The finding the patch was derived from, if any.' },
    created_at: createdAtSchema,
    updated_at: updatedAtSchema,
  },
} as const;

export const virtualPatchMeta: KindMeta = {
  kind: 'VirtualPatch',
  terraformType: 'aegis_virtual_patch',
  parent: 'ShieldSite',
  identity: ['url_pattern', 'method', 'match_param', 'match_regex'],
  mutable: ['labels'],
  computed: ['id', 'site_id', 'expires_at', 'status', 'source_finding_id', 'created_at', 'updated_at'],
  sensitive: [],
};
