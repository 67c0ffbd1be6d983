// Loads the SAST rules (YAML, see README-rules.md), validates them with messages that name the
// file, the rule and the offending key, and compiles them into the indexes the taint engine and
// the pattern walker use. Everything a rule can say is in the matcher vocabulary below; nothing
// rule-specific is written in TypeScript.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import type { Severity } from '../types.ts';
import { expandBraces, parsePathPattern, PathIndex, requiredWords, type PathPattern } from './path-pattern.ts';

export class RuleError extends Error {
  override readonly name = 'RuleError';
}

export interface RuleMeta {
  id: string;
  mode: 'taint' | 'pattern';
  title: string;
  message: string;
  severity: Severity;
  cwe: string | null;
  /** Rule file it came from. */
  file: string;
  /** Pattern rules: taint rules whose finding on the same code says more (`eval(x)` vs `eval(req.body.x)`). */
  subsumedBy?: string[];
}

/** What the prefilter needs to see among a file's identifiers for a matcher to have a chance. */
export type Need = { words: string[] } | { identifier: RegExp };

// ---- taint ----

export type When = 'string-built' | 'not-container' | 'object';

export interface SinkSpec {
  rule: number;
  kind: 'call' | 'new' | 'assign';
  /** Argument positions checked; `any` = every argument. */
  args: 'any' | number[];
  when?: When;
  /** The sink does not fire when an object-literal argument has one of these keys. */
  unlessOption?: string[];
  /** The sink fires only if this argument is present and not a literal (`coll.update(filter, doc)`, not `hash.update(data, 'utf8')`). */
  withArg?: number;
  /** Only when the call's result decides something: tested in a condition, returned, or stored in a property. */
  resultUsed?: boolean;
  /** Not when the enclosing function also calls one of these with the same argument (`jwt.verify(token)`). */
  unlessCall?: PathPattern[];
}

export interface SanitizerSpec {
  mask: bigint;
  /** Used as a condition, the call vouches for its arguments or for its receiver. */
  guard: 'args' | 'receiver';
  /** Only when the first argument is a constant string matching (`url.startsWith('https://acme.test/')`). */
  argConstant?: RegExp;
  /** Only when the receiver is a fixed collection: an array or `new Set` of literals, or a `const` bound to one. */
  receiverConstant?: boolean;
}

export interface PropagatorSpec {
  from: 'all' | 'receiver' | 'args';
  /** Taint goes into the receiver or this argument (`arr.push(x)`, `Object.assign(t, x)`). */
  into?: 'receiver' | number;
}

/**
 * A parameter that is request data: one decorated `@Query()`/`@Body('x')` (NestJS; not if a
 * decorator argument names an `unless_arg` pipe), or a parameter of a function selected by export
 * name, file path and directive (`'use server'` actions, Next.js `route.ts` handlers).
 */
export type ParamSource =
  | { kind: 'decorated'; mask: bigint; strings: boolean; decorators: Set<string>; unlessArg: Set<string> }
  | { kind: 'function'; mask: bigint; strings: boolean; index: 'any' | number[]; exported?: Set<string>; file?: RegExp; directive?: string };

/** A callback passed to a call (directly, or as an option of an object-literal argument) whose parameters are sources. */
export interface CallbackSource {
  mask: bigint;
  strings: boolean;
  params: number[];
  argMatches: Array<[number, RegExp]>;
  options?: string[];
}

