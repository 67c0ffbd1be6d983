// The checks, as plain JSON (`details.check` of a finding) and as the judgements the scan and a
// recheck both apply to the responses, so that a recheck re-runs exactly what found the problem.
//
// A check holds only requests the scanner built (method, URL, the headers and body it set): the
// scan's authentication is added by ScanHttp when sent, so no credential is ever stored in it.
import type { HttpExchange } from '../web/http.ts';
import { isObject } from '../../schemas/json-value.ts';
import type { SchemaBundle } from './document.ts';
import { declaredResponse, isJsonMedia } from './operations.ts';
import type { ApiRuleId } from './rules.ts';
import type { Dialect, SchemaValidator } from './schema.ts';

export interface CheckRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** Sent without the scan's authentication. */
  anonymous?: boolean;
}

/** `S`: the schema itself, or (while scanning) a function that bundles it only if it is needed. */
export interface DeclaredMedia<S = SchemaBundle> {
  type: string;
  schema?: S;
}

export interface DeclaredResponse<S = SchemaBundle> {
  status: string;
  media: DeclaredMedia<S>[];
}

// A type alias, not an interface: it must be assignable to the Record<string, unknown> of `details.check`.
type CheckBase = {
  scanner: 'api';
  version: 1;
  /** `GET /users/{id}`. */
  operation: string;
  /** The request whose response is judged. */
  request: CheckRequest;
};

export type ApiCheck = CheckBase &
  (
    | { rule: 'api-server-error' }
    | { rule: 'api-undeclared-status'; declared: string[] }
    /** The operation's declared responses, so that whatever status comes back is judged by its own schema. */
    | { rule: 'api-schema-violation'; dialect: Dialect; responses: DeclaredResponse[] }
    /** `json`: a JSON body is declared for 2xx, so an HTML page (SPA fallback, login form) is no proof. */
    | { rule: 'api-auth-bypass'; json: boolean }
    /** The unmodified request: an error message it also carries is no proof. */
    | { rule: 'api-injection-sqli'; baseline: CheckRequest }
    /** `control`: the probe's quote doubled, which SQL reads as a literal quote. */
    | { rule: 'api-injection-error'; baseline: CheckRequest; control: CheckRequest }
    /** `own`: the request for the identity's own object; `request` asks for `id` instead. */
    | { rule: 'api-bola'; own: CheckRequest; id: string; idKeys: string[] }
  );

export type Judgement = { hit: true; reason: string } | { hit: false };

