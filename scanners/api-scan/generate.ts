// Valid requests for an operation, built deterministically (the same document gives the same
// requests, so a finding's request can be compared across scans): the document's own examples,
// `example`, `default`, `const` and `enum` values first, and otherwise a value made from the
// schema — strings honouring format, length and (checked with RE2) pattern, numbers within their
// bounds, arrays of their minimum length, objects with every property that is not readOnly
// (optional ones too, since they reach code paths the required ones do not).
import { compileUserRegex, type CompiledPattern } from '../../schemas/checks/regex.ts';
import { isObject, type JsonObject } from '../../schemas/json-value.ts';
import { deref } from '../../schemas/openapi/refs.ts';
import { isJsonMedia, type ApiOperation, type ApiParameter } from './operations.ts';

/** Nesting beyond which optional properties are left out (recursive schemas end here). */
const MAX_OPTIONAL_DEPTH = 4;
/** Nesting beyond which nothing more is generated. */
const MAX_DEPTH = 12;
/** Values generated per request; past it only required properties are filled (reference-heavy documents). */
const MAX_NODES = 500;
/** Values generated per request at all. */
const MAX_NODES_HARD = 5000;
/** Longest array generated (for a larger minItems the request is knowingly invalid). */
const MAX_ARRAY_LENGTH = 20;

const FORMAT_SAMPLES: Record<string, string> = {
  uuid: '3fa85f64-5717-4562-b3fc-2c963f66afa6',
  email: 'scanner@example.com',
  'idn-email': 'scanner@example.com',
  'date-time': '2024-01-15T10:00:00Z',
  date: '2024-01-15',
  time: '10:00:00Z',
  duration: 'P1D',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  iri: 'https://example.com/',
  'uri-reference': 'https://example.com/',
  'iri-reference': 'https://example.com/',
  'uri-template': 'https://example.com/{id}',
  hostname: 'example.com',
  'idn-hostname': 'example.com',
  ipv4: '192.0.2.10',
  ipv6: '2001:db8::10',
  byte: 'YWVnaXM=',
  password: 'Aegis-scan-1',
  'json-pointer': '/aegis',
  regex: 'aegis',
  int32: '1',
  int64: '1',
};

/** Strings tried in turn against a `pattern` when the plain sample does not match it. */
const PATTERN_CANDIDATES = ['aegis', 'Aegis', 'AEGIS', 'a', 'A', '1', '12345', 'abc123', 'ABC123', 'aegis-1', 'aegis_1', 'A1', 'a1', 'AB-1234', 'ab', '0'];

export interface RequestValues {
  /** By `in:name`. Parameters without a value are not sent. */
  params: Map<string, unknown>;
  /** undefined: no body. */
  body: unknown;
}

export interface BuiltRequest {
  method: string;
  url: string;
  /** The concrete path, without query. */
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export const paramKey = (p: Pick<ApiParameter, 'in' | 'name'>): string => `${p.in}:${p.name}`;

export class ValueGenerator {
  /** Constraints no generated value could meet (the request may be refused as invalid). */
  readonly inexact: string[] = [];
  private readonly patterns = new Map<string, CompiledPattern | null>();
  private nodes = 0;

  constructor(private readonly root: JsonObject) {}

  /**
   * A value for the schema, preferring the first of the examples given that fits it (documents'
   * examples are often wrong: petstore's `password: {type: string, example: 12345}`); `accepts`
   * validates an example fully when the caller can.
   */
  value(schema: unknown, examples: readonly unknown[] = [], accepts?: (value: unknown) => boolean): unknown {
    this.nodes = 0;
    const resolved = deref(this.root, schema);
    const example = examples.find((e) => (!isObject(resolved) || fitsType(resolved, e)) && (accepts?.(e) ?? true));
    if (example !== undefined) return structuredClone(example);
    return this.generate(schema, 0);
  }

  private pattern(source: string): CompiledPattern | null {
    if (!this.patterns.has(source)) {
      const compiled = compileUserRegex(source);
      this.patterns.set(source, compiled.ok ? compiled.compiled : null);
    }
    return this.patterns.get(source) ?? null;
  }

