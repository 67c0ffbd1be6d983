// API scan: every operation of an OpenAPI 3.0/3.1 document exercised against a base URL.
//
// Per operation, in a fixed order (reads first, shorter paths first, DELETE last so that it does
// not remove what the other operations read):
//   1. one valid request, authenticated (generate.ts), judged for a server error, an undeclared
//      status and a body that does not match the declared schema;
//   2. when the operation declares security: the same request without the scan's credentials
//      (auth bypass);
//   3. for each string parameter (path, query, header) and top-level string property of the body:
//      a quote, a double quote and a backslash appended to the valid value, stopping at the first
//      proof — a database error message (SQL injection), or a 5xx that the valid request and the
//      escaped (doubled) character did not cause;
//   4. secured GET operations with an id-like path parameter (BOLA): see `checkBola`.
// Requests go only to the base URL: the document's `servers`, at any level, are never contacted.
// Every request passes through ctx.http (scope, budget, rate, address policy); a request it refuses
// as out of scope is skipped and noted, and the scan stops when the budget is used up.
import { errorMessage, isObject, type JsonObject } from '../../schemas/json-value.ts';
import { deref } from '../../schemas/openapi/refs.ts';
import { BudgetExhaustedError, OutOfScopeError, RefusedTargetError, type HttpExchange } from '../web/http.ts';
import type { Recheck, WebFinding, WebFindingDetails, WebScanContext, WebScanOutput } from '../web/types.ts';
import {
  judgeAuthBypass,
  judgeBola,
  judgeInjectionError,
  judgeSchema,
  judgeServerError,
  judgeSqli,
  judgeUndeclaredStatus,
  parseJson,
  readCheck,
  requestExcerpt,
  responseExcerpt,
  type ApiCheck,
  type CheckRequest,
  type DeclaredResponse,
  type Judgement,
} from './checks.ts';
import { dialectOf, schemaBundle, type SchemaBundle } from './document.ts';
import { buildRequest, paramKey, sampleRequest, typeOf, ValueGenerator, type BuiltRequest, type RequestValues } from './generate.ts';
import { isJsonMedia, listApiOperations, type ApiOperation, type ApiParameter } from './operations.ts';
import { API_RULES, apiFingerprint, type ApiRuleId, type PolicyAction } from './rules.ts';
import { SchemaValidator, type Dialect } from './schema.ts';

export { ApiDocumentError, parseApiDocument } from './document.ts';
export { API_RULES, type ApiRule, type ApiRuleId } from './rules.ts';

export interface ApiScanInput {
  /** The parsed OpenAPI 3.0/3.1 document (parseApiDocument); internal `$ref`s may remain. */
  document: unknown;
  /** Where the API answers; operation paths are appended to it. */
  baseUrl: string;
  /** `ignore`: the rule is not run and not reported. `warn`/`fail` are the job's to apply. */
  policy?: Record<string, PolicyAction>;
}

const METHOD_ORDER: Record<string, number> = { GET: 0, HEAD: 1, OPTIONS: 2, TRACE: 3, POST: 4, PUT: 5, PATCH: 6, DELETE: 7 };

/** Appended to a valid string value; `control` is the same character escaped the SQL way (doubled). */
const PROBES: readonly { probe: string; control: string }[] = [
  { probe: "'", control: "''" },
  { probe: '"', control: '""' },
  { probe: '\\', control: '\\\\' },
];

/** Path parameters that name an object: `id`, `uuid`, `userId`, `order_id`… */
const isIdName = (name: string): boolean => /^(?:id|uuid|guid)$/i.test(name) || /(?:Id|ID|_id|-id|Uuid|_uuid)$/.test(name);
const is2xx = (status: number): boolean => status >= 200 && status < 300;

/** The scan cannot go on (budget used up, target refused). */
class StopScan extends Error {}

interface InjectionTarget {
  in: 'path' | 'query' | 'header' | 'body';
  name: string;
  value: string;
  with(value: string): RequestValues;
}

const toCheckRequest = (built: BuiltRequest, anonymous = false): CheckRequest => ({
  method: built.method,
  url: built.url,
  ...(Object.keys(built.headers).length > 0 ? { headers: built.headers } : {}),
  ...(built.body !== undefined ? { body: built.body } : {}),
  ...(anonymous ? { anonymous: true } : {}),
});

class ApiScanner {
  readonly findings = new Map<string, WebFinding>();
  readonly notes = new Set<string>();
  readonly validator = new SchemaValidator();
  private readonly generator: ValueGenerator;
  /** Ids each GET answer of a path showed the identity (`/orders` → {1, 3}): objects it may see. */
  private readonly visibleIds = new Map<string, Set<string>>();
  items = 0;

