// CVE templates are data (templates/*.yaml) in a subset of nuclei's HTTP template format. This
// module parses one strictly — the shape with an ajv schema, then what a schema cannot say: every
// regex compiles on RE2 (linear time: a template cannot stall a scan with a pathological pattern),
// every `{{variable}}` is defined before it is used, a `_N` part names a request that exists — and
// compiles it once, so running a template does no parsing.
//
// Differences from nuclei, on purpose: no raw requests, DSL or OOB interactions; only read-only
// methods (GET, HEAD, POST, OPTIONS) so a template cannot be written to change the target; request
// header names are lower-cased (ScanHttp's own headers are lower-case, so a template's `User-Agent`
// replaces the default instead of being sent twice); `attack` is ours (where a virtual patch would
// go, see WebFindingDetails).
import { Ajv, type ErrorObject } from 'ajv';
import RE2 from 're2';
import { parse } from 'yaml';
import type { Severity } from '../types.ts';
import type { AttackClass } from '../web/types.ts';
import { errorMessage } from '../../schemas/json-value.ts';

export type MatcherType = 'status' | 'word' | 'regex' | 'size';
export type PartName = 'body' | 'header' | 'all' | 'status';
export type Condition = 'and' | 'or';
export type TemplateMethod = 'GET' | 'HEAD' | 'POST' | 'OPTIONS';

/** One matcher as written in YAML (nuclei's field names). */
export interface MatcherDefinition {
  type: MatcherType;
  name?: string;
  /** `body` (default), `header`, `all` (headers, blank line, body) or `status`; `<part>_N` with `req-condition`. */
  part?: string;
  words?: string[];
  regex?: string[];
  status?: number[];
  size?: number[];
  condition?: Condition;
  negative?: boolean;
  'case-insensitive'?: boolean;
}

export interface ExtractorDefinition {
  type: 'regex' | 'kval';
  /** The value is available to later requests as `{{name}}`. */
  name?: string;
  part?: string;
  regex?: string[];
  /** Capture group of `regex` (0 = whole match). */
  group?: number;
  /** Header names (`content_type` for Content-Type, as in nuclei) or cookie names. */
  kval?: string[];
  /** Only for later requests; not reported. */
  internal?: boolean;
  'case-insensitive'?: boolean;
}

export interface AttackDefinition {
  class: AttackClass;
  in: 'query' | 'body' | 'path' | 'header';
  parameter: string;
}

export interface RequestDefinition {
  method: TemplateMethod;
  /** `{{BaseURL}}/…` or `{{RootURL}}/…`; sent raw, exactly as written once variables are filled in. */
  path: string[];
  headers?: Record<string, string>;
  body?: string;
  'matchers-condition'?: Condition;
  matchers?: MatcherDefinition[];
  extractors?: ExtractorDefinition[];
  /** Stop the template at the first match (no further paths or requests). */
  'stop-at-first-match'?: boolean;
  /** Send every path first, then match once over all responses (`body_1`, `status_2`, …). */
  'req-condition'?: boolean;
  attack?: AttackDefinition;
}

export interface ClassificationDefinition {
  'cve-id'?: string | string[];
  'cwe-id'?: string | string[];
  'cvss-score'?: number;
  'cvss-metrics'?: string;
}

export interface InfoDefinition {
  name: string;
  author?: string;
  severity: Severity;
  description?: string;
  reference?: string[];
  classification?: ClassificationDefinition;
  /** A list, or nuclei's comma-separated string. */
  tags: string | string[];
  metadata?: Record<string, string | number | boolean>;
}

export interface TemplateDefinition {
  id: string;
  info: InfoDefinition;
  http: RequestDefinition[];
}

/** A pattern ready to run; `re` is absent when the source has `{{variables}}` (compiled per run). */
export interface CompiledPattern {
  readonly source: string;
  readonly re: RE2 | undefined;
  readonly caseInsensitive: boolean;
}

export interface PartRef {
  readonly part: PartName;
  /** 1-based index of the path within its request (`req-condition`); null = the response at hand. */
  readonly index: number | null;
}

export interface CompiledMatcher {
  readonly type: MatcherType;
  readonly name: string | undefined;
  readonly part: PartRef;
  readonly words: readonly string[];
  readonly patterns: readonly CompiledPattern[];
  readonly values: readonly number[];
  readonly condition: Condition;
  readonly negative: boolean;
  readonly caseInsensitive: boolean;
}