  /** allOf parts merged into one schema (properties and required united). */
  private flatten(schema: JsonObject, depth: number): JsonObject {
    if (!Array.isArray(schema.allOf) || depth > MAX_DEPTH) return schema;
    const merged: JsonObject = {};
    const properties: JsonObject = {};
    const required = new Set<string>();
    const own = { ...schema, allOf: undefined };
    for (const part of [own, ...schema.allOf]) {
      const resolved = deref(this.root, part);
      if (!isObject(resolved)) continue;
      const flat = this.flatten(resolved, depth + 1);
      for (const [key, value] of Object.entries(flat)) {
        // A part's example describes the part, not the whole: only the schema's own is kept.
        if (value === undefined || key === 'properties' || key === 'required' || (part !== own && EXAMPLE_KEYS.has(key))) continue;
        merged[key] ??= value;
      }
      if (isObject(flat.properties)) Object.assign(properties, flat.properties);
      if (Array.isArray(flat.required)) for (const name of flat.required) if (typeof name === 'string') required.add(name);
    }
    if (Object.keys(properties).length > 0) merged.properties = properties;
    if (required.size > 0) merged.required = [...required];
    delete merged.allOf;
    return merged;
  }

  private generate(raw: unknown, depth: number): unknown {
    this.nodes += 1;
    if (this.nodes > MAX_NODES_HARD) {
      // Required properties alone can multiply without end (A requires ten Bs, each ten Cs…).
      if (this.nodes === MAX_NODES_HARD + 1) this.inexact.push(`a value needed more than ${MAX_NODES_HARD} parts; the rest left empty`);
      return null;
    }
    const resolved = deref(this.root, raw);
    if (!isObject(resolved) || depth > MAX_DEPTH) return 'aegis';
    const schema = this.flatten(resolved, depth);
    if ('const' in schema) return structuredClone(schema.const);
    const given = [schema.example, ...(Array.isArray(schema.examples) ? schema.examples : []), schema.default].find((v) => v !== undefined && fitsType(schema, v));
    if (given !== undefined) return structuredClone(given);
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return structuredClone(schema.enum.find((v) => v !== null) ?? schema.enum[0]);
    for (const key of ['oneOf', 'anyOf'] as const) {
      const options = schema[key];
      if (Array.isArray(options) && options.length > 0) return this.generate(options[0], depth + 1);
    }
    switch (typeOf(schema)) {
      case 'string':
        return this.string(schema);
      case 'integer':
        return this.number(schema, true);
      case 'number':
        return this.number(schema, false);
      case 'boolean':
        return true;
      case 'null':
        return null;
      case 'array':
        return this.array(schema, depth);
      case 'object':
        return this.object(schema, depth);
      default:
        return 'aegis';
    }
  }

  private string(schema: JsonObject): string {
    const format = typeof schema.format === 'string' ? schema.format : undefined;
    const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
    const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
    const fit = (text: string): string => {
      let out = text;
      // Formatted values keep their shape; only free text is padded.
      if (out.length < min && (format === undefined || FORMAT_SAMPLES[format] === undefined)) out = out + 'x'.repeat(min - out.length);
      if (out.length > max) out = out.slice(0, max);
      return out;
    };
    const sample = fit((format && FORMAT_SAMPLES[format]) || 'aegis');
    if (typeof schema.pattern !== 'string') return sample;
    const pattern = this.pattern(schema.pattern);
    if (!pattern) return sample;
    for (const candidate of [sample, ...PATTERN_CANDIDATES.map(fit)]) {
      if (candidate.length >= min && candidate.length <= max && pattern.test(candidate)) return candidate;
    }
    this.inexact.push(`no value generated for pattern ${JSON.stringify(schema.pattern.slice(0, 80))}`);
    return sample;
  }

  private number(schema: JsonObject, integer: boolean): number {
    let lo = typeof schema.minimum === 'number' ? schema.minimum : -Infinity;
    let hi = typeof schema.maximum === 'number' ? schema.maximum : Infinity;
    const step = integer ? 1 : 0.5;
    // 3.0 has boolean exclusive flags on minimum/maximum; 3.1 has numeric bounds.
    if (schema.exclusiveMinimum === true) lo += step;
    else if (typeof schema.exclusiveMinimum === 'number') lo = Math.max(lo, schema.exclusiveMinimum + step);
    if (schema.exclusiveMaximum === true) hi -= step;
    else if (typeof schema.exclusiveMaximum === 'number') hi = Math.min(hi, schema.exclusiveMaximum - step);
    if (integer) {
      lo = Math.ceil(lo);
      hi = Math.floor(hi);
    }
    // 1 rather than 0: ids usually start there.
    let value = lo <= 1 && 1 <= hi ? 1 : Number.isFinite(lo) ? lo : Number.isFinite(hi) ? hi : 1;
    const multiple = typeof schema.multipleOf === 'number' && schema.multipleOf > 0 ? schema.multipleOf : undefined;
    if (multiple) {
      value = Math.ceil(value / multiple) * multiple;
      if (value > hi) value = Math.floor(hi / multiple) * multiple;
    }
    if (value < lo || value > hi) this.inexact.push(`no number in [${lo}, ${hi}]`);
    return value;
  }