  constructor(
    private readonly root: JsonObject,
    private readonly dialect: Dialect,
    private readonly base: string,
    private readonly ctx: WebScanContext,
    private readonly policy: Record<string, PolicyAction>,
  ) {
    this.generator = new ValueGenerator(root);
  }

  enabled(rule: ApiRuleId): boolean {
    return this.policy[rule] !== 'ignore';
  }

  /** Sends through ScanHttp; null when this request could not be made (noted) but the scan goes on. */
  async send(req: CheckRequest): Promise<HttpExchange | null> {
    this.ctx.signal.throwIfAborted();
    try {
      return await this.ctx.http.send(req);
    } catch (error) {
      this.ctx.signal.throwIfAborted();
      if (error instanceof BudgetExhaustedError) {
        this.notes.add(`stopped: ${error.message}`);
        throw new StopScan();
      }
      if (error instanceof RefusedTargetError) {
        this.notes.add(`stopped: the target was refused: ${error.message}`);
        throw new StopScan();
      }
      if (error instanceof OutOfScopeError) {
        this.notes.add(`skipped, out of scope: ${req.method} ${req.url.split('?')[0]}`);
        return null;
      }
      this.notes.add(`${req.method} ${req.url.split('?')[0]} failed: ${errorMessage(error)}`);
      return null;
    }
  }

  /** Null when the value is valid against the schema (or the schema cannot be compiled); else the errors. */
  private conforms(schema: unknown, value: unknown, key: string): string | null {
    const result = this.validator.validate(() => schemaBundle(this.root, schema), this.dialect, value, key);
    return result.ok === false ? result.errors.join(', ') : null;
  }

  /** Where the generated values break their own schemas (unsatisfiable patterns, wrong examples). */
  private requestProblems(op: ApiOperation, values: RequestValues): string[] {
    const problems: string[] = [];
    for (const p of op.parameters) {
      const key = paramKey(p);
      const error = p.schema === undefined ? null : this.conforms(p.schema, values.params.get(key), `${op.key} param:${key}`);
      if (error) problems.push(`${p.in} parameter ${p.name}: ${error}`);
    }
    const media = op.body?.media;
    if (media?.schema !== undefined && values.body !== undefined) {
      const error = this.conforms(media.schema, values.body, `${op.key} body`);
      if (error) problems.push(`body: ${error}`);
    }
    return problems;
  }

  /** The operation's responses for judging: schemas bundled only when compiled, and compiled once per scan. */
  private lazyResponses(op: ApiOperation): DeclaredResponse<() => SchemaBundle>[] {
    return op.responses.map((r) => ({
      status: r.status,
      media: r.media.map((m) => ({ type: m.type, ...(m.schema !== undefined ? { schema: () => schemaBundle(this.root, m.schema) } : {}) })),
    }));
  }

  /** The same, bundled: for a finding's check. */
  private declaredResponses(op: ApiOperation): DeclaredResponse[] {
    return this.lazyResponses(op).map((r) => ({ status: r.status, media: r.media.map((m) => ({ type: m.type, ...(m.schema ? { schema: m.schema() } : {}) })) }));
  }

  private report(
    rule: ApiRuleId,
    op: ApiOperation,
    judgement: Extract<Judgement, { hit: true }>,
    check: ApiCheck,
    exchange: HttpExchange,
    where: { url: string; path: string; parameter?: string; attack?: WebFindingDetails['attack'] },
  ): void {
    const fingerprint = apiFingerprint(rule, op.method, op.path, where.parameter);
    if (this.findings.has(fingerprint)) return;
    const meta = API_RULES[rule];
    const details: WebFindingDetails = {
      check,
      operation: op.key,
      ...(op.operationId ? { operation_id: op.operationId } : {}),
      reason: judgement.reason,
      request: requestExcerpt(check.request),
      response: responseExcerpt(exchange),
      ...(where.attack ? { attack: where.attack } : {}),
    };
    this.findings.set(fingerprint, {
      rule_id: rule,
      title: `${meta.title}: ${op.key}`,
      severity: meta.severity,
      cwe: meta.cwe,
      location: { kind: 'url', url: where.url, method: op.method, ...(where.parameter !== undefined ? { parameter: where.parameter } : {}) },
      evidence: `${op.method} ${where.path}${where.parameter !== undefined ? ` (${where.parameter})` : ''}: ${judgement.reason}`.slice(0, 400),
      fingerprint,
      details,
    });
  }