export interface TaintRules {
  /** Index = bit in a taint mask. */
  rules: RuleMeta[];
  sourceMember: PathIndex<bigint>;
  sourceCall: PathIndex<bigint>;
  /** Destructured property of a route handler's first parameter → rules it is a source for. */
  routeParams: Map<string, bigint>;
  /** Sources marked `strings: true` (path parameters, headers): their values are strings, never objects. */
  stringMember: PathIndex<true>;
  stringCall: PathIndex<true>;
  stringRouteParams: Set<string>;
  /** `callback_param` sources: parameters of callbacks passed to these calls (`zip.on('entry', (entry) => …)`). */
  callbackSources: PathIndex<CallbackSource>;
  /** `decorated_param` and `function_param` sources: parameters that hold request data as a whole. */
  paramSources: ParamSource[];
  sinkCall: PathIndex<SinkSpec>;
  sinkNew: PathIndex<SinkSpec>;
  sinkAssign: PathIndex<SinkSpec>;
  computedKeyAssign: Array<{ rule: number; depth: number }>;
  sanitizerCall: PathIndex<SanitizerSpec>;
  sanitizerPrefix: Array<{ regex: RegExp; mask: bigint }>;
  propagatorCall: PathIndex<PropagatorSpec>;
  propagatorNew: PathIndex<PropagatorSpec>;
  sourceNeeds: Need[][];
  sinkNeeds: Need[][];
}

// ---- patterns ----

export type LiteralValue = string | number | boolean | null;

export type PatternMatcher =
  | {
      kind: 'call' | 'new';
      rule: number;
      argMatches: Array<[number, RegExp]>;
      argNotConstant?: 'any' | number[];
      /** These arguments are fixed values (literals, `Buffer.from/alloc` of them, a `const` bound to one). */
      argFixed?: number[];
      optionMissing?: { arg: number; keys: string[] };
      optionLiteral?: { arg: number; keys: string[] };
      context?: RegExp;
    }
  | { kind: 'property'; rule: number; names: string[]; values: LiteralValue[]; context?: RegExp }
  | { kind: 'string_binding'; rule: number; name: RegExp; nameNot: RegExp[]; value?: RegExp; valueNot: RegExp[] }
  | { kind: 'deep_merge_function'; rule: number; name: RegExp; unless: RegExp[] };

export interface PatternRules {
  rules: RuleMeta[];
  calls: PathIndex<PatternMatcher>;
  news: PathIndex<PatternMatcher>;
  properties: Map<string, PatternMatcher[]>;
  bindings: PatternMatcher[];
  mergeFunctions: PatternMatcher[];
  needs: Need[][];
}

export interface RuleSet {
  taint: TaintRules;
  patterns: PatternRules;
  /** Every rule by id. */
  byId: Map<string, RuleMeta>;
}

/**
 * Registration methods of Express/Koa/Fastify-style routers: a function literal passed to one is
 * a handler, whose destructured first parameter `param_of_route_handler` names.
 */
export const ROUTE_METHODS: readonly string[] = ['get', 'post', 'put', 'patch', 'delete', 'del', 'all', 'use', 'options', 'head', 'route'];

/** Words one of which a route handler defined outside a router call has (see taint-frameworks.ts `handlerShaped`). */
const HANDLER_WORDS: readonly string[] = ['res', 'resp', 'response', 'reply', 'next', 'Request', 'FastifyRequest', 'NextApiRequest', 'Context', 'ParameterizedContext', 'Response', 'NextFunction'];

// ---- validation helpers ----

type Role = 'source' | 'sink' | 'sanitizer' | 'propagator' | 'pattern';

const KINDS: Record<Role, Record<string, string[]>> = {
  source: {
    member: ['strings'],
    call: ['strings'],
    param_of_route_handler: ['strings'],
    decorated_param: ['strings', 'unless_arg'],
    function_param: ['strings', 'exported', 'file', 'directive'],
    callback_param: ['strings', 'param', 'arg_matches', 'option'],
  },
  sink: {
    call: ['arg', 'when', 'unless_option', 'with_arg', 'result_used', 'unless_call'],
    new: ['arg', 'when', 'unless_option', 'with_arg', 'result_used', 'unless_call'],
    assign: ['when'],
    computed_key_assign: [],
  },
  sanitizer: { call: ['guard', 'arg_constant', 'receiver_constant'], prefix: [] },
  propagator: { call: ['from', 'into'], new: ['from', 'into'] },
  pattern: {
    call: ['arg_matches', 'arg_not_constant', 'arg_fixed', 'option_missing', 'option_literal', 'context'],
    new: ['arg_matches', 'arg_not_constant', 'arg_fixed', 'option_missing', 'option_literal', 'context'],
    property: ['value', 'context'],
    string_binding: ['name_not', 'value', 'value_not'],
    deep_merge_function: ['unless'],
  },
};