export interface CompiledExtractor {
  readonly type: 'regex' | 'kval';
  /** The given name, else `<type>-<index>`. */
  readonly name: string;
  /** Whether the name was given (only named values become `{{variables}}`). */
  readonly named: boolean;
  readonly part: PartRef;
  readonly patterns: readonly CompiledPattern[];
  readonly group: number;
  readonly keys: readonly string[];
  readonly internal: boolean;
}

export interface CompiledRequest {
  readonly method: TemplateMethod;
  readonly paths: readonly string[];
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | undefined;
  readonly matchersCondition: Condition;
  readonly matchers: readonly CompiledMatcher[];
  readonly extractors: readonly CompiledExtractor[];
  readonly stopAtFirstMatch: boolean;
  readonly reqCondition: boolean;
  readonly attack: AttackDefinition | undefined;
}

export interface CveTemplate {
  readonly id: string;
  readonly name: string;
  readonly severity: Severity;
  readonly description: string;
  /** Upper case, `CVE-2021-41773`. */
  readonly cveIds: readonly string[];
  readonly cweIds: readonly string[];
  readonly cvssScore: number | null;
  readonly tags: readonly string[];
  readonly references: readonly string[];
  readonly requests: readonly CompiledRequest[];
  /** Where it came from (file name or `inline`), for messages. */
  readonly source: string;
  readonly definition: TemplateDefinition;
}

export class TemplateError extends Error {
  override name = 'TemplateError';
}

/** Variables every run defines. */
export const BUILTIN_VARIABLES = ['BaseURL', 'RootURL', 'Hostname', 'randstr'] as const;

export const TEMPLATE_ID = /^(?:CVE-\d{4}-\d{4,}|[a-z0-9][a-z0-9-]{1,63})$/;
export const CVE_ID = /^CVE-\d{4}-\d{4,}$/;
/** The same pattern the API accepts for a tag. */
export const TAG = /^[a-z0-9-]{1,40}$/;
/** `{{name}}` in paths, headers, bodies, words and regexes. */
export const PLACEHOLDER = /\{\{([A-Za-z][A-Za-z0-9_-]*)\}\}/g;

const stringOrList = (pattern?: string) => {
  const item = pattern === undefined ? { type: 'string', minLength: 1 } : { type: 'string', pattern };
  return { anyOf: [item, { type: 'array', minItems: 1, items: item }] };
};
const nonEmptyStrings = { type: 'array', minItems: 1, maxItems: 64, items: { type: 'string', minLength: 1, maxLength: 4096 } };
const partPattern = '^(?:body|header|all|status)(?:_[1-9][0-9]?)?$';
const variableName = '^[a-z][a-z0-9-]{0,39}$';

const MATCHER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: { enum: ['status', 'word', 'regex', 'size'] },
    name: { type: 'string', minLength: 1, maxLength: 64 },
    part: { type: 'string', pattern: partPattern },
    words: nonEmptyStrings,
    regex: nonEmptyStrings,
    status: { type: 'array', minItems: 1, items: { type: 'integer', minimum: 100, maximum: 599 } },
    size: { type: 'array', minItems: 1, items: { type: 'integer', minimum: 0 } },
    condition: { enum: ['and', 'or'] },
    negative: { type: 'boolean' },
    'case-insensitive': { type: 'boolean' },
  },
  allOf: [
    { if: { properties: { type: { const: 'word' } } }, then: { required: ['words'] } },
    { if: { properties: { type: { const: 'regex' } } }, then: { required: ['regex'] } },
    { if: { properties: { type: { const: 'status' } } }, then: { required: ['status'] } },
    { if: { properties: { type: { const: 'size' } } }, then: { required: ['size'] } },
  ],
} as const;

const EXTRACTOR_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: { enum: ['regex', 'kval'] },
    name: { type: 'string', pattern: variableName },
    part: { type: 'string', pattern: partPattern },
    regex: nonEmptyStrings,
    group: { type: 'integer', minimum: 0, maximum: 20 },
    kval: { type: 'array', minItems: 1, items: { type: 'string', pattern: '^[A-Za-z0-9_]{1,64}$' } },
    internal: { type: 'boolean' },
    'case-insensitive': { type: 'boolean' },
  },
  allOf: [
    { if: { properties: { type: { const: 'regex' } } }, then: { required: ['regex'] } },
    { if: { properties: { type: { const: 'kval' } } }, then: { required: ['kval'] } },
    { if: { properties: { internal: { const: true } }, required: ['internal'] }, then: { required: ['name'] } },
  ],
} as const;

const REQUEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['method', 'path'],
  properties: {
    method: { enum: ['GET', 'HEAD', 'POST', 'OPTIONS'] },
    path: { type: 'array', minItems: 1, maxItems: 32, items: { type: 'string', pattern: '^\\{\\{(?:BaseURL|RootURL)\\}\\}', maxLength: 4096 } },
    headers: { type: 'object', maxProperties: 32, propertyNames: { pattern: '^[A-Za-z0-9!#$%&\'*+.^_`|~-]{1,64}$' }, additionalProperties: { type: 'string', maxLength: 8192 } },
    body: { type: 'string', maxLength: 65536 },
    'matchers-condition': { enum: ['and', 'or'] },
    matchers: { type: 'array', minItems: 1, maxItems: 32, items: MATCHER_SCHEMA },
    extractors: { type: 'array', minItems: 1, maxItems: 16, items: EXTRACTOR_SCHEMA },
    'stop-at-first-match': { type: 'boolean' },
    'req-condition': { type: 'boolean' },
    attack: {
      type: 'object',
      additionalProperties: false,
      required: ['class', 'in', 'parameter'],
      properties: {
        class: { enum: ['sqli', 'xss', 'traversal', 'open_redirect', 'cmdi', 'ssti'] },
        in: { enum: ['query', 'body', 'path', 'header'] },
        parameter: { type: 'string', minLength: 1, maxLength: 128 },
      },
    },
  },
} as const;

const TEMPLATE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'info', 'http'],
  properties: {
    id: { type: 'string', pattern: TEMPLATE_ID.source },
    info: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'severity', 'tags'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 200 },
        author: { type: 'string', minLength: 1 },
        severity: { enum: ['critical', 'high', 'medium', 'low', 'info'] },
        description: { type: 'string', minLength: 1, maxLength: 4000 },
        reference: { type: 'array', items: { type: 'string', pattern: '^https?://' } },
        classification: {
          type: 'object',
          additionalProperties: false,
          properties: {
            'cve-id': stringOrList(CVE_ID.source),
            'cwe-id': stringOrList('^CWE-\\d+$'),
            'cvss-score': { type: 'number', minimum: 0, maximum: 10 },
            'cvss-metrics': { type: 'string', pattern: '^CVSS:3\\.[01]/' },
          },
        },
        tags: stringOrList(),
        metadata: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
      },
    },
    http: { type: 'array', minItems: 1, maxItems: 16, items: REQUEST_SCHEMA },
  },
} as const;

const EITHER_OR: Record<string, string> = {
  'cve-id': 'a CVE id (CVE-2021-41773) or a list of them',
  'cwe-id': 'a CWE id (CWE-22) or a list of them',
  tags: 'a list of tags or a comma-separated string of them',
};

// One validator for the process; compiling it is the slow part, validating is cheap.
let validateShape: ReturnType<Ajv['compile']> | undefined;

/** `/http/0/matchers/1` → `http[0].matchers[1]`. */
function fieldOf(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc === '' ? seg : `${acc}.${seg}`), '');
}

function describeError(e: ErrorObject): string {
  const at = fieldOf(e.instancePath) || 'template';
  if (e.keyword === 'additionalProperties') return `${at}: unknown field "${String(e.params.additionalProperty)}"`;
  if (e.keyword === 'required') return `${at}: missing "${String(e.params.missingProperty)}"`;
  if (e.keyword === 'enum') return `${at}: must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`;
  return `${at}: ${e.message ?? e.keyword}`;
}

function placeholders(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]!);
}

