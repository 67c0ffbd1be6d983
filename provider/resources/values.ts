// Conversions between Terraform values (framework/contract.ts TfValue) and the API's JSON, and the value
// comparisons plan and apply rely on.
import { TfNumber, UNKNOWN, type NestingMode, type TfObject, type TfType, type TfValue } from '../framework/contract.ts';
import { errorMessage } from '../../schemas/json-value.ts';

export type Json = null | string | number | boolean | Json[] | { [key: string]: Json };

const isTfObject = (value: TfValue): value is { [key: string]: TfValue } =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof TfNumber);

const isJsonObject = (value: unknown): value is { [key: string]: Json } => typeof value === 'object' && value !== null && !Array.isArray(value);

/** True when the value or anything inside it is unknown. */
export function containsUnknown(value: TfValue | undefined): boolean {
  if (value === UNKNOWN) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (value !== undefined && isTfObject(value)) return Object.values(value).some(containsUnknown);
  return false;
}

/** A wholly known Terraform value as JSON for the API. Callers check containsUnknown first. */
export function toJson(value: TfValue): Json {
  if (value === UNKNOWN) throw new Error('an unknown value cannot be sent to the API');
  if (value instanceof TfNumber) return value.toNumber();
  if (Array.isArray(value)) return value.map(toJson);
  if (isTfObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJson(v)]));
  return value;
}

/** JSON text with object keys sorted, as Terraform's `jsonencode` writes it. */
export function canonicalJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (isJsonObject(v)) return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort(v[k])]));
    return v;
  };
  return JSON.stringify(sort(value));
}

/** An API value as a Terraform value of the given type. */
export function fromJson(value: unknown, type: TfType): TfValue {
  if (value === null || value === undefined) return null;
  if (type === 'number') return typeof value === 'number' ? TfNumber.of(value) : new TfNumber(String(value));
  if (type === 'string') return typeof value === 'string' ? value : String(value);
  if (type === 'bool') return value === true;
  if (type === 'dynamic') return null;
  const [shape, inner] = type;
  if (shape === 'list' || shape === 'set') return Array.isArray(value) ? value.map((v) => fromJson(v, inner)) : null;
  if (!isJsonObject(value)) return null;
  if (shape === 'map') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fromJson(v, inner)]));
  // Objects carry exactly their declared attributes: Terraform refuses missing or extra keys.
  return Object.fromEntries(Object.entries(inner).map(([k, t]) => [k, fromJson(value[k], t)]));
}

export type JsonParse = { ok: true; value: { [key: string]: Json } } | { ok: false; reason: string };

/** `config_json` text → the object the API takes. */
export function parseJsonObject(text: string): JsonParse {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `is not valid JSON: ${errorMessage(err)}` };
  }
  return isJsonObject(value) ? { ok: true, value } : { ok: false, reason: 'must be the JSON text of an object (`jsonencode({...})`)' };
}

/**
 * Whether two values mean the same thing for the given type: numbers by value, sets regardless of
 * order, JSON text by content. An unknown value equals nothing (it may turn out to be anything).
 */
export function sameValue(a: TfValue | undefined, b: TfValue | undefined, type: TfType, json = false): boolean {
  if (a === UNKNOWN || b === UNKNOWN) return false;
  if (a === undefined || b === undefined || a === null || b === null) return (a ?? null) === (b ?? null);
  if (json && typeof a === 'string' && typeof b === 'string') {
    const pa = parseJsonObject(a);
    const pb = parseJsonObject(b);
    return pa.ok && pb.ok ? canonicalJson(pa.value) === canonicalJson(pb.value) : a === b;
  }
  if (a instanceof TfNumber || b instanceof TfNumber) return a instanceof TfNumber && b instanceof TfNumber && a.toNumber() === b.toNumber();
  if (typeof type === 'string') return a === b;
  const [shape, inner] = type;
  if (shape === 'list' || shape === 'set') {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    if (shape === 'list') return a.every((v, i) => sameValue(v, b[i], inner));
    return a.every((v) => b.some((w) => sameValue(v, w, inner))) && b.every((w) => a.some((v) => sameValue(v, w, inner)));
  }
  if (!isTfObject(a) || !isTfObject(b)) return false;
  if (shape === 'map') {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameValue(a[k], b[k], inner));
  }
  return Object.entries(inner).every(([k, t]) => sameValue(a[k], b[k], t));
}

/** The attribute's value in an object Terraform sent (absent reads as null). */
export const attr = (object: TfObject | null | undefined, name: string): TfValue => object?.[name] ?? null;

/** What the nested-value helpers read of an attribute mapping (schema.ts AttributeMapping). */
export interface ValueMapping {
  schema: { name: string; type: TfType };
  /** The API's name of the field. */
  field: string;
  defaultValue?: unknown;
  nested?: { nesting: NestingMode; attributes: readonly ValueMapping[] };
}

/** The objects a nested attribute's value holds (one, or each element of a list), with a way to rebuild it. */
function mapNestedObjects(nesting: NestingMode, value: TfValue, each: (object: { [key: string]: TfValue }) => TfValue): TfValue {
  if (nesting === 'single') return isTfObject(value) ? each(value) : value;
  return Array.isArray(value) ? value.map((element) => (isTfObject(element) ? each(element) : element)) : value;
}

/**
 * A configured value as planned: null takes the schema default (null without one) and, inside
 * nested attributes, every null sub-attribute with a default takes it, at any depth. Unknown
 * values stay unknown; nothing that was written is changed.
 */
export function withNestedDefaults(mapping: ValueMapping, value: TfValue): TfValue {
  if (value === UNKNOWN) return UNKNOWN;
  if (value === null) return mapping.defaultValue === undefined ? null : fromJson(mapping.defaultValue, mapping.schema.type);
  const nested = mapping.nested;
  if (!nested) return value;
  return mapNestedObjects(nested.nesting, value, (object) =>
    Object.fromEntries(nested.attributes.map((sub) => [sub.schema.name, withNestedDefaults(sub, object[sub.schema.name] ?? null)])),
  );
}

/**
 * A wholly known value as the API takes it. Inside nested attributes a null sub-attribute means
 * "not set" and is left out (the API's schemas have no null for `url_pattern` and the like) —
 * except where null is the sub-attribute's default (`tls.hsts`: null turns HSTS off), which is
 * sent, so an update can clear it. Sub-attributes go by their API field names.
 */
export function apiJson(mapping: ValueMapping, value: TfValue): Json {
  const nested = mapping.nested;
  if (!nested || value === null) return toJson(value);
  const one = (object: { [key: string]: TfValue }): Json => {
    const out: { [key: string]: Json } = {};
    for (const sub of nested.attributes) {
      const item = object[sub.schema.name] ?? null;
      if (item !== null || sub.defaultValue === null) out[sub.field] = apiJson(sub, item);
    }
    return out;
  };
  if (nested.nesting === 'single') {
    if (!isTfObject(value)) throw new Error(`${mapping.schema.name}: expected an object`);
    return one(value);
  }
  if (!Array.isArray(value)) throw new Error(`${mapping.schema.name}: expected a list`);
  return value.map((element) => {
    if (!isTfObject(element)) throw new Error(`${mapping.schema.name}: expected a list of objects`);
    return one(element);
  });
}
