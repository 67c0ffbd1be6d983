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
// - spec fields that are objects with `properties` (ShieldSite `managed_rules`), and arrays of such
//   objects, are protocol-6 nested attributes (`nested_type`, nesting SINGLE / LIST) rather than
//   `object` types: each sub-attribute is required, optional or optional+computed on its own (from
//   the object's `required` and the sub-schema's `default`, as at the top), so HCL names only what it
//   sets (`managed_rules = { paranoia_level = 2 }`). The attribute's `type` stays the implied value
//   type (object / list of object), which the value codecs use. Arrays of objects with
//   `uniqueItems` (SET nesting) and free objects inside nested ones are not mapped.
// - spec fields: required as in the spec; optional ones with a schema `default` are
//   optional+computed and planned as that default when left out (the API would fill it in anyway),
//   so removing them from config resets them instead of silently keeping the old value. Nested
//   sub-attributes with a default work the same way inside the object that is written.
// - an optional top-level nested attribute WITHOUT a default (`managed_rules`: "omitted in config:
//   left as it is") is optional+computed and `keepWhenOmitted`: left out of config, the plan keeps
//   the value the API has (the prior state), or leaves it unknown when a new object is created.
// - KindMeta.computed fields (and `id`) are computed, described by the Resource schema, with plain
//   types (objects included: nothing is configured there); KindMeta.sensitive ones are sensitive.
// - KindMeta.sensitive spec fields (a certificate's `private_key`) are write-only (Terraform 1.11+):
//   never in plan or state. A computed `<field>_sha256` holds the SHA-256 of the value last written,
//   so a changed value plans as an update without the value being kept anywhere.
//   Site-level kinds get a required `site_id` instead of the computed one (it names the parent;
//   changing it replaces the object).
import { nestedAttributeType, type AttributeSchema, type BlockSchema, type NestingMode, type TfType } from '../framework/contract.ts';
import type { KindDefinition, KindMeta } from '../../schemas/index.ts';
import { isKind, KIND_REGISTRY, type Kind } from '../../reconciler/kinds/index.ts';

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
  required?: readonly string[];
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
  /**
   * Optional+computed without a default: left out of config, the API's value is kept (planned as
   * prior, or unknown for a new object) and nothing is sent.
   */
  keepWhenOmitted: boolean;
  /** A nested attribute: how its object(s) are held and the mapping of each sub-attribute. */
  nested?: NestedMapping;
  /** Write-only: read from the request's config, null in plan and state. */
  writeOnly?: boolean;
  /** The computed SHA-256 (hex) of this write-only field, held in state in its place. */
  digestOf?: string;
}