const SEVERITIES: readonly Severity[] = ['critical', 'high', 'medium', 'low', 'info'];
const RULE_KEYS: Record<'taint' | 'pattern', string[]> = {
  taint: ['id', 'mode', 'title', 'message', 'severity', 'cwe', 'sources', 'sinks', 'sanitizers'],
  pattern: ['id', 'mode', 'title', 'message', 'severity', 'cwe', 'patterns', 'subsumed_by'],
};

type Mapping = Record<string, unknown>;
const isMapping = (v: unknown): v is Mapping => typeof v === 'object' && v !== null && !Array.isArray(v);

class Where {
  constructor(readonly text: string) {}
  at(part: string | number): Where {
    return new Where(typeof part === 'number' ? `${this.text}[${part}]` : `${this.text}: ${part}`);
  }
}

function fail(where: Where, message: string): never {
  throw new RuleError(`${where.text}: ${message}`);
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [value];
}

function strings(value: unknown, where: Where): string[] {
  const out = list(value).map((v, i) => {
    if (typeof v !== 'string' || v.length === 0) fail(where.at(i), 'expected a non-empty string');
    return v;
  });
  if (out.length === 0) fail(where, 'expected at least one value');
  return out;
}

function paths(value: unknown, where: Where): PathPattern[] {
  const out: PathPattern[] = [];
  for (const text of strings(value, where)) {
    try {
      for (const expanded of expandBraces(text)) out.push(parsePathPattern(expanded));
    } catch (err) {
      fail(where, (err as Error).message);
    }
  }
  return out;
}

/** A JavaScript regular expression; a leading `(?i)` makes it case-insensitive. */
function regex(value: unknown, where: Where): RegExp {
  if (typeof value !== 'string' || value.length === 0) fail(where, 'expected a regular expression string');
  const insensitive = value.startsWith('(?i)');
  try {
    return new RegExp(insensitive ? value.slice(4) : value, insensitive ? 'i' : '');
  } catch (err) {
    fail(where, `invalid regular expression: ${(err as Error).message}`);
  }
}

function regexes(value: unknown, where: Where): RegExp[] {
  return list(value).map((v, i) => regex(v, Array.isArray(value) ? where.at(i) : where));
}

function index(value: unknown, where: Where): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) fail(where, 'expected an argument index (0, 1, …)');
  return value;
}

function argSpec(value: unknown, where: Where): 'any' | number[] {
  if (value === undefined || value === 'any') return 'any';
  return list(value).map((v, i) => index(v, where.at(i)));
}

function literal(value: unknown, where: Where): LiteralValue {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  fail(where, 'expected a literal value (string, number, boolean or null)');
}

/** Splits a matcher into its kind, its kind's value and its modifiers, rejecting unknown keys. */
function matcherParts(raw: unknown, role: Role, where: Where): { kind: string; value: unknown; mods: Mapping } {
  if (!isMapping(raw)) fail(where, `expected a matcher mapping (one of: ${Object.keys(KINDS[role]).join(', ')})`);
  const kinds = Object.keys(raw).filter((k) => k in KINDS[role]);
  if (kinds.length !== 1) {
    const unknown = Object.keys(raw).filter((k) => !(k in KINDS[role]));
    fail(where, 
      kinds.length === 0
        ? `no matcher kind${unknown.length ? ` (unknown key '${unknown[0]}')` : ''}; a ${role} is one of: ${Object.keys(KINDS[role]).join(', ')}`
        : `more than one matcher kind (${kinds.join(', ')}); use separate list entries`,
    );
  }
  const kind = kinds[0]!;
  const allowed = KINDS[role][kind]!;
  const mods: Mapping = {};
  for (const [k, v] of Object.entries(raw)) {
    if (k === kind) continue;
    if (!allowed.includes(k)) fail(where, `unknown key '${k}' for a ${role} '${kind}' matcher (allowed: ${allowed.join(', ') || 'none'})`);
    mods[k] = v;
  }
  return { kind, value: raw[kind], mods };
}

