// Terraform schemas derived from schemas/ (the same JSON Schemas the API validates with), so a
// field added to a kind shows up in the provider without a second copy to keep in step.
//
// Mapping decisions (documented here because CDKTF bindings and users' HCL depend on them):
// - string → string; integer/number → number; boolean → bool; `type: [T, 'null']` → T (nullable,
//   so never required).
// - array → set when the schema says `uniqueItems` (webhook `events`: order means nothing and
//   Terraform would otherwise show reorderings as changes), list otherwise; object items → object.
// - object with `additionalProperties: {type: string}` (labels) → map of string.
// - free object (scan schedule `config`) → `config_json`, a string of JSON text (`jsonencode(...)`),
//   the HashiCorp convention for free-form documents (like IAM `policy`): a `dynamic` attribute
//   would make every value's type part of the plan and CDKTF binds it as `any`.
// - spec fields: required as in the spec; optional ones with a schema `default` are
//   optional+computed and planned as that default when left out (the API would fill it in anyway),
//   so removing them from config resets them instead of silently keeping the old value.
// - KindMeta.computed fields (and `id`) are computed, described by the Resource schema;
//   KindMeta.sensitive ones are sensitive. Site-level kinds get a required `site_id` instead of the
//   computed one (it names the parent; changing it replaces the object).
import type { AttributeSchema, BlockSchema, TfType } from '../framework.ts';
import { KINDS, type KindDefinition, type KindMeta } from '../../schemas/index.ts';
import type { Kind } from '../../reconciler/model.ts';

/** A JSON Schema node, as far as the mapping reads it. */
export interface JsonSchemaNode {
  type?: string | readonly string[];
  description?: string;
  default?: unknown;
  enum?: readonly unknown[];
  items?: JsonSchemaNode;
  properties?: Record<string, JsonSchemaNode>;
  additionalProperties?: boolean | JsonSchemaNode;
  uniqueItems?: boolean;
}

export const NAME_PATTERN = /^[a-z0-9_]+$/;

/** How one Terraform attribute relates to the API object. */
export interface AttributeMapping {
  schema: AttributeSchema;
  /** The API field it carries (`config` for `config_json`). */
  field: string;
  /** Value the plan uses when config leaves the attribute out (from the spec's `default`). */
  defaultValue?: unknown;
  /** Set by config (required or optional); otherwise computed only. */
  configurable: boolean;
  /** Changing it forces a new object. */
  forcesReplacement: boolean;
  /** Carried as JSON text (config_json). */
  json: boolean;
  /** Parent id (site kinds): taken from config, sent in the path rather than the body. */
  parent: boolean;
}

export interface KindSchema {
  kind: Kind;
  meta: KindMeta;
  definition: KindDefinition;
  block: BlockSchema;
  attributes: AttributeMapping[];
}

export class SchemaDerivationError extends Error {}

function nonNullType(node: JsonSchemaNode, where: string): string {
  const types = (Array.isArray(node.type) ? node.type : [node.type]).filter((t): t is string => typeof t === 'string' && t !== 'null');
  const [type] = types;
  if (types.length !== 1 || type === undefined) throw new SchemaDerivationError(`${where}: cannot map JSON Schema type ${JSON.stringify(node.type)}`);
  return type;
}

/** The Terraform type of a JSON Schema node; `json` when it is a free object carried as text. */
export function tfTypeOf(node: JsonSchemaNode, where: string): { type: TfType; json: boolean } {
  switch (nonNullType(node, where)) {
    case 'string':
      return { type: 'string', json: false };
    case 'integer':
    case 'number':
      return { type: 'number', json: false };
    case 'boolean':
      return { type: 'bool', json: false };
    case 'array': {
      if (!node.items) throw new SchemaDerivationError(`${where}: array without items`);
      const element = tfTypeOf(node.items, `${where}[]`);
      if (element.json) throw new SchemaDerivationError(`${where}: arrays of free objects are not mapped`);
      return { type: [node.uniqueItems ? 'set' : 'list', element.type], json: false };
    }
    case 'object': {
      if (node.properties) {
        const fields: Record<string, TfType> = {};
        for (const [name, child] of Object.entries(node.properties)) fields[name] = tfTypeOf(child, `${where}.${name}`).type;
        return { type: ['object', fields], json: false };
      }
      const extra = node.additionalProperties;
      if (typeof extra === 'object') return { type: ['map', tfTypeOf(extra, `${where}{}`).type], json: false };
      return { type: 'string', json: true };
    }
    default:
      throw new SchemaDerivationError(`${where}: cannot map JSON Schema type ${JSON.stringify(node.type)}`);
  }
}