export interface NestedMapping {
  nesting: NestingMode;
  attributes: AttributeMapping[];
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

const isObjectWithProperties = (node: JsonSchemaNode | undefined): node is JsonSchemaNode & { properties: Record<string, JsonSchemaNode> } =>
  node !== undefined && node.properties !== undefined && (Array.isArray(node.type) ? node.type.includes('object') : node.type === 'object');

/** The nesting a spec field maps to, or undefined when it is a plain attribute. */
function nestingOf(node: JsonSchemaNode, where: string): { nesting: NestingMode; object: JsonSchemaNode & { properties: Record<string, JsonSchemaNode> } } | undefined {
  if (isObjectWithProperties(node)) return { nesting: 'single', object: node };
  const isArray = Array.isArray(node.type) ? node.type.includes('array') : node.type === 'array';
  if (isArray && isObjectWithProperties(node.items)) {
    if (node.uniqueItems) throw new SchemaDerivationError(`${where}: sets of objects are not mapped (nested attributes with SET nesting)`);
    return { nesting: 'list', object: node.items };
  }
  return undefined;
}

function describe(node: JsonSchemaNode, where: string): string {
  if (!node.description) throw new SchemaDerivationError(`${where}: no description in the schema`);
  return node.description;
}

/**
 * A spec field (or, with `top` false, a sub-attribute of a nested one) as a configurable
 * attribute: its type or nested object, required / optional / optional+computed, and its default.
 */
function deriveConfigurable(field: string, node: JsonSchemaNode, isRequired: boolean, where: string, top: boolean): AttributeMapping {
  const nesting = nestingOf(node, where);
  const hasDefault = node.default !== undefined;
  const required = isRequired && !isNullable(node);
  if (nesting) {
    const inner = new Set(nesting.object.required ?? []);
    const subs = Object.entries(nesting.object.properties).map(([name, child]) => deriveConfigurable(name, child, inner.has(name), `${where}.${name}`, false));
    const nested = { nesting: nesting.nesting, attributes: subs.map((sub) => sub.schema) };
    // Without a default, a top-level nested attribute left out of config keeps the API's value.
    const keepWhenOmitted = top && !required && !hasDefault;
    const schema: AttributeSchema = {
      name: field,
      type: nestedAttributeType(nested),
      nested,
      description: describe(node, where),
      ...(required ? { required: true } : { optional: true, ...(hasDefault || keepWhenOmitted ? { computed: true } : {}) }),
    };
    return {
      schema,
      field,
      ...(hasDefault ? { defaultValue: node.default } : {}),
      configurable: true,
      forcesReplacement: false,
      json: false,
      parent: false,
      keepWhenOmitted,
      nested: { nesting: nesting.nesting, attributes: subs },
    };
  }
  const { type, json } = tfTypeOf(node, where);
  if (json && !top) throw new SchemaDerivationError(`${where}: free objects inside nested attributes are not mapped`);
  const name = json ? `${field}_json` : field;
  const description = describe(node, where) + (json ? ' As JSON text of an object (`jsonencode({...})`).' : '');
  const schema: AttributeSchema = required ? { name, type, description, required: true } : { name, type, description, optional: true, ...(hasDefault ? { computed: true } : {}) };
  return {
    schema,
    field,
    ...(hasDefault ? { defaultValue: json ? JSON.stringify(node.default) : node.default } : {}),
    configurable: true,
    forcesReplacement: false,
    json,
    parent: false,
    keepWhenOmitted: false,
  };
}

/** The computed attribute standing for a write-only field in state. */
export const writeOnlyDigestName = (field: string): string => `${field}_sha256`;

const SITE_ID_DESCRIPTION = 'Id of the Shield site (`aegis_shield_site.NAME.id`) the object belongs to. Changing it replaces the object.';

export function deriveKindSchema(definition: KindDefinition): KindSchema {
  const { meta, spec, resource } = definition;
  const specProps = spec.properties as Record<string, JsonSchemaNode>;
  const resourceProps = resource.properties as Record<string, JsonSchemaNode>;
  const required = new Set(spec.required);
  const mutable = new Set(meta.mutable);
  const sensitive = new Set(meta.sensitive);
  const where = meta.terraformType;
  const kind = meta.kind;
  if (!isKind(kind)) throw new SchemaDerivationError(`${where}: ${kind} is not in the kind registry (reconciler/kinds)`);
  const attributes: AttributeMapping[] = [];

  if (meta.parent === 'ShieldSite') {
    attributes.push({
      schema: { name: 'site_id', type: 'string', description: SITE_ID_DESCRIPTION, required: true },
      field: 'site_id',
      configurable: true,
      forcesReplacement: true,
      json: false,
      parent: true,
      keepWhenOmitted: false,
    });
  }
  // Every resource has an `id` (Terraform's import, CDKTF's `.id`); the schema kind has none of
  // its own, so its id is the site's.
  if (!('id' in resourceProps)) {
    attributes.push({
      schema: { name: 'id', type: 'string', description: 'Same as `site_id`: a site has at most one.', computed: true },
      field: 'site_id',
      configurable: false,
      forcesReplacement: false,
      json: false,
      parent: false,
      keepWhenOmitted: false,
    });
  }

  for (const [field, node] of Object.entries(specProps)) {
    const mapping = deriveConfigurable(field, node, required.has(field), `${where}.${field}`, true);
    if (!sensitive.has(field)) {
      attributes.push({ ...mapping, forcesReplacement: !mutable.has(field) });
      continue;
    }
    if (mapping.nested || mapping.json || mapping.schema.computed) throw new SchemaDerivationError(`${where}.${field}: only a plain attribute without a default can be write-only`);
    mapping.schema.sensitive = true;
    mapping.schema.writeOnly = true;
    mapping.schema.description += ' Write-only (Terraform 1.11 or later): never stored in the plan or state.';
    attributes.push({ ...mapping, forcesReplacement: !mutable.has(field), writeOnly: true });
    attributes.push({
      schema: {
        name: writeOnlyDigestName(field),
        type: 'string',
        description: `SHA-256 (hex) of the \`${field}\` last written, kept in state instead of the value: a different value in config plans an update.`,
        computed: true,
      },
      field: writeOnlyDigestName(field),
      configurable: false,
      forcesReplacement: false,
      json: false,
      parent: false,
      keepWhenOmitted: false,
      digestOf: field,
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
    attributes.push({ schema, field, configurable: false, forcesReplacement: false, json, parent: false, keepWhenOmitted: false });
  }

  const checkNames = (list: readonly AttributeSchema[], at: string): void => {
    for (const schema of list) {
      if (!NAME_PATTERN.test(schema.name)) throw new SchemaDerivationError(`${at}: attribute name ${schema.name} is not valid in Terraform`);
      if (schema.nested) checkNames(schema.nested.attributes, `${at}.${schema.name}`);
    }
  };
  checkNames(attributes.map((a) => a.schema), where);
  return {
    kind,
    meta,
    definition,
    block: { description: spec.description, attributes: attributes.map((a) => a.schema) },
    attributes,
  };
}

/** Every managed kind's Terraform schema, in registry order. */
export function deriveAllKindSchemas(): KindSchema[] {
  return KIND_REGISTRY.map((entry) => deriveKindSchema(entry.definition));
}