  async scanOperation(op: ApiOperation): Promise<void> {
    if (op.body && !op.body.media && op.body.declaredTypes.length > 0) {
      this.notes.add(`${op.key}: request body of type ${op.body.declaredTypes.join(', ')} not generated (JSON and form bodies only)`);
    }
    const values = sampleRequest(op, this.generator, (schema, value, key) => this.conforms(schema, value, key) === null);
    const invalid = this.requestProblems(op, values);
    if (invalid.length > 0) this.notes.add(`${op.key}: no fully valid request could be generated (${invalid.join('; ')}); sent as generated`);
    const built = buildRequest(op, this.base, values);
    const request = toCheckRequest(built);
    const exchange = await this.send(request);
    if (!exchange) return;
    this.items += 1;
    const base = { scanner: 'api' as const, version: 1 as const, operation: op.key, request };
    const at = { url: built.url, path: built.path };
    let serverError = judgeServerError(exchange);
    if (serverError.hit && invalid.length > 0) serverError = { hit: true, reason: `${serverError.reason} (to a request that is not fully valid: ${invalid.join('; ')})` };
    if (serverError.hit && this.enabled('api-server-error')) this.report('api-server-error', op, serverError, { ...base, rule: 'api-server-error' }, exchange, at);
    if (!serverError.hit) {
      const declared = op.responses.map((r) => r.status);
      const undeclared = judgeUndeclaredStatus(exchange, declared);
      if (undeclared.hit && this.enabled('api-undeclared-status')) this.report('api-undeclared-status', op, undeclared, { ...base, rule: 'api-undeclared-status', declared }, exchange, at);
      if (this.enabled('api-schema-violation')) {
        const schema = judgeSchema(exchange, op.method, this.lazyResponses(op), this.dialect, this.validator, op.key);
        if (schema.hit) this.report('api-schema-violation', op, schema, { ...base, rule: 'api-schema-violation', dialect: this.dialect, responses: this.declaredResponses(op) }, exchange, at);
      }
    }
    if (op.method === 'GET' && is2xx(exchange.status)) this.rememberIds(op.path, exchange.body);

    let bypass = false;
    if (op.secured && this.enabled('api-auth-bypass')) {
      const anonymous = { ...request, anonymous: true };
      const answer = await this.send(anonymous);
      const json = op.responses.some((r) => r.status.startsWith('2') && r.media.some((m) => isJsonMedia(m.type)));
      const judgement = answer ? judgeAuthBypass(answer, json) : { hit: false as const };
      if (answer && judgement.hit) {
        bypass = true;
        this.report('api-auth-bypass', op, judgement, { ...base, request: anonymous, rule: 'api-auth-bypass', json }, answer, at);
      }
    }
    if ((this.enabled('api-injection-sqli') || this.enabled('api-injection-error')) && exchange.status < 500) {
      for (const target of this.injectionTargets(op, values)) await this.probe(op, built, exchange, target);
    }
    // Once anyone can read the operation (bypass), another object's id proves nothing more.
    if (this.enabled('api-bola') && op.method === 'GET' && op.secured && !bypass && is2xx(exchange.status)) await this.checkBola(op, values, request, exchange);
  }

  private injectionTargets(op: ApiOperation, values: RequestValues): InjectionTarget[] {
    const targets: InjectionTarget[] = [];
    const plainString = (schema: unknown): boolean => {
      const s = deref(this.root, schema);
      return isObject(s) && typeOf(s) === 'string' && s.enum === undefined && s.const === undefined;
    };
    for (const p of op.parameters) {
      const value = values.params.get(paramKey(p));
      if (p.in === 'cookie' || p.json || typeof value !== 'string' || !plainString(p.schema)) continue;
      targets.push({ in: p.in, name: p.name, value, with: (v) => ({ params: new Map(values.params).set(paramKey(p), v), body: values.body }) });
    }
    const bodySchema = deref(this.root, op.body?.media?.schema);
    if (isObject(values.body) && isObject(bodySchema) && isObject(bodySchema.properties)) {
      const properties = bodySchema.properties;
      const body = values.body;
      for (const [name, value] of Object.entries(body)) {
        if (typeof value !== 'string' || !plainString(properties[name])) continue;
        targets.push({ in: 'body', name, value, with: (v) => ({ params: values.params, body: { ...body, [name]: v } }) });
      }
    }
    return targets;
  }