function asList(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function parsePart(raw: string | undefined, fallback: PartName): PartRef {
  if (raw === undefined) return { part: fallback, index: null };
  const m = /^(body|header|all|status)(?:_(\d+))?$/.exec(raw)!;
  return { part: m[1] as PartName, index: m[2] === undefined ? null : Number(m[2]) };
}

/** Compiles now unless the pattern has variables; the dummy fill-in still proves the syntax. */
function compilePattern(source: string, caseInsensitive: boolean, fail: (m: string) => never, field: string): CompiledPattern {
  const flags = caseInsensitive ? 'iu' : 'u';
  const hasVars = placeholders(source).length > 0;
  let re: RE2;
  try {
    re = new RE2(hasVars ? source.replace(PLACEHOLDER, 'x') : source, flags);
  } catch (err) {
    fail(`${field} is not a valid RE2 pattern: ${errorMessage(err)}`);
  }
  if (re.test('')) fail(`${field} matches the empty string`);
  return { source, re: hasVars ? undefined : re, caseInsensitive };
}

/** Validates and compiles one template (as parsed from YAML or given in code). */
export function compileTemplate(value: unknown, source: string): CveTemplate {
  validateShape ??= new Ajv({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true }).compile(TEMPLATE_SCHEMA);
  const label = typeof value === 'object' && value !== null && typeof (value as { id?: unknown }).id === 'string' ? ` (${(value as { id: string }).id})` : '';
  const fail = (message: string): never => {
    throw new TemplateError(`${source}${label}: ${message}`);
  };
  if (!validateShape(value)) {
    // `if`/`then` failures repeat what the `required` error under them already says; the branches
    // of a string-or-list field are summed up as one message.
    const all = validateShape.errors ?? [];
    const eitherOr = all.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath);
    const messages = all
      .filter((e) => e.keyword !== 'if' && !(e.schemaPath.includes('/anyOf/') && eitherOr.some((p) => e.instancePath.startsWith(p))))
      .map((e) => (e.keyword === 'anyOf' ? `${fieldOf(e.instancePath)}: must be ${EITHER_OR[e.instancePath.split('/').pop() ?? ''] ?? 'a string or a list of strings'}` : describeError(e)));
    fail([...new Set(messages)].slice(0, 8).join('; ') || 'invalid template');
  }
  const def = value as TemplateDefinition;
  const cveIds = asList(def.info.classification?.['cve-id']).map((c) => c.toUpperCase());
  if (CVE_ID.test(def.id) && !cveIds.includes(def.id)) fail(`classification.cve-id must include the template id ${def.id}`);
  const tags = (Array.isArray(def.info.tags) ? def.info.tags : def.info.tags.split(',')).map((t) => t.trim().toLowerCase()).filter((t) => t !== '');
  for (const t of tags) if (!TAG.test(t)) fail(`info.tags: "${t}" must be lower-case letters, digits and dashes`);
  if (tags.length === 0) fail('info.tags must name at least one tag');

  const available = new Set<string>(BUILTIN_VARIABLES);
  const requests: CompiledRequest[] = [];
  let matcherCount = 0;
  def.http.forEach((req, ri) => {
    const at = `http[${ri}]`;
    const reqCondition = req['req-condition'] ?? false;
    const pathCount = req.path.length;
    const own = (req.extractors ?? []).flatMap((x) => (x.name === undefined ? [] : [x.name]));
    for (const name of own) if ((BUILTIN_VARIABLES as readonly string[]).includes(name)) fail(`${at}: extractor name "${name}" is a built-in variable`);
    const checkVars = (text: string, field: string, allowed: ReadonlySet<string>) => {
      for (const name of placeholders(text)) if (!allowed.has(name)) fail(`${field}: {{${name}}} is not defined before this point (built-ins: ${BUILTIN_VARIABLES.join(', ')}; or an extractor's name from an earlier request)`);
    };
    const withOwn = new Set([...available, ...own]);
    // A request's own extractions exist only after its first response: later paths and its matchers may use them.
    req.path.forEach((p, pi) => checkVars(p, `${at}.path[${pi}]`, pi === 0 ? available : withOwn));
    for (const [name, v] of Object.entries(req.headers ?? {})) checkVars(v, `${at}.headers.${name}`, available);
    if (req.body !== undefined) checkVars(req.body, `${at}.body`, available);
    const checkPart = (part: PartRef, field: string) => {
      if (part.index === null) return;
      if (!reqCondition) fail(`${field}: a numbered part (${part.part}_${part.index}) needs req-condition: true`);
      if (part.index > pathCount) fail(`${field}: ${part.part}_${part.index} names a path this request does not have (it has ${pathCount})`);
    };
    const matchers = (req.matchers ?? []).map((m, mi): CompiledMatcher => {
      const field = `${at}.matchers[${mi}]`;
      const ci = m['case-insensitive'] ?? false;
      const part = parsePart(m.part, m.type === 'status' ? 'status' : 'body');
      checkPart(part, `${field}.part`);
      if (m.type === 'status' && part.part !== 'status') fail(`${field}.part: a status matcher reads status (or status_N)`);
      if (m.type === 'size' && part.part === 'status') fail(`${field}.part: a size matcher reads body, header or all`);
      for (const key of ['words', 'regex', 'status', 'size'] as const) if (m[key] !== undefined && key !== (m.type === 'word' ? 'words' : m.type)) fail(`${field}: "${key}" does not belong to a ${m.type} matcher`);
      (m.words ?? []).forEach((w, wi) => checkVars(w, `${field}.words[${wi}]`, withOwn));
      (m.regex ?? []).forEach((r, xi) => checkVars(r, `${field}.regex[${xi}]`, withOwn));
      return {
        type: m.type,
        name: m.name,
        part,
        words: m.words ?? [],
        patterns: (m.regex ?? []).map((r, xi) => compilePattern(r, ci, fail, `${field}.regex[${xi}]`)),
        values: m.type === 'status' ? (m.status ?? []) : m.type === 'size' ? (m.size ?? []) : [],
        condition: m.condition ?? 'or',
        negative: m.negative ?? false,
        caseInsensitive: ci,
      };
    });
    matcherCount += matchers.length;
    const extractors = (req.extractors ?? []).map((x, xi): CompiledExtractor => {
      const field = `${at}.extractors[${xi}]`;
      const part = parsePart(x.part, x.type === 'kval' ? 'header' : 'body');
      checkPart(part, `${field}.part`);
      if (x.type === 'kval' && part.part !== 'header') fail(`${field}.part: a kval extractor reads headers`);
      if (x.type === 'kval' && (x.regex !== undefined || x.group !== undefined)) fail(`${field}: regex and group belong to a regex extractor`);
      if (x.type === 'regex' && x.kval !== undefined) fail(`${field}: kval belongs to a kval extractor`);
      const ci = x['case-insensitive'] ?? false;
      const patterns = (x.regex ?? []).map((r, pi) => {
        checkVars(r, `${field}.regex[${pi}]`, available);
        const compiled = compilePattern(r, ci, fail, `${field}.regex[${pi}]`);
        const groups = new RE2(`${r.replace(PLACEHOLDER, 'x')}|`, 'u').exec('')?.length ?? 1;
        if ((x.group ?? 0) > groups - 1) fail(`${field}.group: ${x.group} but regex[${pi}] has ${groups - 1} group(s)`);
        return compiled;
      });
      return {
        type: x.type,
        name: x.name ?? `${x.type}-${xi + 1}`,
        named: x.name !== undefined,
        part,
        patterns,
        group: x.group ?? 0,
        keys: x.kval ?? [],
        internal: x.internal ?? false,
      };
    });
    for (const name of own) available.add(name);
    const headers: Record<string, string> = {};
    for (const [name, v] of Object.entries(req.headers ?? {})) {
      const lower = name.toLowerCase();
      if (lower in headers) fail(`${at}.headers: "${name}" is given twice`);
      headers[lower] = v;
    }
    if (req.method === 'HEAD' && matchers.some((m) => m.part.part === 'body' || m.part.part === 'all')) fail(`${at}: a HEAD response has no body to match`);
    requests.push({
      method: req.method,
      paths: req.path,
      headers,
      body: req.body,
      matchersCondition: req['matchers-condition'] ?? 'or',
      matchers,
      extractors,
      stopAtFirstMatch: req['stop-at-first-match'] ?? false,
      reqCondition,
      attack: req.attack,
    });
  });
  if (matcherCount === 0) fail('no request has matchers, so the template can never report anything');

  return {
    id: def.id,
    name: def.info.name,
    severity: def.info.severity,
    description: def.info.description?.trim() ?? '',
    cveIds,
    cweIds: asList(def.info.classification?.['cwe-id']),
    cvssScore: def.info.classification?.['cvss-score'] ?? null,
    tags,
    references: def.info.reference ?? [],
    requests,
    source,
    definition: def,
  };
}

/** Parses a template file (one template per file, as in nuclei). */
export function parseTemplateFile(text: string, source: string): CveTemplate {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new TemplateError(`${source}: not valid YAML: ${errorMessage(err)}`);
  }
  return compileTemplate(doc, source);
}
