// The OpenAPI document as enforcement reads it: parsed and checked from text, its internal `$ref`s
// followed (with the shared resolver, schemas/openapi/refs.ts), and its schemas rewritten into
// what ajv should enforce on requests (prepareDocument).
import { isObject, type JsonObject } from '../../../schemas/json-value.ts';
import { numericExclusiveBounds, openApiVersionOf, parseDocumentText } from '../../../schemas/openapi/document.ts';
import { externalReferences, followRefs, MAX_REF_HOPS } from '../../../schemas/openapi/refs.ts';
import type { Variant } from './model.ts';

/** Follows internal `$ref`s from `value` (found at `pointer`) to the object they name. */
export function deref(document: JsonObject, value: unknown, pointer: string): { value: JsonObject; pointer: string } | null {
  const found = followRefs(document, value, pointer);
  return found && isObject(found.value) ? { value: found.value, pointer: found.pointer } : null;
}

/** Parses YAML or JSON text into an OpenAPI 3.0/3.1 document with internal references only; throws the first reason otherwise. */
export function readDocument(text: string): { document: JsonObject; openapi30: boolean } {
  const looksJson = text.replace(/^\uFEFF/, '').trimStart().startsWith('{');
  let parsed = parseDocumentText(text, looksJson ? 'json' : 'yaml');
  if (!parsed.ok && looksJson) parsed = parseDocumentText(text, 'yaml');
  if (!parsed.ok) throw new Error(parsed.reasons[0] ?? 'the document cannot be parsed');
  const version = openApiVersionOf(parsed.value);
  if (!version.ok) throw new Error(version.reasons[0] ?? 'unsupported OpenAPI version');
  const external = externalReferences(parsed.value);
  if (external.length > 0) throw new Error(external[0]);
  return { document: parsed.value, openapi30: version.value.startsWith('3.0.') };
}

const SINGLE_SUBSCHEMAS = ['not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems'] as const;
const MAP_SUBSCHEMAS = ['$defs', 'definitions', 'dependentSchemas'] as const;
const LIST_SUBSCHEMAS = ['allOf', 'anyOf', 'oneOf'] as const;

/**
 * Rewrites every schema of the document (in place) into what ajv should enforce on requests:
 * OpenAPI 3.0 dialect turned into JSON Schema, `readOnly` properties no longer required and, for
 * the strict variant, objects closed. Walks from the places schemas live (`schema` fields,
 * `components.schemas`), skipping examples, which are arbitrary data.
 */
export function prepareDocument(document: JsonObject, openapi30: boolean, variant: Variant): (schema: unknown) => boolean {
  const visited = new Set<object>();
  const closable = new Map<object, boolean>();

  // Whether closing the schema means anything: it (or a part it is composed of) lists properties.
  const declaresProperties = (schema: unknown, depth = 0): boolean => {
    if (!isObject(schema) || depth > MAX_REF_HOPS) return false;
    const known = closable.get(schema);
    if (known !== undefined) return known;
    closable.set(schema, false); // cycle guard
    let result = isObject(schema.properties) || isObject(schema.patternProperties);
    if (!result && typeof schema.$ref === 'string') result = declaresProperties(deref(document, schema, '')?.value, depth + 1);
    for (const key of LIST_SUBSCHEMAS) {
      const list = schema[key];
      if (!result && Array.isArray(list)) result = list.some((s) => declaresProperties(s, depth + 1));
    }
    if (!result) result = declaresProperties(schema.then, depth + 1) || declaresProperties(schema.else, depth + 1);
    closable.set(schema, result);
    return result;
  };

  const isReadOnly = (schema: unknown): boolean => {
    if (!isObject(schema)) return false;
    if (schema.readOnly === true) return true;
    return typeof schema.$ref === 'string' && deref(document, schema, '')?.value.readOnly === true;
  };

  /** A schema in a value position: in the strict variant, closed when it declares properties. */
  const valueSchema = (schema: unknown): unknown => {
    visit(schema);
    if (variant !== 'strict' || !declaresProperties(schema)) return schema;
    return { allOf: [schema], unevaluatedProperties: false };
  };

  const visit = (schema: unknown): void => {
    if (!isObject(schema) || visited.has(schema)) return;
    visited.add(schema);
    if (openapi30) {
      if (schema.nullable === true && typeof schema.type === 'string') schema.type = [schema.type, 'null'];
      // Draft-04 style boolean exclusive bounds, as OpenAPI 3.0 has them.
      numericExclusiveBounds(schema);
    }
    // Not JSON Schema in 3.1, and ajv would otherwise interpret (or refuse) it.
    delete schema.nullable;
    if (Array.isArray(schema.required) && isObject(schema.properties)) {
      const properties = schema.properties;
      schema.required = schema.required.filter((name) => typeof name !== 'string' || !isReadOnly(properties[name]));
    }
    for (const key of ['properties', 'patternProperties'] as const) {
      const map = schema[key];
      if (isObject(map)) for (const name of Object.keys(map)) map[name] = valueSchema(map[name]);
    }
    for (const key of ['additionalProperties', 'additionalItems'] as const) if (isObject(schema[key])) schema[key] = valueSchema(schema[key]);
    if (isObject(schema.items)) schema.items = valueSchema(schema.items);
    for (const key of ['items', 'prefixItems'] as const) {
      const list = schema[key];
      if (Array.isArray(list)) list.forEach((item, i) => (list[i] = valueSchema(item)));
    }
    for (const key of SINGLE_SUBSCHEMAS) visit(schema[key]);
    for (const key of MAP_SUBSCHEMAS) {
      const map = schema[key];
      if (isObject(map)) for (const sub of Object.values(map)) visit(sub);
    }
    for (const key of LIST_SUBSCHEMAS) {
      const list = schema[key];
      if (Array.isArray(list)) for (const sub of list) visit(sub);
    }
  };

  const walk = (node: unknown, parentKey: string): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item, '');
      return;
    }
    if (!isObject(node)) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'example' || key === 'examples') continue;
      if (key === 'schema') visit(value);
      else if (key === 'schemas' && parentKey === 'components' && isObject(value)) for (const schema of Object.values(value)) visit(schema);
      else walk(value, key);
    }
  };
  walk(document, '');
  return (schema) => declaresProperties(schema);
}