function wordsOf(patterns: PathPattern[]): Need[] {
  return patterns.map((p) => ({ words: requiredWords(p) }));
}

// ---- compiling ----

interface RawFile {
  name: string;
  text: string;
}

interface PendingTaint {
  meta: RuleMeta;
  raw: Mapping;
  where: Where;
}

function emptyTaint(): TaintRules {
  return {
    rules: [],
    sourceMember: new PathIndex(),
    sourceCall: new PathIndex(),
    routeParams: new Map(),
    stringMember: new PathIndex(),
    stringCall: new PathIndex(),
    stringRouteParams: new Set(),
    paramSources: [],
    callbackSources: new PathIndex(),
    sinkCall: new PathIndex(),
    sinkNew: new PathIndex(),
    sinkAssign: new PathIndex(),
    computedKeyAssign: [],
    sanitizerCall: new PathIndex(),
    sanitizerPrefix: [],
    propagatorCall: new PathIndex(),
    propagatorNew: new PathIndex(),
    sourceNeeds: [],
    sinkNeeds: [],
  };
}

function compileSource(t: TaintRules, raw: unknown, bit: bigint, where: Where): Need[] {
  const { kind, value, mods } = matcherParts(raw, 'source', where);
  if (mods.strings !== undefined && typeof mods.strings !== 'boolean') fail(where.at('strings'), 'expected true or false');
  const onlyStrings = mods.strings === true;
  if (kind === 'param_of_route_handler') {
    const props = strings(value, where.at(kind));
    for (const p of props) {
      t.routeParams.set(p, (t.routeParams.get(p) ?? 0n) | bit);
      if (onlyStrings) t.stringRouteParams.add(p);
    }
    // `body` or `params` alone are everywhere: also require a route registration method, or a
    // word of a handler's shape (a response parameter, a request type) for handlers defined apart.
    return props.flatMap((p) => [...ROUTE_METHODS, ...HANDLER_WORDS].map((m) => ({ words: [p, m] })));
  }
  if (kind === 'callback_param') {
    const argMatches: Array<[number, RegExp]> = [];
    if (mods.arg_matches !== undefined) {
      if (!isMapping(mods.arg_matches)) fail(where.at('arg_matches'), 'expected a mapping of argument index to regular expression');
      for (const [k, v] of Object.entries(mods.arg_matches)) argMatches.push([index(Number(k), where.at('arg_matches').at(k)), regex(v, where.at('arg_matches').at(k))]);
    }
    const params = mods.param !== undefined ? list(mods.param).map((v, i) => index(v, where.at('param').at(i))) : [0];
    const options = mods.option !== undefined ? strings(mods.option, where.at('option')) : undefined;
    const ps = paths(value, where.at(kind));
    for (const p of ps) t.callbackSources.add(p, { mask: bit, strings: onlyStrings, params, argMatches, ...(options ? { options } : {}) });
    return wordsOf(ps);
  }
  if (kind === 'decorated_param') {
    const decorators = strings(value, where.at(kind));
    const unlessArg = mods.unless_arg !== undefined ? strings(mods.unless_arg, where.at('unless_arg')) : [];
    t.paramSources.push({ kind: 'decorated', mask: bit, strings: onlyStrings, decorators: new Set(decorators), unlessArg: new Set(unlessArg) });
    return decorators.map((d) => ({ words: [d] }));
  }
  if (kind === 'function_param') {
    const idx = argSpec(value, where.at(kind));
    const exported = mods.exported !== undefined ? strings(mods.exported, where.at('exported')) : undefined;
    const file = mods.file !== undefined ? regex(mods.file, where.at('file')) : undefined;
    let directive: string | undefined;
    if (mods.directive !== undefined) {
      if (typeof mods.directive !== 'string' || !mods.directive) fail(where.at('directive'), 'expected a non-empty string');
      directive = mods.directive;
    }
    if (!exported && !directive) fail(where.at(kind), 'needs `exported` or `directive` (a parameter of every function is no source)');
    t.paramSources.push({ kind: 'function', mask: bit, strings: onlyStrings, index: idx, ...(exported ? { exported: new Set(exported) } : {}), ...(file ? { file } : {}), ...(directive ? { directive } : {}) });
    const dirWords = directive ? [...directive.matchAll(/[A-Za-z_$][\w$]*/g)].map((m) => m[0]) : [];
    if (exported && !exported.includes('*')) return exported.map((e) => ({ words: [e, ...dirWords] }));
    return [{ words: dirWords.length ? dirWords : ['export'] }];
  }
  const ps = paths(value, where.at(kind));
  for (const p of ps) {
    (kind === 'member' ? t.sourceMember : t.sourceCall).add(p, bit);
    if (onlyStrings) (kind === 'member' ? t.stringMember : t.stringCall).add(p, true);
  }
  return wordsOf(ps);
}

