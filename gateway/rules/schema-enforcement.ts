// OpenAPI schema enforcement: a request must be one the site's uploaded document declares.
// Everything is compiled once per document version (cached by hash): a trie of path templates and
// ajv validators for every operation's parameters and JSON request bodies, at two strictness
// variants. check() only walks the trie, decodes parameters and calls precompiled validators.
//
// Strictness (each level includes the one before):
//
//   lenient   The path and the method must be declared. Nothing else is looked at, and the
//             gateway does not read bodies for it.
//   standard  What the document declares is honoured: path, query, header and cookie parameters
//             are present when required and valid against their schemas (text coerced to the
//             declared types); a body required by the operation is present; a body's content type
//             is one the operation declares; a JSON body parses and is valid against its schema.
//             Things the document does not mention (other query parameters, extra body
//             properties) pass, and so do bodies the gateway did not inspect (over the cap) and
//             non-JSON bodies (not validated). Few false positives: the level to start with.
//   strict    Nothing undeclared gets through (a positive security model): unknown query
//             parameters are refused; object schemas that declare properties but say nothing about
//             others are closed (as if `additionalProperties: false`; done with
//             `unevaluatedProperties` so `allOf` compositions still work; free-form objects stay
//             open); a body must carry a content type; a body sent to an operation that declares
//             none is refused; and a body the gateway could not inspect is refused, since it cannot
//             be shown to conform.
//
// Request paths are read as lenient origins read them before routing: empty segments (`//`) are
// dropped, a literal segment is compared without its `;` parameters (`/pets;x=1`) and, for sites
// with `path_case: insensitive`, without case (`/PETS` is `/pets`), so the operation validated is
// the one the origin will run. A segment that does not decode, or a dot segment, matches nothing.
//
// Paths match with or without a server's base path (`servers: [{url: /v3}]`: `/v3/pet` and `/pet`):
// a document's server URL often names another deployment than the one behind the gateway, and the
// origin answers 404 to a prefix it does not serve. The prefixed form is tried first.
//
// Request semantics of OpenAPI are applied: `readOnly` properties are not required in requests,
// HEAD falls back to GET, and a CORS preflight (OPTIONS with Access-Control-Request-Method) passes
// when the method it asks about is declared for the path, since browsers send it unprompted.
//
// User patterns (`pattern`, `patternProperties`) run on RE2 so that a hostile schema or input
// cannot stall the event loop; a pattern RE2 cannot compile (lookaround, backreference) is not
// enforced and is reported in `warnings`.
import type { AnySchemaObject, CodeOptions, ErrorObject, Options, ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import RE2 from 're2';
import { externalReferences, listOperations, numericExclusiveBounds, openApiVersionOf, parseDocumentText } from '../../schemas/openapi/document.ts';
import type { InspectedRequest } from '../inspected-request.ts';

export type Strictness = 'lenient' | 'standard' | 'strict';

export interface SchemaViolation {
  reason: string;
  /** operationId, else `METHOD /template`; null when no operation matched. */
  operation: string | null;
}

export interface SchemaEnforcer {
  /** `foldCase`: literal path segments compare in lower case (the site's `path_case: insensitive`). */
  check(request: InspectedRequest, strictness: Strictness, foldCase?: boolean): SchemaViolation | null;
  /** Whether the operation matching the request declares a body (so the gateway buffers only then). */
  needsBody(method: string, path: string, foldCase?: boolean): boolean;
  /** Parts of the document that could not be compiled and are therefore not enforced. */
  readonly warnings?: readonly string[];
}

// ajv-formats is CommonJS with a default export; under NodeNext the callable is `.default`.
const addFormats = formats.default;

type JsonObject = Record<string, unknown>;
type Variant = 'standard' | 'strict';
type ParamLocation = 'path' | 'query' | 'header' | 'cookie';
type AjvInstance = Ajv2019 | Ajv2020;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));
const pointerToken = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');
/** Request-derived text in reasons is capped: reasons end up in logs and events. */
const clip = (text: string, max = 100): string => (text.length > max ? `${text.slice(0, max)}…` : text);