  private array(schema: JsonObject, depth: number): unknown[] {
    const min = typeof schema.minItems === 'number' ? schema.minItems : 1;
    const max = typeof schema.maxItems === 'number' ? schema.maxItems : Infinity;
    let count = Math.min(Math.max(min, 1), max);
    if (count > MAX_ARRAY_LENGTH) {
      count = MAX_ARRAY_LENGTH;
      this.inexact.push(`minItems ${min} not generated`);
    }
    const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
    const items: unknown[] = [];
    for (let i = 0; i < count; i += 1) {
      let item = this.generate(i < prefix.length ? prefix[i] : schema.items, depth + 1);
      if (i > 0 && schema.uniqueItems === true) item = this.variant(item, i, deref(this.root, schema.items));
      items.push(item);
    }
    return items;
  }

  /** The i-th distinct variant of a generated item (uniqueItems), keeping its format where it can. */
  private variant(item: unknown, i: number, schema: unknown): unknown {
    if (typeof item === 'number') return item + i;
    if (typeof item !== 'string') return item;
    const format = isObject(schema) && typeof schema.format === 'string' ? schema.format : undefined;
    if (format === 'uuid') return `${item.slice(0, -1)}${(i % 16).toString(16)}`;
    if (format === 'email') return item.replace('@', `${i}@`);
    if (format === undefined) return `${item}${i}`;
    this.inexact.push(`distinct ${format} values for uniqueItems`);
    return item;
  }

  private object(schema: JsonObject, depth: number): JsonObject {
    const out: JsonObject = {};
    const required = new Set(Array.isArray(schema.required) ? schema.required.filter((n): n is string => typeof n === 'string') : []);
    const properties = isObject(schema.properties) ? schema.properties : {};
    for (const [name, sub] of Object.entries(properties)) {
      const resolved = deref(this.root, sub);
      if (isObject(resolved) && resolved.readOnly === true) continue;
      const optionalOk = depth < MAX_OPTIONAL_DEPTH && this.nodes <= MAX_NODES;
      if (!required.has(name) && !optionalOk) continue;
      out[name] = this.generate(sub, depth + 1);
    }
    for (const name of required) if (!(name in out) && !(name in properties)) out[name] = 'aegis';
    if (Object.keys(properties).length === 0 && isObject(schema.additionalProperties) && typeof schema.minProperties === 'number' && schema.minProperties > 0) {
      out.key = this.generate(schema.additionalProperties, depth + 1);
    }
    return out;
  }
}

const EXAMPLE_KEYS = new Set(['example', 'examples', 'default']);

/** Whether the value has a JSON type the schema's `type` allows (no type: anything). */
export function fitsType(schema: JsonObject, value: unknown): boolean {
  if (value === null && schema.nullable === true) return true;
  const types = Array.isArray(schema.type) ? schema.type : typeof schema.type === 'string' ? [schema.type] : null;
  if (!types) return true;
  return types.some((t) => {
    switch (t) {
      case 'string':
        return typeof value === 'string';
      case 'integer':
        return Number.isInteger(value);
      case 'number':
        return typeof value === 'number';
      case 'boolean':
        return typeof value === 'boolean';
      case 'array':
        return Array.isArray(value);
      case 'object':
        return isObject(value);
      case 'null':
        return value === null;
      default:
        return true;
    }
  });
}

/** The JSON type a schema describes, inferred from its keywords when `type` is absent. */
export function typeOf(schema: JsonObject): string | undefined {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') ?? schema.type[0] : schema.type;
  if (typeof type === 'string') return type;
  if (isObject(schema.properties) || Array.isArray(schema.required) || schema.additionalProperties !== undefined) return 'object';
  if (schema.items !== undefined || schema.prefixItems !== undefined) return 'array';
  if (schema.minLength !== undefined || schema.maxLength !== undefined || schema.pattern !== undefined || schema.format !== undefined) return 'string';
  if (schema.minimum !== undefined || schema.maximum !== undefined) return 'number';
  return undefined;
}

/**
 * Values for every parameter (required or not: optional ones reach more code) and the body.
 * `accepts(schema, value, key)` validates examples against their schema; `key` names the schema
 * (`GET /x param:query:q`, `GET /x body`) for caching.
 */
export function sampleRequest(op: ApiOperation, generator: ValueGenerator, accepts?: (schema: unknown, value: unknown, key: string) => boolean): RequestValues {
  const params = new Map<string, unknown>();
  const check = (schema: unknown, key: string) => (accepts && schema !== undefined ? (value: unknown) => accepts(schema, value, key) : undefined);
  for (const p of op.parameters) params.set(paramKey(p), generator.value(p.schema, p.examples, check(p.schema, `${op.key} param:${paramKey(p)}`)));
  const media = op.body?.media;
  const body = media ? generator.value(media.schema, media.examples, check(media.schema, `${op.key} body`)) : undefined;
  return { params, body };
}

const text = (value: unknown): string => (typeof value === 'string' ? value : value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value));
const enc = (value: unknown): string => encodeURIComponent(text(value));