function compileSink(t: TaintRules, raw: unknown, rule: number, where: Where): Need[] {
  const { kind, value, mods } = matcherParts(raw, 'sink', where);
  if (kind === 'computed_key_assign') {
    const depth = index(value, where.at(kind));
    if (depth < 1) fail(where.at(kind), 'depth must be at least 1');
    t.computedKeyAssign.push({ rule, depth });
    return [{ words: [] }];
  }
  const when = mods.when;
  if (when !== undefined && when !== 'string-built' && when !== 'not-container' && when !== 'object') {
    fail(where.at('when'), `unknown condition '${String(when)}' (allowed: string-built, not-container, object)`);
  }
  const spec: SinkSpec = {
    rule,
    kind: kind as SinkSpec['kind'],
    args: kind === 'assign' ? 'any' : argSpec(mods.arg, where.at('arg')),
    ...(when !== undefined ? { when: when as When } : {}),
    ...(mods.unless_option !== undefined ? { unlessOption: strings(mods.unless_option, where.at('unless_option')) } : {}),
    ...(mods.with_arg !== undefined ? { withArg: index(mods.with_arg, where.at('with_arg')) } : {}),
    ...(mods.result_used === true ? { resultUsed: true } : {}),
    ...(mods.unless_call !== undefined ? { unlessCall: paths(mods.unless_call, where.at('unless_call')) } : {}),
  };
  if (mods.result_used !== undefined && typeof mods.result_used !== 'boolean') fail(where.at('result_used'), 'expected true or false');
  const ps = paths(value, where.at(kind));
  const target = kind === 'call' ? t.sinkCall : kind === 'new' ? t.sinkNew : t.sinkAssign;
  for (const p of ps) target.add(p, spec);
  return wordsOf(ps);
}

function compileSanitizer(t: TaintRules, raw: unknown, mask: bigint, where: Where): void {
  const { kind, value, mods } = matcherParts(raw, 'sanitizer', where);
  if (kind === 'prefix') {
    t.sanitizerPrefix.push({ regex: regex(value, where.at(kind)), mask });
    return;
  }
  const guard = mods.guard ?? 'args';
  if (guard !== 'args' && guard !== 'receiver') fail(where.at('guard'), `expected 'args' or 'receiver'`);
  const argConstant = mods.arg_constant !== undefined ? regex(mods.arg_constant, where.at('arg_constant')) : undefined;
  if (mods.receiver_constant !== undefined && typeof mods.receiver_constant !== 'boolean') fail(where.at('receiver_constant'), 'expected true or false');
  const receiverConstant = mods.receiver_constant === true;
  for (const p of paths(value, where.at(kind))) t.sanitizerCall.add(p, { mask, guard, ...(argConstant ? { argConstant } : {}), ...(receiverConstant ? { receiverConstant } : {}) });
}