/** Base URIs under which the two prepared copies of the document are registered with ajv. */
const DOC_URI: Record<Variant, string> = {
  standard: 'https://openapi.aegis.invalid/standard',
  strict: 'https://openapi.aegis.invalid/strict',
};
const LOCATIONS: readonly ParamLocation[] = ['path', 'query', 'header', 'cookie'];
/** Header parameters the specification says to ignore (described elsewhere in the document). */
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);
const MAX_REF_HOPS = 32;
/** Base paths one server URL may expand to through its variables' enums. */
const MAX_SERVER_VARIANTS = 16;
/** Compilation yields to the event loop this often, so a large document does not stall requests. */
const COMPILE_SLICE_MS = 10;

// --- Document preparation ----------------------------------------------------------------------

/** The value at a JSON Pointer (unencoded, `~` escapes) in the document. */
function resolvePointer(document: JsonObject, pointer: string): unknown {
  let node: unknown = document;
  for (const raw of pointer === '' ? [] : pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, token)) return undefined;
    node = (node as Record<string, unknown>)[token];
  }
  return node;
}

/** Follows internal `$ref`s from `value` (found at `pointer`) to the object they name. */
function deref(document: JsonObject, value: unknown, pointer: string): { value: JsonObject; pointer: string } | null {
  let current = value;
  let at = pointer;
  for (let hops = 0; hops < MAX_REF_HOPS; hops += 1) {
    if (!isObject(current)) return null;
    const ref = current.$ref;
    if (typeof ref !== 'string') return { value: current, pointer: at };
    if (!ref.startsWith('#')) return null;
    try {
      at = decodeURIComponent(ref.slice(1));
    } catch {
      return null;
    }
    current = resolvePointer(document, at);
  }
  return null;
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
function prepareDocument(document: JsonObject, openapi30: boolean, variant: Variant): (schema: unknown) => boolean {
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

// --- ajv ------------------------------------------------------------------------------------------

type RegExpEngine = NonNullable<CodeOptions['regExp']>;

/** RE2 for every pattern in the document; a pattern RE2 refuses is reported and not enforced. */
function re2Engine(warn: (message: string) => void): RegExpEngine {
  const engine = (pattern: string, flags: string) => {
    try {
      return new RE2(pattern, flags);
    } catch (error) {
      warn(`pattern ${JSON.stringify(clip(pattern))} is not enforced: RE2 cannot compile it (${errorMessage(error)})`);
      return { test: (): boolean => true, toString: (): string => `unenforced:${pattern}` };
    }
  };
  return Object.assign(engine, { code: 'aegisRe2' });
}

function makeAjv(openapi30: boolean, coerce: boolean, regExp: RegExpEngine): AjvInstance {
  const options: Options = {
    strict: false, // OpenAPI schemas carry `example`, `xml`, `discriminator`, `x-…`
    validateSchema: false, // the document was validated on upload; `$schema` values need no meta-schema
    validateFormats: true,
    allErrors: false, // the first error decides; cheaper
    coerceTypes: coerce ? 'array' : false,
    useDefaults: false, // never change what is forwarded
    logger: false, // unknown formats are normal in OpenAPI documents; not worth a log line per site
    code: { regExp },
  };
  // 3.0 schemas (draft-04/07 style once prepared) run on the 2019-09 class: draft-07's keywords
  // plus `unevaluatedProperties`, which the draft-07 class lacks.
  const ajv = openapi30 ? new Ajv2019(options) : new Ajv2020(options);
  addFormats(ajv);
  return ajv;
}

/** The first ajv error as `where what`: `/name must be string`, `/photoUrls is required`. */
function describeError(errors: ErrorObject[] | null | undefined): { path: string; message: string } {
  const error = errors?.[0];
  if (!error) return { path: '', message: 'is invalid' };
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    return { path: `${error.instancePath}/${params.missingProperty}`, message: 'is required' };
  }
  const extra = params.unevaluatedProperty ?? params.additionalProperty;
  if (typeof extra === 'string') return { path: `${error.instancePath}/${extra}`, message: 'is not declared' };
  return { path: error.instancePath, message: error.message ?? 'is invalid' };
}

// --- Parameters -----------------------------------------------------------------------------------

type ParamShape = 'primitive' | 'array' | 'object';

interface CompiledParam {
  name: string;
  /** Key in the location object: header names in lower case. */
  key: string;
  shape: ParamShape;
  style: string;
  explode: boolean;
  /** Declared with `content: application/json` rather than a schema: the value is JSON text. */
  json: boolean;
}

interface LocationParams {
  params: CompiledParam[];
  validate: Record<Variant, ValidateFunction | null>;
}

/** What a parameter value looks like, from its schema's `type` (following `$ref`s). */
function shapeOf(document: JsonObject, schema: unknown): ParamShape {
  const resolved = deref(document, schema, '')?.value;
  if (!resolved) return 'primitive';
  const types = Array.isArray(resolved.type) ? resolved.type : [resolved.type];
  if (types.includes('array') || (resolved.type === undefined && resolved.items !== undefined)) return 'array';
  if (types.includes('object') || (resolved.type === undefined && isObject(resolved.properties))) return 'object';
  return 'primitive';
}

function decode(text: string): string {
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
const INVALID_JSON = Symbol('invalid JSON');

function parseJsonParam(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return INVALID_JSON;
  }
}

/** The value of a path parameter from its raw (still percent-encoded) text. */
function pathValue(param: CompiledParam, raw: string): unknown {
  let text = raw;
  if (param.style === 'label' && text.startsWith('.')) text = text.slice(1);
  if (param.style === 'matrix') text = text.replace(/^;[^=]*=/, '');
  if (param.json) return parseJsonParam(decode(text));
  if (param.shape === 'array') return text.split(param.style === 'label' && param.explode ? '.' : ',').map(decode);
  if (param.shape === 'object') return delimitedObject(text, param.explode);
  return decode(text);
}

/** A header or cookie value (styles `simple` and `form` without explode): lists are comma separated. */
function textValue(param: CompiledParam, text: string): unknown {
  if (param.json) return parseJsonParam(text);
  if (param.shape === 'array') return text.split(',').map((part) => part.trim());
  if (param.shape === 'object') return delimitedObject(text.replace(/\s+/g, ''), param.explode);
  return text;
}

/** Query values by name, all occurrences. */
function queryValues(query: URLSearchParams): Map<string, string[]> {
  const values = new Map<string, string[]>();
  for (const [key, value] of query) {
    const list = values.get(key);
    if (list) list.push(value);
    else values.set(key, [value]);
  }
  return values;
}

const QUERY_SEPARATORS: Record<string, string> = { form: ',', spaceDelimited: ' ', pipeDelimited: '|' };

function queryValue(param: CompiledParam, values: Map<string, string[]>, unclaimed: () => string[]): unknown {
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

function parseCookies(header: string | undefined): Map<string, string> {
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

// --- Paths ----------------------------------------------------------------------------------------

type TemplateSegment = { kind: 'literal'; value: string } | { kind: 'param'; name: string } | { kind: 'mixed'; pattern: RE2; names: string[] };

interface MediaBody {
  /** A media range as declared, in lower case without parameters: `application/json`, `application/*`. */
  range: string;
  validate: Record<Variant, ValidateFunction | null>;
}

interface CompiledBody {
  required: boolean;
  media: MediaBody[];
}

interface CompiledOperation {
  label: string;
  params: Record<ParamLocation, LocationParams | null>;
  /** A query parameter whose properties are spread over the query: every name is then declared. */
  spreadsQuery: boolean;
  deepObjectPrefixes: string[];
  queryNames: Set<string>;
  body: CompiledBody | null;
}

interface Route {
  segments: TemplateSegment[];
  operations: Map<string, CompiledOperation>;
}

interface TrieNode {
  literal: Map<string, TrieNode>;
  /** The same children by lower-case literal (the first declared wins when two differ only in case). */
  folded: Map<string, TrieNode>;
  /** Segments mixing text and parameters (`{name}.json`), by shape. */
  mixed: Map<string, { pattern: RE2; node: TrieNode }>;
  param: TrieNode | null;
  routes: Route[];
}

const newNode = (): TrieNode => ({ literal: new Map(), folded: new Map(), mixed: new Map(), param: null, routes: [] });
/** A decoded segment as literal children are looked up: without `;` parameters. */
const literalKey = (segment: string): string => {
  const semi = segment.indexOf(';');
  return semi < 0 ? segment : segment.slice(0, semi);
};
const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function templateSegments(path: string): TemplateSegment[] {
  return splitPath(path).map((segment): TemplateSegment => {
    const whole = /^\{([^{}]+)\}$/.exec(segment);
    if (whole) return { kind: 'param', name: whole[1]! };
    if (!segment.includes('{')) return { kind: 'literal', value: decode(segment) };
    const names: string[] = [];
    const source = segment
      .split(/(\{[^{}]+\})/)
      .map((part) => {
        if (!part.startsWith('{')) return escapeRegex(part);
        names.push(part.slice(1, -1));
        return '(.+?)';
      })
      .join('');
    return { kind: 'mixed', pattern: new RE2(`^${source}$`, 'u'), names };
  });
}

/** `/a/b/` → ['a', 'b']; the root is no segment, and one trailing slash is not significant. */
function splitPath(path: string): string[] {
  const trimmed = path.replace(/^\/+/, '').replace(/\/$/, '');
  return trimmed === '' ? [] : trimmed.split('/');
}

/** The path prefixes of the servers (`https://api.example.com/v1` → `/v1`), variables expanded, and no prefix. */
function serverBasePaths(servers: unknown, warn: (message: string) => void): string[] {
  const bases = new Set<string>();
  if (!Array.isArray(servers)) return [''];
  for (const server of servers) {
    if (!isObject(server) || typeof server.url !== 'string') continue;
    let urls = [server.url];
    const variables = isObject(server.variables) ? server.variables : {};
    for (const [name, variable] of Object.entries(variables)) {
      if (!isObject(variable)) continue;
      const values = new Set<string>([variable.default, ...(Array.isArray(variable.enum) ? variable.enum : [])].filter((v): v is string => typeof v === 'string'));
      urls = urls.flatMap((url) => [...values].map((value) => url.split(`{${name}}`).join(value))).slice(0, MAX_SERVER_VARIANTS);
    }
    for (const url of urls) {
      try {
        bases.add(new URL(url, 'http://server.invalid/').pathname.replace(/\/+$/, ''));
      } catch {
        warn(`server URL ${JSON.stringify(clip(url))} is not a URL; its base path is ignored`);
      }
    }
  }
  // The bare path too (see the header); added last so that prefixed routes come first.
  bases.add('');
  return [...bases];
}

// --- The enforcer ---------------------------------------------------------------------------------

interface Matched {
  route: Route;
  operation: CompiledOperation;
  raw: string[];
}

type MatchResult = { kind: 'operation'; match: Matched } | { kind: 'no_path' } | { kind: 'no_method' };

class CompiledEnforcer implements SchemaEnforcer {
  readonly root = newNode();
  readonly warnings: string[] = [];
  /** Deepest template; longer request paths cannot match. */
  maxDepth = 0;

  needsBody(method: string, path: string, foldCase = false): boolean {
    const result = this.match(method, path, foldCase);
    return result.kind === 'operation' && result.match.operation.body !== null;
  }

  check(request: InspectedRequest, strictness: Strictness, foldCase = false): SchemaViolation | null {
    const result = this.match(request.method, request.path, foldCase);
    if (result.kind !== 'operation') {
      const preflight = this.preflight(request, result, foldCase);
      if (preflight !== undefined) return preflight;
      return {
        reason: result.kind === 'no_path' ? 'the path is not declared in the schema' : `method ${clip(request.method, 20)} is not declared for this path`,
        operation: null,
      };
    }
    if (strictness === 'lenient') return null;
    const { operation } = result.match;
    const variant: Variant = strictness === 'strict' ? 'strict' : 'standard';
    const reason = this.checkParams(request, result.match, variant) ?? this.checkBody(request, operation, variant);
    return reason === null ? null : { reason, operation: operation.label };
  }

  /** A CORS preflight for a declared method passes; undefined when the request is not one. */
  private preflight(request: InspectedRequest, result: MatchResult, foldCase: boolean): SchemaViolation | null | undefined {
    const asked = request.headers['access-control-request-method'];
    if (request.method !== 'OPTIONS' || result.kind !== 'no_method' || typeof asked !== 'string') return undefined;
    if (this.match(asked.trim().toUpperCase(), request.path, foldCase).kind === 'operation') return null;
    return { reason: `preflight for method ${clip(asked, 20)}, which is not declared for this path`, operation: null };
  }

  match(method: string, path: string, foldCase = false): MatchResult {
    const raw = splitPath(path).filter((segment) => segment !== '');
    if (raw.length > this.maxDepth) return { kind: 'no_path' };
    const decoded: string[] = [];
    for (const segment of raw) {
      let value: string;
      try {
        value = decodeURIComponent(segment);
      } catch {
        return { kind: 'no_path' };
      }
      // Dot segments would be resolved by the origin into some other path than the one matched.
      if (value === '.' || value === '..') return { kind: 'no_path' };
      decoded.push(value);
    }
    const state = { pathFound: false };
    const found = this.walk(this.root, raw, decoded, 0, method, state, foldCase);
    if (found) return { kind: 'operation', match: { ...found, raw } };
    return { kind: state.pathFound ? 'no_method' : 'no_path' };
  }

  /** Depth first, literal segments before mixed ones before whole-segment parameters. */
  private walk(node: TrieNode, raw: string[], decoded: string[], i: number, method: string, state: { pathFound: boolean }, foldCase: boolean): { route: Route; operation: CompiledOperation } | null {
    if (i === decoded.length) {
      for (const route of node.routes) {
        state.pathFound = true;
        const operation = route.operations.get(method) ?? (method === 'HEAD' ? route.operations.get('GET') : undefined);
        if (operation) return { route, operation };
      }
      return null;
    }
    const segment = decoded[i]!;
    const key = literalKey(segment);
    const literal = node.literal.get(key) ?? (foldCase ? node.folded.get(key.toLowerCase()) : undefined);
    if (literal) {
      const found = this.walk(literal, raw, decoded, i + 1, method, state, foldCase);
      if (found) return found;
    }
    for (const edge of node.mixed.values()) {
      if (!edge.pattern.test(raw[i]!)) continue;
      const found = this.walk(edge.node, raw, decoded, i + 1, method, state, foldCase);
      if (found) return found;
    }
    if (node.param && segment !== '') return this.walk(node.param, raw, decoded, i + 1, method, state, foldCase);
    return null;
  }

  addRoute(segments: TemplateSegment[]): Route {
    let node = this.root;
    for (const segment of segments) {
      if (segment.kind === 'literal') {
        let next = node.literal.get(segment.value);
        if (!next) {
          node.literal.set(segment.value, (next = newNode()));
          const lower = segment.value.toLowerCase();
          if (!node.folded.has(lower)) node.folded.set(lower, next);
        }
        node = next;
      } else if (segment.kind === 'param') {
        node = node.param ??= newNode();
      } else {
        const key = segment.pattern.source;
        let edge = node.mixed.get(key);
        if (!edge) node.mixed.set(key, (edge = { pattern: segment.pattern, node: newNode() }));
        node = edge.node;
      }
    }
    this.maxDepth = Math.max(this.maxDepth, segments.length);
    const route: Route = { segments, operations: new Map() };
    node.routes.push(route);
    return route;
  }

  private checkParams(request: InspectedRequest, match: Matched, variant: Variant): string | null {
    const { operation } = match;
    const values = queryValues(request.query);
    if (variant === 'strict' && !operation.spreadsQuery) {
      for (const name of values.keys()) {
        if (operation.queryNames.has(name) || operation.deepObjectPrefixes.some((prefix) => name.startsWith(prefix))) continue;
        return `query parameter "${clip(name, 60)}" is not declared`;
      }
    }
    let pathParams: Map<string, string> | undefined;
    let cookies: Map<string, string> | undefined;
    for (const location of LOCATIONS) {
      const compiled = operation.params[location];
      const validate = compiled?.validate[variant];
      if (!compiled || !validate) continue;
      const data: Record<string, unknown> = {};
      for (const param of compiled.params) {
        let value: unknown;
        if (location === 'path') {
          pathParams ??= extractPathParams(match);
          const raw = pathParams.get(param.name);
          value = raw === undefined ? undefined : pathValue(param, raw);
        } else if (location === 'query') {
          value = queryValue(param, values, () => [...values.keys()].filter((name) => !operation.queryNames.has(name)));
        } else if (location === 'header') {
          const header = request.headers[param.key];
          const text = Array.isArray(header) ? header.join(', ') : header;
          value = text === undefined ? undefined : textValue(param, text);
        } else {
          cookies ??= parseCookies(request.headers.cookie);
          const text = cookies.get(param.name);
          value = text === undefined ? undefined : textValue(param, text);
        }
        if (value === INVALID_JSON || (Array.isArray(value) && value.includes(INVALID_JSON))) return `${location} parameter "${param.name}" is not valid JSON`;
        if (value !== undefined) data[param.key] = value;
      }
      if (validate(data)) continue;
      const { path, message } = describeError(validate.errors);
      const [, key = '', ...rest] = path.split('/');
      const name = compiled.params.find((p) => p.key === key)?.name ?? key;
      return `${location} parameter "${name}"${rest.length > 0 ? ` at /${rest.join('/')}` : ''} ${message}`;
    }
    return null;
  }

  private checkBody(request: InspectedRequest, operation: CompiledOperation, variant: Variant): string | null {
    const strict = variant === 'strict';
    const { body } = operation;
    if (request.bodyState === 'none') return body?.required ? 'the request body is required' : null;
    if (!body) return strict ? 'the operation declares no request body' : null;
    if (request.contentType === '') return strict ? 'the request body has no content type' : null;
    const media = matchMedia(body.media, request.contentType);
    if (!media) return `content type ${clip(request.contentType, 80)} is not declared for this operation`;
    switch (request.bodyState) {
      case 'too_large':
      case 'not_inspected':
        return strict ? 'the request body is too large to validate' : null;
      case 'unparsable':
        return media.validate[variant] ? 'the request body is not valid JSON' : null;
      case 'json': {
        const validate = media.validate[variant];
        if (!validate || validate(request.json)) return null;
        const { path, message } = describeError(validate.errors);
        return `request body${path ? ` at ${path}` : ''} ${message}`;
      }
      default:
        // Form and other bodies are accepted for a declared content type without validation.
        return null;
    }
  }
}

function extractPathParams(match: Matched): Map<string, string> {
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

/** The declared media range for a content type: the exact type, else `type/*`, else the any-type range. */
function matchMedia(media: MediaBody[], contentType: string): MediaBody | undefined {
  const wildcard = `${contentType.slice(0, contentType.indexOf('/') + 1)}*`;
  return media.find((m) => m.range === contentType) ?? media.find((m) => m.range === wildcard) ?? media.find((m) => m.range === '*/*');
}

const isJsonRange = (range: string): boolean => range === 'application/json' || range.endsWith('+json') || range === 'application/*' || range === '*/*';

// --- Compilation ----------------------------------------------------------------------------------

class Compiler {
  readonly enforcer = new CompiledEnforcer();
  private readonly ajv: { body: AjvInstance; params: AjvInstance };
  private sliceStart = performance.now();
  private readonly strictCopy: JsonObject;
  private readonly declaresProperties: (schema: unknown) => boolean;

  constructor(
    private readonly document: JsonObject,
    openapi30: boolean,
  ) {
    const regExp = re2Engine((message) => this.warn(message));
    const strictCopy = structuredClone(document);
    prepareDocument(document, openapi30, 'standard');
    this.strictCopy = strictCopy;
    this.declaresProperties = prepareDocument(strictCopy, openapi30, 'strict');
    // Bodies are JSON and keep their types; parameters arrive as text and are coerced.
    this.ajv = { body: makeAjv(openapi30, false, regExp), params: makeAjv(openapi30, true, regExp) };
    for (const ajv of Object.values(this.ajv)) {
      ajv.addSchema(document, DOC_URI.standard);
      ajv.addSchema(strictCopy, DOC_URI.strict);
    }
  }

  private warn(message: string): void {
    if (!this.enforcer.warnings.includes(message)) this.enforcer.warnings.push(message);
  }

  /** Lets pending requests run when compiling has held the thread for a while. */
  private async breathe(): Promise<void> {
    if (performance.now() - this.sliceStart < COMPILE_SLICE_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.sliceStart = performance.now();
  }

  /** Both variants of a validator whose root refers into the document; null where it fails. */
  private compile(kind: 'body' | 'params', build: (variant: Variant) => AnySchemaObject, what: string): Record<Variant, ValidateFunction | null> {
    const result: Record<Variant, ValidateFunction | null> = { standard: null, strict: null };
    for (const variant of ['standard', 'strict'] as const) {
      try {
        result[variant] = this.ajv[kind].compile(build(variant));
      } catch (error) {
        this.warn(`${what} is not validated: ${errorMessage(error)}`);
      }
    }
    return result;
  }

  /** A reference to the schema at `pointer`, closed at the root in the strict variant. */
  private rootSchema(pointer: string, variant: Variant): AnySchemaObject {
    const ref = { $ref: `${DOC_URI[variant]}#${pointer.split('/').map(encodeURIComponent).join('/')}` };
    if (variant !== 'strict' || !this.declaresProperties(resolvePointer(this.strictCopy, pointer))) return ref;
    return { allOf: [ref], unevaluatedProperties: false };
  }

  async build(): Promise<CompiledEnforcer> {
    const paths = isObject(this.document.paths) ? this.document.paths : {};
    const rootBases = serverBasePaths(this.document.servers, (m) => this.warn(m));
    const routes = new Map<string, Route[]>();
    for (const { method, path, operation_id } of listOperations(this.document)) {
      await this.breathe();
      const item = paths[path];
      if (!isObject(item)) continue;
      const itemPointer = `/paths/${pointerToken(path)}`;
      const target = deref(this.document, item, itemPointer);
      const lower = method.toLowerCase();
      const source = isObject(item[lower]) ? { value: item, pointer: itemPointer } : target;
      if (!source || !isObject(source.value[lower])) continue;
      let pathRoutes = routes.get(path);
      if (!pathRoutes) {
        const bases = target?.value.servers !== undefined ? serverBasePaths(target.value.servers, (m) => this.warn(m)) : rootBases;
        try {
          pathRoutes = bases.map((base) => this.enforcer.addRoute(templateSegments(`${base}${path.startsWith('/') ? '' : '/'}${path}`)));
        } catch (error) {
          this.warn(`path ${JSON.stringify(clip(path))} is not enforced: ${errorMessage(error)}`);
          pathRoutes = [];
        }
        routes.set(path, pathRoutes);
      }
      const compiled = this.operation(method, path, operation_id, source.value[lower] as JsonObject, `${source.pointer}/${lower}`, target);
      for (const route of pathRoutes) if (!route.operations.has(method)) route.operations.set(method, compiled);
    }
    return this.enforcer;
  }

  private operation(method: string, path: string, operationId: string | null, operation: JsonObject, pointer: string, item: { value: JsonObject; pointer: string } | null): CompiledOperation {
    const label = operationId ?? `${method} ${path}`;
    // Operation parameters override path-level ones with the same name and location.
    const declared = new Map<string, { value: JsonObject; pointer: string }>();
    const collect = (list: unknown, at: string) => {
      if (!Array.isArray(list)) return;
      list.forEach((entry, i) => {
        const param = deref(this.document, entry, `${at}/${i}`);
        if (param && typeof param.value.name === 'string' && typeof param.value.in === 'string') declared.set(`${param.value.in}:${param.value.name}`, param);
      });
    };
    if (item) collect(item.value.parameters, `${item.pointer}/parameters`);
    collect(operation.parameters, `${pointer}/parameters`);

    const params: Record<ParamLocation, LocationParams | null> = { path: null, query: null, header: null, cookie: null };
    const queryNames = new Set<string>();
    const deepObjectPrefixes: string[] = [];
    let spreadsQuery = false;
    for (const location of LOCATIONS) {
      const entries: { param: CompiledParam; schemaPointer: string | null; required: boolean }[] = [];
      for (const { value, pointer: at } of declared.values()) {
        if (value.in !== location) continue;
        const name = value.name as string;
        if (location === 'header' && IGNORED_HEADERS.has(name.toLowerCase())) continue;
        let schemaPointer: string | null = isObject(value.schema) || typeof value.schema === 'boolean' ? `${at}/schema` : null;
        let json = false;
        if (!schemaPointer && isObject(value.content)) {
          const [mediaType, media] = Object.entries(value.content)[0] ?? [];
          if (mediaType !== undefined && isJsonRange(mediaType.split(';')[0]!.trim().toLowerCase()) && isObject(media) && media.schema !== undefined) {
            schemaPointer = `${at}/content/${pointerToken(mediaType)}/schema`;
            json = true;
          }
        }
        const style = typeof value.style === 'string' ? value.style : location === 'query' || location === 'cookie' ? 'form' : 'simple';
        const param: CompiledParam = {
          name,
          key: location === 'header' ? name.toLowerCase() : name,
          shape: json ? 'primitive' : shapeOf(this.document, value.schema),
          style,
          explode: typeof value.explode === 'boolean' ? value.explode : style === 'form',
          json,
        };
        if (location === 'query') {
          queryNames.add(name);
          if (param.shape === 'object' && style === 'deepObject') deepObjectPrefixes.push(`${name}[`);
          else if (param.shape === 'object' && param.explode && !json) spreadsQuery = true;
        }
        entries.push({ param, schemaPointer, required: value.required === true || location === 'path' });
      }
      if (entries.length === 0) continue;
      const build = (variant: Variant): AnySchemaObject => ({
        type: 'object',
        properties: Object.fromEntries(entries.map((e) => [e.param.key, e.schemaPointer ? this.rootSchema(e.schemaPointer, variant) : {}])),
        required: entries.filter((e) => e.required).map((e) => e.param.key),
      });
      params[location] = { params: entries.map((e) => e.param), validate: this.compile('params', build, `${location} parameters of ${label}`) };
    }

    let body: CompiledBody | null = null;
    const requestBody = operation.requestBody === undefined ? null : deref(this.document, operation.requestBody, `${pointer}/requestBody`);
    if (requestBody) {
      const media: MediaBody[] = [];
      const content = isObject(requestBody.value.content) ? requestBody.value.content : {};
      for (const [key, value] of Object.entries(content)) {
        const range = key.split(';')[0]!.trim().toLowerCase();
        const schemaPointer = `${requestBody.pointer}/content/${pointerToken(key)}/schema`;
        const validate =
          isJsonRange(range) && isObject(value) && value.schema !== undefined
            ? this.compile('body', (variant) => this.rootSchema(schemaPointer, variant), `${range} body of ${label}`)
            : { standard: null, strict: null };
        media.push({ range, validate });
      }
      body = { required: requestBody.value.required === true, media };
    }
    return { label, params, spreadsQuery, deepObjectPrefixes, queryNames, body };
  }
}

/** Compiles an enforcer for an OpenAPI 3.0/3.1 document (YAML or JSON text). */
export async function compileSchemaEnforcer(text: string): Promise<SchemaEnforcer> {
  const looksJson = text.replace(/^\uFEFF/, '').trimStart().startsWith('{');
  let parsed = parseDocumentText(text, looksJson ? 'json' : 'yaml');
  if (!parsed.ok && looksJson) parsed = parseDocumentText(text, 'yaml');
  if (!parsed.ok) throw new Error(parsed.reasons[0] ?? 'the document cannot be parsed');
  const version = openApiVersionOf(parsed.value);
  if (!version.ok) throw new Error(version.reasons[0] ?? 'unsupported OpenAPI version');
  const external = externalReferences(parsed.value);
  if (external.length > 0) throw new Error(external[0]);
  return new Compiler(parsed.value, version.value.startsWith('3.0.')).build();
}

/** One compiled enforcer per document version; concurrent requests for a hash share one compilation. */
const enforcers = new LRUCache<string, Promise<SchemaEnforcer>>({ max: 64 });

export async function getSchemaEnforcer(hash: string, text: string): Promise<SchemaEnforcer> {
  let pending = enforcers.get(hash);
  if (!pending) {
    const compiling = compileSchemaEnforcer(text);
    enforcers.set(hash, compiling);
    // A failure is not cached: the next load of the site tries again.
    compiling.catch(() => {
      if (enforcers.peek(hash) === compiling) enforcers.delete(hash);
    });
    pending = compiling;
  }
  return pending;
}
