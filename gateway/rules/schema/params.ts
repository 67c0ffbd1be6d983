// Parameter values as the operation declares them, decoded from the request: path segments by
// style (simple, label, matrix), query values (form, space and pipe delimited, deepObject,
// exploded objects), headers and cookies, and `content`-declared JSON. What comes out is what the
// parameter validators (compiled with coercion) check.
import { isObject, type JsonObject } from '../../../schemas/json-value.ts';
import { deref } from './document.ts';
import type { CompiledParam, ParamShape } from './model.ts';
import type { Matched } from './paths.ts';

/** What a parameter value looks like, from its schema's `type` (following `$ref`s). */
export function shapeOf(document: JsonObject, schema: unknown): ParamShape {
  const resolved = deref(document, schema, '')?.value;
  if (!resolved) return 'primitive';
  const types = Array.isArray(resolved.type) ? resolved.type : [resolved.type];
  if (types.includes('array') || (resolved.type === undefined && resolved.items !== undefined)) return 'array';
  if (types.includes('object') || (resolved.type === undefined && isObject(resolved.properties))) return 'object';
  return 'primitive';
}

/** Percent-decoded text; text that does not decode stays as it is. */
export function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** `a,1,b,2` (explode false) or `a=1,b=2` (explode true) into an object. */
function delimitedObject(text: string, explode: boolean): Record<string, string> {
  const result: Record<string, string> = {};
  const parts = text.split(',');
  if (explode) {
    for (const part of parts) {
      const eq = part.indexOf('=');
      if (eq > 0) result[decode(part.slice(0, eq))] = decode(part.slice(eq + 1));
    }
  } else {
    for (let i = 0; i + 1 < parts.length; i += 2) result[decode(parts[i]!)] = decode(parts[i + 1]!);
  }
  return result;
}

/** Invalid JSON in a `content`-declared parameter; reported as such rather than as a type error. */
export const INVALID_JSON = Symbol('invalid JSON');

function parseJsonParam(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return INVALID_JSON;
  }
}

/** The value of a path parameter from its raw (still percent-encoded) text. */
export function pathValue(param: CompiledParam, raw: string): unknown {
  let text = raw;
  if (param.style === 'label' && text.startsWith('.')) text = text.slice(1);
  if (param.style === 'matrix') text = text.replace(/^;[^=]*=/, '');
  if (param.json) return parseJsonParam(decode(text));
  if (param.shape === 'array') return text.split(param.style === 'label' && param.explode ? '.' : ',').map(decode);
  if (param.shape === 'object') return delimitedObject(text, param.explode);
  return decode(text);
}

/** A header or cookie value (styles `simple` and `form` without explode): lists are comma separated. */
export function textValue(param: CompiledParam, text: string): unknown {
  if (param.json) return parseJsonParam(text);
  if (param.shape === 'array') return text.split(',').map((part) => part.trim());
  if (param.shape === 'object') return delimitedObject(text.replace(/\s+/g, ''), param.explode);
  return text;
}

/** Query values by name, all occurrences. */
export function queryValues(query: URLSearchParams): Map<string, string[]> {
  const values = new Map<string, string[]>();
  for (const [key, value] of query) {
    const list = values.get(key);
    if (list) list.push(value);
    else values.set(key, [value]);
  }
  return values;
}

const QUERY_SEPARATORS: Record<string, string> = { form: ',', spaceDelimited: ' ', pipeDelimited: '|' };

export function queryValue(param: CompiledParam, values: Map<string, string[]>, unclaimed: () => string[]): unknown {
  if (param.shape === 'object' && param.style === 'deepObject') {
    const prefix = `${param.name}[`;
    let result: Record<string, string> | undefined;
    for (const [key, list] of values) {
      if (key.startsWith(prefix) && key.endsWith(']')) (result ??= {})[key.slice(prefix.length, -1)] = list[list.length - 1]!;
    }
    return result;
  }
  if (param.shape === 'object' && param.explode && !param.json) {
    // Each property is a query parameter of its own: every name no other parameter declares.
    const names = unclaimed();
    if (names.length === 0) return undefined;
    return Object.fromEntries(names.map((name) => [name, values.get(name)!.at(-1)!]));
  }
  const list = values.get(param.name);
  if (!list) return undefined;
  if (param.json) return list.length === 1 ? parseJsonParam(list[0]!) : list.map(parseJsonParam);
  if (param.shape === 'array') return param.explode ? list : list.flatMap((v) => v.split(QUERY_SEPARATORS[param.style] ?? ','));
  if (param.shape === 'object') return delimitedObject(list[0]!, false);
  // More than one value for a single-valued parameter stays an array, which the schema refuses.
  return list.length === 1 ? list[0] : list;
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (!header) return cookies;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    const name = pair.slice(0, eq).trim();
    if (!cookies.has(name)) cookies.set(name, decode(pair.slice(eq + 1).trim()));
  }
  return cookies;
}

/** Path parameter values (still percent-encoded) by name, from the matched route's segments. */
export function extractPathParams(match: Matched): Map<string, string> {
  const params = new Map<string, string>();
  match.route.segments.forEach((segment, i) => {
    const raw = match.raw[i]!;
    if (segment.kind === 'param') params.set(segment.name, raw);
    else if (segment.kind === 'mixed') {
      const groups = segment.pattern.exec(raw);
      segment.names.forEach((name, g) => {
        const value = groups?.[g + 1];
        if (value !== undefined) params.set(name, value);
      });
    }
  });
  return params;
}