function compilePropagator(t: TaintRules, raw: unknown, where: Where): void {
  const { kind, value, mods } = matcherParts(raw, 'propagator', where);
  const from = mods.from ?? 'all';
  if (from !== 'all' && from !== 'receiver' && from !== 'args') fail(where.at('from'), `expected 'all', 'receiver' or 'args'`);
  let into: PropagatorSpec['into'];
  if (mods.into !== undefined) into = mods.into === 'receiver' ? 'receiver' : index(mods.into, where.at('into'));
  const spec: PropagatorSpec = { from, ...(into !== undefined ? { into } : {}) };
  for (const p of paths(value, where.at(kind))) (kind === 'call' ? t.propagatorCall : t.propagatorNew).add(p, spec);
}

function compilePattern(pr: PatternRules, raw: unknown, rule: number, where: Where): Need[] {
  const { kind, value, mods } = matcherParts(raw, 'pattern', where);
  const context = mods.context !== undefined ? regex(mods.context, where.at('context')) : undefined;
  switch (kind) {
    case 'call':
    case 'new': {
      const argMatches: Array<[number, RegExp]> = [];
      if (mods.arg_matches !== undefined) {
        if (!isMapping(mods.arg_matches)) fail(where.at('arg_matches'), 'expected a mapping of argument index to regular expression');
        for (const [k, v] of Object.entries(mods.arg_matches)) {
          argMatches.push([index(Number(k), where.at('arg_matches').at(k)), regex(v, where.at('arg_matches').at(k))]);
        }
      }
      let optionMissing: { arg: number; keys: string[] } | undefined;
      if (mods.option_missing !== undefined) {
        const om = mods.option_missing;
        if (!isMapping(om)) fail(where.at('option_missing'), 'expected { arg, keys }');
        optionMissing = { arg: index(om.arg, where.at('option_missing').at('arg')), keys: strings(om.keys, where.at('option_missing').at('keys')) };
        for (const k of Object.keys(om)) if (k !== 'arg' && k !== 'keys') fail(where.at('option_missing'), `unknown key '${k}' (allowed: arg, keys)`);
      }
      let optionLiteral: { arg: number; keys: string[] } | undefined;
      if (mods.option_literal !== undefined) {
        const ol = mods.option_literal;
        if (!isMapping(ol)) fail(where.at('option_literal'), 'expected { arg, keys }');
        optionLiteral = { arg: index(ol.arg, where.at('option_literal').at('arg')), keys: strings(ol.keys, where.at('option_literal').at('keys')) };
        for (const k of Object.keys(ol)) if (k !== 'arg' && k !== 'keys') fail(where.at('option_literal'), `unknown key '${k}' (allowed: arg, keys)`);
      }
      const matcher: PatternMatcher = {
        kind,
        rule,
        argMatches,
        ...(optionLiteral ? { optionLiteral } : {}),
        ...(mods.arg_not_constant !== undefined ? { argNotConstant: argSpec(mods.arg_not_constant, where.at('arg_not_constant')) } : {}),
        ...(mods.arg_fixed !== undefined ? { argFixed: list(mods.arg_fixed).map((v, i) => index(v, where.at('arg_fixed').at(i))) } : {}),
        ...(optionMissing ? { optionMissing } : {}),
        ...(context ? { context } : {}),
      };
      const ps = paths(value, where.at(kind));
      for (const p of ps) (kind === 'call' ? pr.calls : pr.news).add(p, matcher);
      return wordsOf(ps);
    }
    case 'property': {
      const names = strings(value, where.at(kind));
      if (mods.value === undefined) fail(where, `a property matcher needs 'value'`);
      const values = list(mods.value).map((v, i) => literal(v, where.at('value').at(i)));
      const matcher: PatternMatcher = { kind, rule, names, values, ...(context ? { context } : {}) };
      for (const n of names) {
        const l = pr.properties.get(n);
        if (l) l.push(matcher);
        else pr.properties.set(n, [matcher]);
      }
      return names.map((n) => ({ words: [n] }));
    }
    case 'string_binding': {
      const name = regex(value, where.at(kind));
      pr.bindings.push({
        kind,
        rule,
        name,
        nameNot: mods.name_not !== undefined ? regexes(mods.name_not, where.at('name_not')) : [],
        ...(mods.value !== undefined ? { value: regex(mods.value, where.at('value')) } : {}),
        valueNot: mods.value_not !== undefined ? regexes(mods.value_not, where.at('value_not')) : [],
      });
      return [{ identifier: name }];
    }
    default: {
      // deep_merge_function
      const name = regex(value, where.at(kind));
      pr.mergeFunctions.push({ kind: 'deep_merge_function', rule, name, unless: mods.unless !== undefined ? regexes(mods.unless, where.at('unless')) : [] });
      return [{ identifier: name }];
    }
  }
}

