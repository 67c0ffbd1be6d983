// The JSON Schema (draft 2020-12) of a config document, derived from schemas/ so that a field added
// to a kind is accepted in config files the moment the API accepts it. Every object is closed
// (`additionalProperties: false`): a typo in a config file is an error, never a silently ignored key.
//
// One schema covers every kind: `allOf` holds one `if kind == K then spec: <K's config spec>` per
// kind, which editors (yaml-language-server) understand and which gives ajv one error per real
// mistake (the loader drops the `if` bookkeeping errors).
import type { KindDefinition } from '../../schemas/index.ts';
import { ALL_KINDS, childrenOf, isParentKind, kindEntry, type Entry, type ListNesting } from '../kinds/index.ts';
import { secretReferenceSchema } from '../kinds/secret-reference.ts';
import type { Kind } from '../model.ts';

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

/**
 * The ShieldSite field holding a nested ShieldSchema, from the registry; the loader (load.ts) looks
 * for `document_file` there as well as at the top of a spec.
 */
export const NESTED_SCHEMA_FIELD: string = (() => {
  const nested = kindEntry('ShieldSchema').config.nested;
  if (!nested) throw new Error('the ShieldSchema registry entry has no nesting');
  return nested.field;
})();

export { ALL_KINDS };

export function kindDefinition(kind: Kind): KindDefinition {
  return kindEntry(kind).definition;
}

export const isSiteKind = (kind: Kind): boolean => kindEntry(kind).parent !== null;

/** A closed object schema; `$id`, title and description of the kind are left behind so that a kind can appear more than once. */
function closedObject(properties: Record<string, unknown>, required: readonly string[], description: string, extra: JsonSchema = {}): JsonSchema {
  return { type: 'object', description, additionalProperties: false, required: [...required], properties, ...extra };
}

/**
 * A kind's fields in config: the API's, except that a file may stand for a field (`document_file`
 * for `document`: exactly one of the two, a `oneOf` the loader turns into one readable message),
 * a name field may be left out (a schedule's `name` defaults to `metadata.name`), and a secret is
 * named, never written (`private_key: { env: NAME }`).
 */
function configFields(entry: Entry): { properties: Record<string, unknown>; required: string[]; extra: JsonSchema } {
  const { spec } = entry.definition;
  const { fileField, nameField, secretField } = entry.config;
  const omitted = [fileField?.field, nameField];
  const fileProperty = fileField ? { [fileField.fileField]: { type: 'string', minLength: 1, maxLength: 1024, description: fileField.description } } : {};
  const secretProperty = secretField ? { [secretField.field]: secretReferenceSchema(secretField.description) } : {};
  return {
    properties: { ...spec.properties, ...fileProperty, ...secretProperty },
    required: spec.required.filter((field) => !omitted.includes(field)),
    extra: fileField ? { oneOf: [{ required: [fileField.field] }, { required: [fileField.fileField] }] } : {},
  };
}

/** An item of a ShieldSite's nested rule list: the kind's spec plus its `name`. */
function nestedItemSchema(kind: Kind, nesting: ListNesting): JsonSchema {
  const spec = kindDefinition(kind).spec;
  const { defaultName } = nesting;
  return closedObject(
    { name: { ...nameSchema, description: `Identity of the ${kind} within its site.` }, ...spec.properties },
    defaultName ? spec.required : ['name', ...spec.required],
    `A ${kind} of this site.${defaultName ? ` \`name\` defaults to ${defaultName.description}.` : ''}`,
  );
}

/** A site's config spec: its own fields plus the kinds config nests in it (the registry's `config.nested`). */
function parentConfigSpec(entry: Entry): JsonSchema {
  const spec = entry.definition.spec;
  const nested: Record<string, unknown> = {};
  for (const child of childrenOf(entry.kind)) {
    const nesting = child.config.nested;
    if (nesting?.form === 'list') nested[nesting.field] = { type: 'array', items: nestedItemSchema(child.kind, nesting), description: `${child.kind} rules of this site.` };
    if (nesting?.form === 'single') {
      const fields = configFields(child);
      nested[nesting.field] = closedObject(fields.properties, fields.required, nesting.description, fields.extra);
    }
  }
  return closedObject({ ...spec.properties, ...nested }, spec.required, spec.description);
}

/** The `spec` of a config document of the given kind. */
export function configSpecSchema(kind: Kind): JsonSchema {
  const entry = kindEntry(kind);
  if (isParentKind(kind)) return parentConfigSpec(entry);
  const fields = configFields(entry);
  if (entry.parent === null) return closedObject(fields.properties, fields.required, entry.definition.spec.description, fields.extra);
  return closedObject({ site: siteReferenceSchema, ...fields.properties }, ['site', ...fields.required], entry.definition.spec.description, fields.extra);
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
