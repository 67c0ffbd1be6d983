// The JSON Schema (draft 2020-12) of a config document, derived from schemas/ so that a field added
// to a kind is accepted in config files the moment the API accepts it. Every object is closed
// (`additionalProperties: false`): a typo in a config file is an error, never a silently ignored key.
//
// One schema covers every kind: `allOf` holds one `if kind == K then spec: <K's config spec>` per
// kind, which editors (yaml-language-server) understand and which gives ajv one error per real
// mistake (the loader drops the `if` bookkeeping errors).
import { KINDS, type KindDefinition } from '../../schemas/index.ts';
import type { Kind } from '../model.ts';
import { SITE_KINDS } from '../model.ts';

export type JsonSchema = Record<string, unknown>;

export const CONFIG_API_VERSION = 'aegis/v1';

/** Config identities end up in label values and plan output; keep them label-key safe. */
export const NAME_PATTERN = '^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$';

export const nameSchema = {
  type: 'string',
  pattern: NAME_PATTERN,
  description: 'Identity within the config repository: lowercase letters, digits, `.`, `_` and `-`, up to 63 characters, starting and ending with a letter or digit.',
} as const;

const siteReferenceSchema = { ...nameSchema, description: '`metadata.name` of the ShieldSite the object belongs to.' } as const;

const documentFileSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 1024,
  description: 'Path of a file holding the OpenAPI document, relative to this YAML file; it must stay inside the config directory.',
} as const;

/** Nested rule lists of a ShieldSite, and the kind each item expands to. */
export const NESTED_RULES = [
  { field: 'virtual_patches', kind: 'VirtualPatch', nameRequired: true },
  { field: 'ip_access', kind: 'IpAccessRule', nameRequired: false },
  { field: 'rate_limits', kind: 'RateLimitRule', nameRequired: true },
] as const satisfies readonly { field: string; kind: Kind; nameRequired: boolean }[];

/** The ShieldSite field holding a nested ShieldSchema. */
export const NESTED_SCHEMA_FIELD = 'schema';

export const ALL_KINDS: readonly Kind[] = KINDS.map((k) => k.meta.kind as Kind);

export function kindDefinition(kind: Kind): KindDefinition {
  const found = KINDS.find((k) => k.meta.kind === kind);
  if (!found) throw new Error(`no schema for kind ${kind}`);
  return found;
}

export const isSiteKind = (kind: Kind): boolean => SITE_KINDS.includes(kind);

/** A closed object schema; `$id`, title and description of the kind are left behind so that a kind can appear more than once. */
function closedObject(properties: Record<string, unknown>, required: readonly string[], description: string, extra: JsonSchema = {}): JsonSchema {
  return { type: 'object', description, additionalProperties: false, required: [...required], properties, ...extra };
}

/** Exactly one of `document` and `document_file`; the loader turns this `oneOf` into one readable message. */
const documentChoice = { oneOf: [{ required: ['document'] }, { required: ['document_file'] }] } as const;

/** ShieldSchema fields in config: the API's, except that the document may come from a file. */
function schemaFields(): { properties: Record<string, unknown>; required: string[] } {
  const spec = kindDefinition('ShieldSchema').spec;
  return {
    properties: { ...spec.properties, document_file: documentFileSchema },
    // `document` is required by the API; here the choice with document_file takes its place.
    required: spec.required.filter((field) => field !== 'document'),
  };
}

/** ScanSchedule `name` (the API's display name) defaults to `metadata.name` in config. */
function withoutRequired(required: readonly string[], field: string): string[] {
  return required.filter((f) => f !== field);
}

/** An item of a ShieldSite's nested rule list: the kind's spec plus its `name`. */
function nestedItemSchema(kind: Kind, nameRequired: boolean): JsonSchema {
  const spec = kindDefinition(kind).spec;
  return closedObject(
    { name: { ...nameSchema, description: `Identity of the ${kind} within its site.` }, ...spec.properties },
    nameRequired ? ['name', ...spec.required] : spec.required,
    `A ${kind} of this site.${nameRequired ? '' : ' `name` defaults to `<type>-<value>`.'}`,
  );
}

function shieldSiteConfigSpec(): JsonSchema {
  const spec = kindDefinition('ShieldSite').spec;
  const nested: Record<string, unknown> = {};
  for (const { field, kind, nameRequired } of NESTED_RULES) {
    nested[field] = { type: 'array', items: nestedItemSchema(kind, nameRequired), description: `${kind} rules of this site.` };
  }
  const schema = schemaFields();
  nested[NESTED_SCHEMA_FIELD] = closedObject(schema.properties, schema.required, 'The OpenAPI schema enforced on this site.', documentChoice);
  return closedObject({ ...spec.properties, ...nested }, spec.required, spec.description);
}

/** The `spec` of a config document of the given kind. */
export function configSpecSchema(kind: Kind): JsonSchema {
  if (kind === 'ShieldSite') return shieldSiteConfigSpec();
  const spec = kindDefinition(kind).spec;
  const site = isSiteKind(kind) ? { site: siteReferenceSchema } : {};
  if (kind === 'ShieldSchema') {
    const schema = schemaFields();
    return closedObject({ ...site, ...schema.properties }, ['site', ...schema.required], spec.description, documentChoice);
  }
  const required = kind === 'ScanSchedule' ? withoutRequired(spec.required, 'name') : spec.required;
  return closedObject({ ...site, ...spec.properties }, isSiteKind(kind) ? ['site', ...required] : required, spec.description);
}

/** The whole config document: `{ apiVersion, kind, metadata: { name }, spec }`. */
export function buildConfigDocumentSchema(): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://aegis.dev/schemas/ConfigDocument.json',
    title: 'Aegis config document',
    type: 'object',
    description: 'One object managed as code (`aegis validate|plan|apply DIR`).',
    additionalProperties: false,
    required: ['apiVersion', 'kind', 'metadata', 'spec'],
    properties: {
      apiVersion: { const: CONFIG_API_VERSION, description: 'Version of the config format.' },
      kind: { type: 'string', enum: [...ALL_KINDS], description: 'Kind of object.' },
      metadata: closedObject({ name: nameSchema }, ['name'], 'Identity of the object.'),
      spec: { type: 'object', description: 'The desired state; its fields depend on `kind`.' },
    },
    allOf: ALL_KINDS.map((kind) => ({
      if: { required: ['kind'], properties: { kind: { const: kind } } },
      then: { properties: { spec: configSpecSchema(kind) } },
    })),
  };
}

export const configDocumentSchema: JsonSchema = buildConfigDocumentSchema();

/**
 * The attributes of an `aegis_*` resource in Terraform JSON: the kind's spec, with `site_id` (a
 * `${aegis_shield_site.NAME.id}` reference) for site kinds. Terraform has no `document_file`.
 */
export function terraformAttributesSchema(kind: Kind): JsonSchema {
  const spec = kindDefinition(kind).spec;
  if (!isSiteKind(kind)) return closedObject(spec.properties, spec.required, spec.description);
  const siteId = { type: 'string', minLength: 1, description: 'Reference to the site: `${aegis_shield_site.NAME.id}`.' };
  return closedObject({ site_id: siteId, ...spec.properties }, ['site_id', ...spec.required], spec.description);
}

/** The kind's API spec as is (without `$id`, so it can be compiled next to the document schema). */
export function apiSpecSchema(kind: Kind): JsonSchema {
  const { $id: _id, ...spec } = kindDefinition(kind).spec;
  return { ...spec, required: [...spec.required] };
}