function ruleMeta(raw: Mapping, where: Where, file: string): RuleMeta {
  const id = raw.id;
  if (typeof id !== 'string' || !/^[a-z0-9][a-z0-9-]*$/.test(id)) fail(where, `'id' must be a lower-case slug (got ${JSON.stringify(id)})`);
  const w: Where = new Where(`${where.text} '${id}'`);
  const mode = raw.mode;
  if (mode !== 'taint' && mode !== 'pattern') fail(w.at('mode'), `expected 'taint' or 'pattern' (got ${JSON.stringify(mode)})`);
  for (const k of Object.keys(raw)) if (!RULE_KEYS[mode].includes(k)) fail(w, `unknown key '${k}' for a ${mode} rule (allowed: ${RULE_KEYS[mode].join(', ')})`);
  const message = raw.message;
  if (typeof message !== 'string' || message.trim() === '') fail(w.at('message'), 'required, a non-empty string');
  const severity = raw.severity;
  if (typeof severity !== 'string' || !(SEVERITIES as readonly string[]).includes(severity)) fail(w.at('severity'), `expected one of ${SEVERITIES.join(', ')}`);
  const cwe = raw.cwe;
  if (cwe !== null && (typeof cwe !== 'string' || !/^CWE-\d+$/.test(cwe))) fail(w.at('cwe'), `expected 'CWE-<number>' or null (got ${JSON.stringify(cwe)})`);
  const title = raw.title ?? message.split(/(?<=[.:])\s/)[0]!.replace(/[.:]$/, '');
  if (typeof title !== 'string') fail(w.at('title'), 'expected a string');
  const subsumedBy = raw.subsumed_by;
  if (subsumedBy !== undefined && (!Array.isArray(subsumedBy) || subsumedBy.length === 0 || !subsumedBy.every((v) => typeof v === 'string'))) fail(w.at('subsumed_by'), 'expected a non-empty list of taint rule ids');
  return { id, mode, title, message: message.trim(), severity: severity as Severity, cwe, file, ...(subsumedBy ? { subsumedBy: subsumedBy as string[] } : {}) };
}

function requireList(raw: Mapping, key: string, where: Where, optional = false): unknown[] {
  const v = raw[key];
  if (v === undefined && optional) return [];
  if (!Array.isArray(v) || (v.length === 0 && !optional)) fail(where.at(key), 'required, a non-empty list of matchers');
  return v;
}