  /** The probes for one target, stopping at the first proof (or at the first inconclusive 5xx). */
  private async probe(op: ApiOperation, valid: BuiltRequest, baseline: HttpExchange, target: InjectionTarget): Promise<void> {
    const attack = { class: 'sqli' as const, method: op.method, path: valid.path, parameter: target.name, in: target.in };
    const common = { scanner: 'api' as const, version: 1 as const, operation: op.key };
    const baselineRequest = toCheckRequest(valid);
    for (const { probe, control } of PROBES) {
      const probeBuilt = buildRequest(op, this.base, target.with(target.value + probe));
      const probeRequest = toCheckRequest(probeBuilt);
      const answer = await this.send(probeRequest);
      if (!answer) return;
      const where = { url: probeBuilt.url, path: valid.path, parameter: target.name, attack };
      if (this.enabled('api-injection-sqli')) {
        const sqli = judgeSqli(answer, baseline);
        if (sqli.hit) {
          this.report('api-injection-sqli', op, sqli, { ...common, request: probeRequest, rule: 'api-injection-sqli', baseline: baselineRequest }, answer, where);
          return;
        }
      }
      if (answer.status >= 500) {
        if (!this.enabled('api-injection-error')) return;
        const controlRequest = toCheckRequest(buildRequest(op, this.base, target.with(target.value + control)));
        const controlAnswer = await this.send(controlRequest);
        if (!controlAnswer) return;
        const judgement = judgeInjectionError(answer, baseline, controlAnswer);
        if (judgement.hit) {
          this.report('api-injection-error', op, judgement, { ...common, request: probeRequest, rule: 'api-injection-error', baseline: baselineRequest, control: controlRequest }, answer, where);
        }
        // Either way the target has told what it can: a server that fails on the escaped form too just fails on odd input.
        return;
      }
    }
  }

  /** Ids in a GET answer: `id` and id-like fields of its objects, of its array, or of an array inside it (`{data: [...]}`). */
  private rememberIds(path: string, body: string): void {
    const parsed = parseJson(body);
    if (!parsed.ok) return;
    const ids = this.visibleIds.get(path) ?? new Set<string>();
    const take = (obj: unknown): void => {
      if (!isObject(obj)) return;
      for (const [key, value] of Object.entries(obj)) if (isIdName(key) && (typeof value === 'number' || typeof value === 'string')) ids.add(String(value));
    };
    const value = parsed.value;
    const lists = Array.isArray(value) ? [value] : isObject(value) ? Object.values(value).filter(Array.isArray) : [];
    for (const list of lists) for (const item of list.slice(0, 1000)) take(item);
    take(value);
    this.visibleIds.set(path, ids);
  }

  /**
   * BOLA with one identity. For a secured GET whose valid (own) request answered 2xx and whose path
   * has an id-like parameter with an integer value: the neighbouring ids (value+1, then value−1,
   * within the schema's bounds) are asked for with the same credentials, skipping ids that the
   * identity was already shown by a GET of the parent path (`/orders` for `/orders/{id}`: its own
   * objects). A 2xx whose JSON differs from the own object and carries the id asked for is reported.
   * Limits: one identity cannot tell another user's object from one shared by design (public
   * profiles), so the finding asks for confirmation; ids that are not integers (UUIDs, slugs) cannot
   * be guessed and are not tried; only path parameters of GET operations are exercised.
   */
  private async checkBola(op: ApiOperation, values: RequestValues, own: CheckRequest, ownAnswer: HttpExchange): Promise<void> {
    for (const p of op.parameters.filter((q) => q.in === 'path' && isIdName(q.name))) {
      const value = values.params.get(paramKey(p));
      const current = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : null;
      if (current === null || !Number.isInteger(current)) {
        this.notes.add(`${op.key}: other objects' ids not tried (only integer ids can be guessed)`);
        continue;
      }
      const visible = this.visibleIds.get(op.path.slice(0, op.path.indexOf(`/{${p.name}}`))) ?? new Set<string>();
      for (const candidate of this.neighbours(p, current)) {
        const id = String(candidate);
        if (visible.has(id)) continue;
        const otherBuilt = buildRequest(op, this.base, { params: new Map(values.params).set(paramKey(p), typeof value === 'string' ? id : candidate), body: values.body });
        const other = toCheckRequest(otherBuilt);
        const answer = await this.send(other);
        if (!answer) return;
        const idKeys = [...new Set(['id', p.name])];
        const judgement = judgeBola(ownAnswer, answer, id, idKeys);
        if (judgement.hit) {
          const check: ApiCheck = { scanner: 'api', version: 1, operation: op.key, request: other, rule: 'api-bola', own, id, idKeys };
          this.report('api-bola', op, judgement, check, answer, { url: otherBuilt.url, path: otherBuilt.path, parameter: p.name });
          return;
        }
      }
    }
  }