const isNullable = (node: JsonSchemaNode): boolean => Array.isArray(node.type) && node.type.includes('null');

function describe(node: JsonSchemaNode, where: string): string {
  if (!node.description) throw new SchemaDerivationError(`${where}: no description in the schema`);
  return node.description;
}

const SITE_ID_DESCRIPTION = 'Id of the Shield site (`aegis_shield_site.NAME.id`) the object belongs to. Changing it replaces the object.';

export function deriveKindSchema(definition: KindDefinition): KindSchema {
  const { meta, spec, resource } = definition;
  const specProps = spec.properties as Record<string, JsonSchemaNode>;
  const resourceProps = resource.properties as Record<string, JsonSchemaNode>;
  const required = new Set(spec.required);
  const mutable = new Set(meta.mutable);
  const sensitive = new Set(meta.sensitive);
  const where = meta.terraformType;
  const attributes: AttributeMapping[] = [];

  if (meta.parent === 'ShieldSite') {
    attributes.push({
      schema: { name: 'site_id', type: 'string', description: SITE_ID_DESCRIPTION, required: true },
      field: 'site_id',
      configurable: true,
      forcesReplacement: true,
      json: false,
      parent: true,
    });
  }
  // Every resource has an `id` (Terraform's import, CDKTF's `.id`); the schema kind has none of
  // its own, so its id is the site's.
  if (!('id' in resourceProps)) {
    attributes.push({
      schema: { name: 'id', type: 'string', description: 'Same as `site_id`: a site has at most one schema.', computed: true },
      field: 'site_id',
      configurable: false,
      forcesReplacement: false,
      json: false,
      parent: false,
    });
  }

  for (const [field, node] of Object.entries(specProps)) {
    const { type, json } = tfTypeOf(node, `${where}.${field}`);
    const name = json ? `${field}_json` : field;
    const hasDefault = node.default !== undefined;
    const description = describe(node, `${where}.${field}`) + (json ? ' As JSON text of an object (`jsonencode({...})`).' : '');
    const schema: AttributeSchema = required.has(field) && !isNullable(node)
      ? { name, type, description, required: true }
      : { name, type, description, optional: true, ...(hasDefault ? { computed: true } : {}) };
    if (sensitive.has(field)) schema.sensitive = true;
    attributes.push({
      schema,
      field,
      ...(hasDefault ? { defaultValue: json ? JSON.stringify(node.default) : node.default } : {}),
      configurable: true,
      forcesReplacement: !mutable.has(field),
      json,
      parent: false,
    });
  }

  for (const field of meta.computed) {
    if (field in specProps) continue;
    if (field === 'site_id' && meta.parent === 'ShieldSite') continue;
    const node = resourceProps[field];
    if (!node) throw new SchemaDerivationError(`${where}.${field}: computed field missing from the Resource schema`);
    const { type, json } = tfTypeOf(node, `${where}.${field}`);
    const schema: AttributeSchema = { name: json ? `${field}_json` : field, type, description: describe(node, `${where}.${field}`), computed: true };
    if (sensitive.has(field)) schema.sensitive = true;
    attributes.push({ schema, field, configurable: false, forcesReplacement: false, json, parent: false });
  }

  for (const { schema } of attributes) {
    if (!NAME_PATTERN.test(schema.name)) throw new SchemaDerivationError(`${where}: attribute name ${schema.name} is not valid in Terraform`);
  }
  return {
    kind: meta.kind as Kind,
    meta,
    definition,
    block: { description: spec.description, attributes: attributes.map((a) => a.schema) },
    attributes,
  };
}

/** Every managed kind's Terraform schema, in KINDS order. */
export function deriveAllKindSchemas(): KindSchema[] {
  return KINDS.map(deriveKindSchema);
}
