// Conversions between Terraform values (framework.ts TfValue) and the API's JSON, and the value
// comparisons plan and apply rely on.
import { TfNumber, UNKNOWN, type TfObject, type TfType, type TfValue } from '../framework.ts';

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
    return { ok: false, reason: `is not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
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