/** A path, header or cookie value in the `simple`/`label`/`matrix`/`form` styles. */
function serializeSimple(p: ApiParameter, value: unknown, encode: (v: unknown) => string): string {
  if (p.json) return encode(JSON.stringify(value));
  const parts = Array.isArray(value)
    ? value.map(encode)
    : isObject(value)
      ? Object.entries(value).flatMap(([k, v]) => (p.explode ? [`${encode(k)}=${encode(v)}`] : [encode(k), encode(v)]))
      : [encode(value)];
  if (p.style === 'label') return `.${parts.join(p.explode ? '.' : ',')}`;
  if (p.style === 'matrix') return p.explode && Array.isArray(value) ? parts.map((v) => `;${p.name}=${v}`).join('') : `;${p.name}=${parts.join(',')}`;
  return parts.join(',');
}

/** `name=value` pairs of a query parameter. */
function serializeQuery(p: ApiParameter, value: unknown): string[] {
  const name = encodeURIComponent(p.name);
  if (p.json) return [`${name}=${enc(JSON.stringify(value))}`];
  if (Array.isArray(value)) {
    if (p.explode && p.style === 'form') return value.map((v) => `${name}=${enc(v)}`);
    const sep = p.style === 'spaceDelimited' ? '%20' : p.style === 'pipeDelimited' ? '|' : ',';
    return [`${name}=${value.map(enc).join(sep)}`];
  }
  if (isObject(value)) {
    if (p.style === 'deepObject') return Object.entries(value).map(([k, v]) => `${name}%5B${encodeURIComponent(k)}%5D=${enc(v)}`);
    if (p.explode) return Object.entries(value).map(([k, v]) => `${encodeURIComponent(k)}=${enc(v)}`);
    return [`${name}=${Object.entries(value).flatMap(([k, v]) => [encodeURIComponent(k), enc(v)]).join(',')}`];
  }
  return [`${name}=${enc(value)}`];
}

/** The request for the values, against `baseUrl` (no trailing slash). */
export function buildRequest(op: ApiOperation, baseUrl: string, values: RequestValues): BuiltRequest {
  let path = op.path;
  const query: string[] = [];
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const p of op.parameters) {
    const key = paramKey(p);
    if (!values.params.has(key)) continue;
    const value = values.params.get(key);
    if (p.in === 'path') path = path.split(`{${p.name}}`).join(serializeSimple(p, value, enc));
    else if (p.in === 'query') query.push(...serializeQuery(p, value));
    else if (p.in === 'header') headers[p.name.toLowerCase()] = serializeSimple({ ...p, style: 'simple' }, value, text).replace(/[^\x20-\x7e]/g, '?');
    else cookies.push(`${p.name}=${serializeSimple({ ...p, style: 'simple' }, value, enc)}`);
  }
  // A template variable no parameter declares (an invalid document) still gets a value.
  path = path.replace(/\{[^}/]*\}/g, 'aegis');
  if (cookies.length > 0) headers.cookie = cookies.join('; ');
  if (op.responses.some((r) => r.media.some((m) => isJsonMedia(m.type)))) headers.accept = 'application/json';
  let body: string | undefined;
  const media = op.body?.media;
  if (media && values.body !== undefined) {
    if (media.type === 'application/x-www-form-urlencoded') {
      body = isObject(values.body) ? Object.entries(values.body).map(([k, v]) => `${encodeURIComponent(k)}=${enc(v)}`).join('&') : enc(values.body);
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else {
      body = JSON.stringify(values.body);
      headers['content-type'] = media.type.includes('*') ? 'application/json' : media.type;
    }
  }
  const base = baseUrl.replace(/\/+$/, '');
  const url = `${base}${path}${query.length > 0 ? `?${query.join('&')}` : ''}`;
  return { method: op.method, url, path: `${new URL(base).pathname.replace(/\/+$/, '')}${path}`, headers, ...(body !== undefined ? { body } : {}) };
}