/** Validates and compiles rule files' text. Throws RuleError naming the first problem found. */
export function compileRules(files: RawFile[]): RuleSet {
  const taint = emptyTaint();
  const patterns: PatternRules = { rules: [], calls: new PathIndex(), news: new PathIndex(), properties: new Map(), bindings: [], mergeFunctions: [], needs: [] };
  const byId = new Map<string, RuleMeta>();
  const pendingTaint: PendingTaint[] = [];
  const globalSanitizers: Array<{ raw: unknown; where: Where }> = [];

  for (const file of files) {
    let doc: unknown;
    try {
      doc = parseYaml(file.text);
    } catch (err) {
      throw new RuleError(`${file.name}: invalid YAML: ${(err as Error).message}`);
    }
    const fw = new Where(file.name);
    if (doc === null || doc === undefined) continue;
    if (!isMapping(doc)) fail(fw, 'expected a mapping with rules, propagators or sanitizers');
    for (const k of Object.keys(doc)) if (!['rules', 'propagators', 'sanitizers'].includes(k)) fail(fw, `unknown top-level key '${k}' (allowed: rules, propagators, sanitizers)`);
    for (const [i, raw] of (requireListOrEmpty(doc.propagators, fw.at('propagators'))).entries()) compilePropagator(taint, raw, fw.at('propagators').at(i));
    for (const [i, raw] of (requireListOrEmpty(doc.sanitizers, fw.at('sanitizers'))).entries()) globalSanitizers.push({ raw, where: fw.at('sanitizers').at(i) });
    for (const [i, raw] of (requireListOrEmpty(doc.rules, fw.at('rules'))).entries()) {
      const where = fw.at('rules').at(i);
      if (!isMapping(raw)) fail(where, 'expected a rule mapping');
      const meta = ruleMeta(raw, new Where(`${file.name}: rule`), file.name);
      if (byId.has(meta.id)) throw new RuleError(`${file.name}: rule '${meta.id}': duplicate id (also in ${byId.get(meta.id)!.file})`);
      byId.set(meta.id, meta);
      const rw = new Where(`${file.name}: rule '${meta.id}'`);
      if (meta.mode === 'taint') pendingTaint.push({ meta, raw, where: rw });
      else {
        const rule = patterns.rules.length;
        patterns.rules.push(meta);
        patterns.needs.push(requireList(raw, 'patterns', rw).flatMap((m, j) => compilePattern(patterns, m, rule, rw.at('patterns').at(j))));
      }
    }
  }

  for (const { meta, raw, where } of pendingTaint) {
    const rule = taint.rules.length;
    const bit = 1n << BigInt(rule);
    taint.rules.push(meta);
    taint.sourceNeeds.push(requireList(raw, 'sources', where).flatMap((m, j) => compileSource(taint, m, bit, where.at('sources').at(j))));
    taint.sinkNeeds.push(requireList(raw, 'sinks', where).flatMap((m, j) => compileSink(taint, m, rule, where.at('sinks').at(j))));
    for (const [j, m] of requireList(raw, 'sanitizers', where, true).entries()) compileSanitizer(taint, m, bit, where.at('sanitizers').at(j));
  }
  for (const meta of patterns.rules) {
    for (const id of meta.subsumedBy ?? []) {
      if (byId.get(id)?.mode !== 'taint') throw new RuleError(`${meta.file}: rule '${meta.id}': subsumed_by: '${id}' is not a taint rule`);
    }
  }
  const all = taint.rules.reduce((m, _r, i) => m | (1n << BigInt(i)), 0n);
  for (const { raw, where } of globalSanitizers) compileSanitizer(taint, raw, all, where);
  return { taint, patterns, byId };
}

function requireListOrEmpty(value: unknown, where: Where): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) fail(where, 'expected a list');
  return value;
}

/** The rules shipped with the scanner. */
export const DEFAULT_RULES_DIR = fileURLToPath(new URL('./rules/', import.meta.url));

/** Reads every `*.yaml` / `*.yml` file of a directory (sorted, so ids and bits are stable). */
export function loadRules(dir: string = DEFAULT_RULES_DIR): RuleSet {
  const names = readdirSync(dir).filter((n) => /\.ya?ml$/.test(n)).sort();
  if (names.length === 0) throw new RuleError(`${dir}: no rule files`);
  return compileRules(names.map((name) => ({ name, text: readFileSync(`${dir}/${name}`, 'utf8') })));
}

let cached: RuleSet | undefined;

/** The default rules, loaded once per process (or worker). */
export function defaultRules(): RuleSet {
  cached ??= loadRules();
  return cached;
}