const MISS: Judgement = { hit: false };
const is2xx = (status: number): boolean => status >= 200 && status < 300;
const contentType = (ex: HttpExchange): string => (ex.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

/** Nesting beyond which a body is not examined: validating and comparing it recurse that deep. */
const MAX_JSON_DEPTH = 256;

/** Deepest bracket nesting of JSON text (outside strings), in one pass without recursion. */
function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i += 1; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) deepest = Math.max(deepest, ++depth);
    else if (c === 93 || c === 125) depth -= 1;
  }
  return deepest;
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false; tooDeep?: true } {
  if (jsonDepth(text) > MAX_JSON_DEPTH) return { ok: false, tooDeep: true };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

export function judgeServerError(ex: HttpExchange): Judgement {
  return ex.status >= 500 ? { hit: true, reason: `answered ${ex.status}` } : MISS;
}

export function judgeUndeclaredStatus(ex: HttpExchange, declared: readonly string[]): Judgement {
  if (declaredResponse(declared.map((status) => ({ status })), ex.status)) return MISS;
  return { hit: true, reason: `answered ${ex.status}, which is not declared (declared: ${declared.join(', ') || 'none'})` };
}

/** Whether the body fits the response the document declares for its status. */
export function judgeSchema(
  ex: HttpExchange,
  method: string,
  responses: readonly DeclaredResponse<SchemaBundle | (() => SchemaBundle)>[],
  dialect: Dialect,
  validator: SchemaValidator,
  cachePrefix?: string,
): Judgement {
  const declared = declaredResponse(responses, ex.status);
  if (!declared || declared.media.length === 0 || method === 'HEAD' || ex.truncated) return MISS;
  const type = contentType(ex);
  const declaredTypes = declared.media.map((m) => m.type).join(', ');
  if (ex.body.trim() === '') {
    if (ex.status === 204 || ex.status === 304) return MISS;
    return { hit: true, reason: `answered ${ex.status}; the body is empty, but ${declaredTypes} is declared` };
  }
  const wildcard = (m: DeclaredMedia<unknown>) => m.type === '*/*' || (m.type.endsWith('/*') && type.startsWith(m.type.slice(0, -1)));
  const jsonType = type === '' || isJsonMedia(type);
  const media = declared.media.find((m) => m.type === type) ?? declared.media.find(wildcard) ?? (jsonType ? declared.media.find((m) => isJsonMedia(m.type)) : undefined);
  if (!media) return { hit: true, reason: `answered ${ex.status}; content type ${type || '(none)'} is not declared for it (declared: ${declaredTypes})` };
  if (!media.schema || !(jsonType || isJsonMedia(media.type)) || media.type === '*/*') return MISS;
  const parsed = parseJson(ex.body);
  if (!parsed.ok && parsed.tooDeep) return MISS;
  if (!parsed.ok) return { hit: true, reason: `answered ${ex.status}; the body is not valid JSON, but ${media.type} is declared` };
  const result = validator.validate(media.schema, dialect, parsed.value, cachePrefix ? `${cachePrefix} ${declared.status} ${media.type}` : undefined);
  if (result.ok === false) return { hit: true, reason: `answered ${ex.status}; ${result.errors.join('; ')}` };
  return MISS;
}

export function judgeAuthBypass(anonymous: HttpExchange, json: boolean): Judgement {
  if (!is2xx(anonymous.status)) return MISS;
  if (json && !parseJson(anonymous.body).ok) return MISS;
  return { hit: true, reason: `answered ${anonymous.status} to a request without credentials` };
}

/** Error messages of database engines and drivers (first 64 KiB of the body). */
const SQL_ERRORS: readonly RegExp[] = [
  /You have an error in your SQL syntax|\bSQL syntax\b[^\n]{0,80}\bMySQL|Warning: mysqli?_|MySqlException|com\.mysql\.jdbc/i,
  /SQLITE_ERROR|sqlite3?\.OperationalError|SQLiteException|unrecognized token: "|near "[^"\n]{0,40}": syntax error/i,
  /PostgreSQL[^\n]{0,40}ERROR|pg_query\(\)|PSQLException|syntax error at or near|unterminated quoted (?:string|identifier) at or near/i,
  /\bORA-\d{5}\b|quoted string not properly terminated/i,
  /Unclosed quotation mark after the character string|Incorrect syntax near|Microsoft OLE DB Provider for SQL Server|\[ODBC SQL Server Driver\]|SqlException/i,
  /SQLSTATE\[|PDOException|org\.hibernate\.exception|SequelizeDatabaseError|QueryFailedError|\bsqlalchemy\.exc\./i,
];

export function sqlErrorIn(body: string): string | null {
  const head = body.slice(0, 64 * 1024);
  for (const re of SQL_ERRORS) {
    const m = re.exec(head);
    if (m) return m[0];
  }
  return null;
}

export function judgeSqli(probe: HttpExchange, baseline: HttpExchange): Judgement {
  const signature = sqlErrorIn(probe.body);
  if (!signature || sqlErrorIn(baseline.body)) return MISS;
  return { hit: true, reason: `the response carries a database error (${JSON.stringify(signature)}) that the valid request's does not` };
}

export function judgeInjectionError(probe: HttpExchange, baseline: HttpExchange, control: HttpExchange): Judgement {
  if (probe.status < 500 || baseline.status >= 500 || control.status >= 500) return MISS;
  return { hit: true, reason: `a quote made it answer ${probe.status}; the valid request got ${baseline.status} and the quote doubled ${control.status}` };
}

/** Stable text of a JSON value (object keys sorted), to compare two answers. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** Whether the object (or an object one level inside it, `{data: {...}}`) has `id` under one of the keys. */
export function carriesId(value: unknown, id: string, keys: readonly string[]): boolean {
  const wanted = new Set(keys.map((k) => k.toLowerCase()));
  const direct = (obj: unknown): boolean =>
    isObject(obj) && Object.entries(obj).some(([k, v]) => wanted.has(k.toLowerCase()) && (typeof v === 'string' || typeof v === 'number') && String(v) === id);
  return direct(value) || (isObject(value) && Object.values(value).some(direct));
}

export function judgeBola(own: HttpExchange, other: HttpExchange, id: string, idKeys: readonly string[]): Judgement {
  if (!is2xx(own.status) || !is2xx(other.status)) return MISS;
  const a = parseJson(own.body);
  const b = parseJson(other.body);
  if (!a.ok || !b.ok || canonical(a.value) === canonical(b.value) || !carriesId(b.value, id, idKeys)) return MISS;
  return { hit: true, reason: `asked for id ${id}, the same identity got ${other.status} with that object` };
}

// --- Excerpts -------------------------------------------------------------------------------------

const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}…` : text);

export function requestExcerpt(req: CheckRequest): string {
  const lines = [`${req.method} ${req.url}${req.anonymous ? '   (sent without the scan\'s credentials)' : ''}`];
  for (const [name, value] of Object.entries(req.headers ?? {})) lines.push(`${name}: ${clip(value, 200)}`);
  if (req.body !== undefined) lines.push('', clip(req.body, 1000));
  return lines.join('\n');
}

export function responseExcerpt(ex: HttpExchange): string {
  const type = ex.headers['content-type'];
  return `HTTP ${ex.status}${type ? `\ncontent-type: ${type}` : ''}\n\n${clip(ex.body, 1500)}`;
}

// --- Reading a stored check back --------------------------------------------------------------------

const isStringMap = (value: unknown): value is Record<string, string> => isObject(value) && Object.values(value).every((v) => typeof v === 'string');

function asRequest(value: unknown): CheckRequest | null {
  if (!isObject(value) || typeof value.method !== 'string' || typeof value.url !== 'string') return null;
  if (value.headers !== undefined && !isStringMap(value.headers)) return null;
  if (value.body !== undefined && typeof value.body !== 'string') return null;
  return {
    method: value.method,
    url: value.url,
    ...(value.headers !== undefined ? { headers: value.headers as Record<string, string> } : {}),
    ...(value.body !== undefined ? { body: value.body as string } : {}),
    ...(value.anonymous === true ? { anonymous: true } : {}),
  };
}

function asResponses(value: unknown): DeclaredResponse[] | null {
  if (!Array.isArray(value)) return null;
  const out: DeclaredResponse[] = [];
  for (const r of value) {
    if (!isObject(r) || typeof r.status !== 'string' || !Array.isArray(r.media)) return null;
    const media: DeclaredMedia[] = [];
    for (const m of r.media) {
      if (!isObject(m) || typeof m.type !== 'string') return null;
      if (m.schema !== undefined && !(isObject(m.schema) && isObject(m.schema.referenced))) return null;
      media.push({ type: m.type, ...(m.schema !== undefined ? { schema: m.schema as unknown as SchemaBundle } : {}) });
    }
    out.push({ status: r.status, media });
  }
  return out;
}

/** The check stored in a finding, checked field by field; an Error says what is wrong. */
export function readCheck(raw: Record<string, unknown>): ApiCheck {
  const fail = (what: string): never => {
    throw new Error(`not an API scan check: ${what}`);
  };
  if (raw.scanner !== 'api' || raw.version !== 1) fail('unknown scanner or version');
  const request = asRequest(raw.request) ?? fail('request');
  const base = { scanner: 'api' as const, version: 1 as const, operation: typeof raw.operation === 'string' ? raw.operation : '', request };
  const rule = raw.rule as ApiRuleId;
  switch (rule) {
    case 'api-server-error':
      return { ...base, rule };
    case 'api-undeclared-status':
      if (!Array.isArray(raw.declared) || !raw.declared.every((s) => typeof s === 'string')) fail('declared');
      return { ...base, rule, declared: raw.declared as string[] };
    case 'api-schema-violation':
      if (raw.dialect !== '3.0' && raw.dialect !== '3.1') fail('dialect');
      return { ...base, rule, dialect: raw.dialect as Dialect, responses: asResponses(raw.responses) ?? fail('responses') };
    case 'api-auth-bypass':
      return { ...base, rule, json: raw.json === true };
    case 'api-injection-sqli':
      return { ...base, rule, baseline: asRequest(raw.baseline) ?? fail('baseline') };
    case 'api-injection-error':
      return { ...base, rule, baseline: asRequest(raw.baseline) ?? fail('baseline'), control: asRequest(raw.control) ?? fail('control') };
    case 'api-bola':
      if (typeof raw.id !== 'string' || !Array.isArray(raw.idKeys) || !raw.idKeys.every((k) => typeof k === 'string')) fail('id');
      return { ...base, rule, own: asRequest(raw.own) ?? fail('own'), id: raw.id as string, idKeys: raw.idKeys as string[] };
    default:
      return fail(`rule ${JSON.stringify(raw.rule)}`);
  }
}