  private neighbours(p: ApiParameter, current: number): number[] {
    const s = deref(this.root, p.schema);
    const min = isObject(s) && typeof s.minimum === 'number' ? s.minimum : 0;
    const max = isObject(s) && typeof s.maximum === 'number' ? s.maximum : Number.MAX_SAFE_INTEGER;
    return [current + 1, current - 1].filter((n) => n >= min && n <= max);
  }

  noteGeneration(): void {
    for (const problem of new Set(this.generator.inexact)) this.notes.add(`value generation: ${problem}`);
    for (const pattern of this.validator.unenforced) this.notes.add(`pattern ${JSON.stringify(pattern.slice(0, 80))} not enforced: RE2 cannot compile it`);
  }
}

/** The base URL without query, fragment or trailing slash. */
function normaliseBase(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new Error(`base URL ${JSON.stringify(baseUrl)} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`base URL ${JSON.stringify(baseUrl)} is not http(s)`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

export async function scanApi(input: ApiScanInput, ctx: WebScanContext): Promise<WebScanOutput> {
  ctx.signal.throwIfAborted();
  const { root, dialect } = dialectOf(input.document);
  const base = normaliseBase(input.baseUrl);
  const scanner = new ApiScanner(root, dialect, base, ctx, input.policy ?? {});
  const operations = listApiOperations(root)
    .map((op, index) => ({ op, index }))
    .sort((a, b) => (METHOD_ORDER[a.op.method] ?? 9) - (METHOD_ORDER[b.op.method] ?? 9) || a.op.path.split('/').length - b.op.path.split('/').length || a.index - b.index)
    .map(({ op }) => op);
  const servers = Array.isArray(root.servers) ? root.servers.flatMap((s) => (isObject(s) && typeof s.url === 'string' ? [s.url] : [])) : [];
  const elsewhere = servers.filter((s) => s.replace(/\/+$/, '') !== base);
  if (elsewhere.length > 0 || operations.some((op) => op.ownServers)) {
    scanner.notes.add(`the document's servers are not contacted (${elsewhere.slice(0, 3).join(', ') || 'per-operation servers'}): every request goes to ${base}`);
  }
  if (operations.length === 0) scanner.notes.add('the document declares no operations');
  const started = ctx.http.requests;
  try {
    for (const [index, op] of operations.entries()) {
      await scanner.scanOperation(op);
      ctx.onProgress?.((index + 1) / operations.length);
    }
  } catch (error) {
    if (!(error instanceof StopScan)) throw error;
  }
  scanner.noteGeneration();
  return {
    findings: [...scanner.findings.values()],
    coverage: { requests: ctx.http.requests - started, items: scanner.items, notes: [...scanner.notes] },
  };
}

/** Re-runs the check a finding's `details.check` describes, with the same requests and judgement. */
export async function recheckApi(raw: Record<string, unknown>, ctx: WebScanContext): Promise<Recheck> {
  const check = readCheck(raw);
  const send = async (req: CheckRequest): Promise<HttpExchange> => {
    ctx.signal.throwIfAborted();
    return ctx.http.send(req);
  };
  const answer = await send(check.request);
  let judgement: Judgement;
  switch (check.rule) {
    case 'api-server-error':
      judgement = judgeServerError(answer);
      break;
    case 'api-undeclared-status':
      judgement = judgeUndeclaredStatus(answer, check.declared);
      break;
    case 'api-schema-violation':
      judgement = judgeSchema(answer, check.request.method, check.responses, check.dialect, new SchemaValidator());
      break;
    case 'api-auth-bypass':
      judgement = judgeAuthBypass(answer, check.json);
      break;
    case 'api-injection-sqli':
      judgement = judgeSqli(answer, await send(check.baseline));
      break;
    case 'api-injection-error':
      // Without the 5xx there is nothing to compare.
      judgement = answer.status >= 500 ? judgeInjectionError(answer, await send(check.baseline), await send(check.control)) : { hit: false };
      break;
    case 'api-bola':
      judgement = judgeBola(await send(check.own), answer, check.id, check.idKeys);
      break;
  }
  const verdict = judgement.hit ? judgement.reason : `not reproduced: answered ${answer.status}`;
  return { reproduced: judgement.hit, evidence: `${verdict}\n\n${requestExcerpt(check.request)}\n\n${responseExcerpt(answer)}` };
}
