// Taint tracking over one file's syntax tree (no type checker), intraprocedural within a function
// and through bounded, memoised summaries of the project's own functions (this file's, and with a
// `Project`, those of the relative modules it imports: see "Function summaries" below and
// README-rules.md). One walk serves
// every taint rule — a taint value carries a bit per rule still live, so a sanitizer for one rule
// (path.basename for path traversal) leaves the others (XSS) tainted — and feeds the nodes it
// evaluates to the pattern walker, so pattern rules need no walk of their own.
//
// Precision choices (see README-rules.md, "Taint engine"):
// - Variables are tracked by name per function; blocks share their function's table. A nested
//   function starts from its enclosing function's state where it appears (closures see it); what
//   it assigns to outer variables stays inside it.
// - Statements are processed in order: assigning a clean value clears a variable; an `if` runs
//   both branches on copies and joins them, a branch that always returns/throws is dropped from the
//   join; loop bodies run twice so loop-carried taint (`sql += x` in a loop) is seen.
// - Calls propagate taint through the propagators the rules list (string and array methods,
//   path.join…) and through summaries of the project's functions; other functions return clean
//   values. A database result is not attacker text, and treating it so is the main source of
//   false positives in such tools.
// - Writing tainted data into `obj.x` taints `obj` (weak update); reading `obj.y` then is tainted.
// - A sanitizer call used as a condition (`if (!isValid(x)) return;`) clears its arguments (or its
//   receiver, if the rule says so) where the condition is known true; so does `x === 'literal'`.
import ts from 'typescript';
import { lastName, pathOf, type AliasMap } from './aliases.ts';
import { functionName, isLiteral, nodeText, propertyNameText, skipOuter } from './ast.ts';
import { matchPath, type PathPattern } from './path-pattern.ts';
import { fixedCollection } from './patterns.ts';
import { FileModel, type Project, type ResolvedFunction } from './project.ts';
import { ROUTE_METHODS, type ParamSource, type PropagatorSpec, type SanitizerSpec, type SinkSpec, type TaintRules } from './rules.ts';

export interface TaintOrigin {
  line: number;
  expression: string;
}

/** One step of a source → sink path: a place (file and line) and what happens there. */
export interface TaintStep {
  path: string;
  line: number;
  note: string;
}

interface Taint {
  /** One bit per taint rule still live. */
  rules: bigint;
  origin: TaintOrigin;
  /** Went through string building (concatenation, template, `+=`): what `when: string-built` asks for. */
  built: boolean;
  /** The whole request bag or an object/array literal holding tainted values (`when: not-container`). */
  container: boolean;
  /** Only from `strings: true` sources (path parameters, headers): strings, never query operators. */
  strings?: boolean;
  /** How the value got here: the source first, then the hops that matter (bounded). */
  steps?: readonly TaintStep[] | undefined;
  /** While summarising a function: the parameter this value came from. */
  param?: number | undefined;
}

export interface TaintHit {
  rule: number;
  /** The sink: a call, a `new` or an assignment. */
  node: ts.Node;
  callee: string;
  origin: TaintOrigin;
  functionName: string;
  /** The file the sink is in: this one, or a module whose function the flow was followed into. */
  sf: ts.SourceFile;
  path: string;
  /** Source → sink, each step with its file and line. */
  steps: readonly TaintStep[];
}

/** A parameter → sink flow inside a summarised function. */
interface SummaryHit {
  rule: number;
  node: ts.Node;
  sf: ts.SourceFile;
  path: string;
  callee: string;
  functionName: string;
  /** Carries the parameter (`param`) and the steps from it to the sink. */
  t: Taint;
}

/**
 * What a function does with tainted arguments of a given shape: what its return value carries
 * (relative to its parameters, or from a source of its own) and which parameters reach which sinks.
 */
export interface Summary {
  ret: Taint | undefined;
  hits: SummaryHit[];
  /**
   * A validator: parameter → rule bits its `true` result vouches for (every return is a check that
   * clears the parameter, or a falsy constant): `if (!isSafeName(x)) return` then clears `x`.
   */
  guards?: Map<number, bigint> | undefined;
}

/** Shared by the engines of one analysis (and, through the project, of one scan). */
export interface CallContext {
  project?: Project | undefined;
  memo: Map<string, Summary | undefined>;
  inProgress: Set<string>;
  /** Summaries computed so far; none beyond MAX_SUMMARIES (then calls return clean values again). */
  budget: { summaries: number };
}

export function newCallContext(project?: Project): CallContext {
  return { project, memo: (project?.summaries as Map<string, Summary | undefined> | undefined) ?? new Map(), inProgress: new Set(), budget: { summaries: 0 } };
}

/** Bounds of the interprocedural part (README-rules.md, "Taint engine"). */
export const MAX_SUMMARY_DEPTH = 4;
export const MAX_SUMMARY_HITS = 16;
export const MAX_SUMMARIES = 5000;
export const MAX_STEPS = 12;
/** Local closures run at their call site: nested at most, and runs per engine. */
export const MAX_INLINE_DEPTH = 2;
export const MAX_INLINE_RUNS = 200;
const MAX_PARAMS = 8;

type Vars = Map<string, Taint | undefined>;
interface Clear {
  name: string;
  mask: bigint;
}
interface Guard {
  whenTrue: Clear[];
  whenFalse: Clear[];
}

const ALL = -1n;
const NO_GUARD: Guard = { whenTrue: [], whenFalse: [] };
const MAX_LOOP_DEPTH = 2;
/** Validators that throw rather than return a verdict, so a bare call statement vouches for its arguments. */
const THROWING_VALIDATOR = /^(validateOrReject|assert\w*)$/;
const ROUTE_METHOD = new Set(ROUTE_METHODS);
// What makes a function outside a router call look like a route handler (see `handlerShaped`).
const REQUEST_TYPE = /(^|\.)(\w*Request|Context|\w+Context|Ctx)$/;
const RESPONSE_NAME = /^(res|resp|response|reply|next)$/;
const RESPONSE_TYPE = /(^|\.)(\w*Response|\w*Reply|NextFunction)$/;
// Array methods whose callback receives the receiver's elements (as the given parameter).
const ELEMENT_CALLBACKS = new Map([
  ['forEach', 0], ['map', 0], ['flatMap', 0], ['filter', 0], ['find', 0], ['findLast', 0], ['some', 0], ['every', 0], ['reduce', 1], ['reduceRight', 1],
]);

function union(a: Taint | undefined, b: Taint | undefined): Taint | undefined {
  if (!a) return b;
  if (!b) return a;
  if (a === b) return a;
  const pick = b.origin.line < a.origin.line ? b : a;
  return {
    rules: a.rules | b.rules,
    origin: pick.origin,
    built: a.built || b.built,
    container: a.container && b.container,
    ...(a.strings && b.strings ? { strings: true } : {}),
    ...(pick.steps ? { steps: pick.steps } : {}),
    ...(pick.param !== undefined ? { param: pick.param } : {}),
  };
}

/** Steps joined, keeping the first and the last ones when there are too many. */
function joinSteps(...parts: Array<readonly TaintStep[] | TaintStep | undefined>): TaintStep[] {
  const out: TaintStep[] = [];
  for (const p of parts) {
    if (!p) continue;
    for (const s of Array.isArray(p) ? (p as readonly TaintStep[]) : [p as TaintStep]) {
      const last = out[out.length - 1];
      if (last && last.path === s.path && last.line === s.line && last.note === s.note) continue;
      out.push(s);
    }
  }
  return out.length > MAX_STEPS ? [...out.slice(0, 3), ...out.slice(out.length - (MAX_STEPS - 3))] : out;
}

function without(t: Taint | undefined, mask: bigint): Taint | undefined {
  if (!t) return undefined;
  const rules = t.rules & ~mask;
  if (rules === 0n) return undefined;
  return rules === t.rules ? t : { ...t, rules };
}

function asValue(t: Taint | undefined): Taint | undefined {
  return t && t.container ? { ...t, container: false } : t;
}

function asString(t: Taint | undefined): Taint | undefined {
  return t && (!t.built || t.container) ? { ...t, built: true, container: false } : t;
}

type FunctionNode = ts.FunctionLikeDeclaration;

function isFunctionNode(node: ts.Node): node is ts.ArrowFunction | ts.FunctionExpression {
  return ts.isArrowFunction(node) || ts.isFunctionExpression(node);
}

function terminates(s: ts.Statement): boolean {
  switch (s.kind) {
    case ts.SyntaxKind.ReturnStatement:
    case ts.SyntaxKind.ThrowStatement:
    case ts.SyntaxKind.ContinueStatement:
    case ts.SyntaxKind.BreakStatement:
      return true;
    case ts.SyntaxKind.Block:
      return (s as ts.Block).statements.some(terminates);
    case ts.SyntaxKind.IfStatement: {
      const i = s as ts.IfStatement;
      return i.elseStatement !== undefined && terminates(i.thenStatement) && terminates(i.elseStatement);
    }
    default:
      return false;
  }
}

function hasOptionKey(node: ts.Expression, keys: readonly string[]): boolean {
  const n = skipOuter(node);
  return ts.isObjectLiteralExpression(n) && n.properties.some((p) => p.name !== undefined && keys.includes(propertyNameText(p.name) ?? ''));
}

export class TaintEngine {
  private vars: Vars = new Map();
  private consts = new Map<string, string>();
  private readonly outer: Array<{ vars: Vars; consts: Map<string, string> }> = [];
  private fn = '<module>';
  private loopDepth = 0;
  private readonly hits: TaintHit[] = [];
  private readonly seen = new Set<string>();
  private readonly file: string;
  private readonly ctx: CallContext;
  private fileModel: FileModel | undefined;
  /** Set while summarising a function: its parameter → sink flows and what it returns. */
  private summaryHits: SummaryHit[] | undefined;
  private returned: Taint | undefined;
  /** While summarising: parameter names → index, and what the returns vouch for (null: nothing). */
  private paramIndex: Map<string, number> | undefined;
  private returnGuards: Map<number, bigint> | null | undefined;
  /** Calls of validator functions seen so far, for `guard` (`if (!isSafe(x)) return`). */
  private readonly callGuards = new Map<ts.CallExpression, Map<number, bigint>>();

  constructor(
    private readonly sf: ts.SourceFile,
    private readonly rules: TaintRules,
    private readonly aliases: AliasMap,
    /** Rules the prefilter left active for this file. */
    private readonly active: bigint,
    /**
     * Called with every node pattern rules look at, and the name of the function it is in, so the
     * pattern rules need no walk of their own (nodes in loops may come twice).
     */
    private visitor?: (node: ts.Node, fn: string) => void,
    /** Summaries and the project's modules; a context of its own (this file only) by default. */
    ctx?: CallContext,
    model?: FileModel,
    /** How many summaries are being computed around this one. */
    private readonly depth = 0,
  ) {
    this.ctx = ctx ?? newCallContext();
    this.fileModel = model;
    this.file = model?.path ?? sf.fileName;
  }

  run(): TaintHit[] {
    this.statements(this.sf.statements);
    return this.hits;
  }

  private get model(): FileModel {
    if (!this.fileModel) {
      this.fileModel = new FileModel(this.file, this.sf, this.aliases);
      this.ctx.project?.adopt(this.fileModel);
    }
    return this.fileModel;
  }

  private lineOf(node: ts.Node): number {
    return this.sf.getLineAndCharacterOfPosition(node.getStart(this.sf)).line + 1;
  }

  /** A hop worth showing on the path: an assignment into a variable, a return. */
  private hop(t: Taint | undefined, node: ts.Node, note: string): Taint | undefined {
    if (!t) return t;
    const line = this.lineOf(node);
    const last = t.steps?.[t.steps.length - 1];
    if (last && last.line === line && last.path === this.file) return t;
    return { ...t, steps: joinSteps(t.steps, { path: this.file, line, note }) };
  }

  // ---- function summaries ----
  // A call passing tainted data to a project function no rule names runs that function's body in
  // an engine of its own, parameters seeded with the arguments' shape and tagged with their index.
  // What reaches a sink or the return is rebased on the caller's arguments. Bounded: memoised per
  // (file, function, argument shape), recursion guard, MAX_SUMMARY_DEPTH, MAX_SUMMARY_HITS,
  // MAX_SUMMARIES.

  /** Summarises `fn` for arguments of this shape: run its body with the parameters seeded. */
  private summarizeHere(fn: ts.FunctionLikeDeclaration, args: ReadonlyArray<Taint | undefined>): Summary {
    this.summaryHits = [];
    this.returned = undefined;
    // The module's string constants, for prefix sanitizers (`BASE_URL + id`).
    for (const st of this.sf.statements) {
      if (!ts.isVariableStatement(st) || (st.declarationList.flags & ts.NodeFlags.Const) === 0) continue;
      for (const d of st.declarationList.declarations) {
        if (!ts.isIdentifier(d.name) || !d.initializer) continue;
        const lead = this.leading(d.initializer);
        if (lead?.complete) this.consts.set(d.name.text, lead.text);
      }
    }
    const label = functionName(fn, this.sf, this.aliases);
    this.paramIndex = new Map();
    fn.parameters.forEach((p, j) => ts.isIdentifier(p.name) && this.paramIndex!.set(p.name.text, j));
    this.enter(fn, label, (params) =>
      params.forEach((p, j) => {
        let idx = j;
        let a = args[j];
        if (p.dotDotDotToken) {
          // A rest parameter: the first tainted argument from here on.
          idx = args.findIndex((x, k) => k >= j && x !== undefined);
          a = idx >= 0 ? args[idx] : undefined;
        }
        const name = nodeText(p.name, this.sf, 40);
        const seed: Taint | undefined = a && {
          rules: a.rules,
          built: a.built,
          container: a.container,
          ...(a.strings ? { strings: true } : {}),
          origin: { line: this.lineOf(p), expression: name },
          steps: [{ path: this.file, line: this.lineOf(p), note: `parameter ${name} of ${label}` }],
          param: idx,
        };
        this.bindParam(p, seed);
      }),
    );
    // A validator has a block body whose every return is a check (an arrow's expression counts too).
    const guards = this.returnGuards ? this.returnGuards : undefined;
    return { ret: this.returned, hits: this.summaryHits, ...(guards ? { guards } : {}) };
  }

  private noteReturn(t: Taint | undefined, node: ts.Node, e?: ts.Expression): void {
    // A return of a closure being run at its call site (`inlineClosure`).
    if (this.inlineReturn && this.outer.length === this.inlineReturn.depth) {
      if (t) this.inlineReturn.t = union(this.inlineReturn.t, this.hop(t, node, `return of ${this.inlineReturn.label} at its call`));
      return;
    }
    if (!this.summaryHits || this.outer.length !== 1) return;
    if (this.returnGuards !== null) this.noteReturnGuard(e);
    if (!t) return;
    this.returned = union(this.returned, this.hop(t, node, 'return'));
  }

  /** Intersects what this return vouches for with the other returns'. */
  private noteReturnGuard(e: ts.Expression | undefined): void {
    const x = e && skipOuter(e);
    // `return false` / `return null` claim nothing.
    if (!x || (x.kind === ts.SyntaxKind.FalseKeyword || x.kind === ts.SyntaxKind.NullKeyword || (ts.isNumericLiteral(x) && x.text === '0'))) return;
    const here = new Map<number, bigint>();
    if (this.paramIndex) {
      for (const c of this.guard(x).whenTrue) {
        const i = this.paramIndex.get(c.name);
        if (i !== undefined) here.set(i, (here.get(i) ?? 0n) | c.mask);
      }
    }
    if (this.returnGuards === undefined) {
      this.returnGuards = here.size ? here : null;
      return;
    }
    const prev = this.returnGuards!;
    for (const [i, m] of prev) {
      const both = m & (here.get(i) ?? 0n);
      if (both) prev.set(i, both);
      else prev.delete(i);
    }
    if (prev.size === 0) this.returnGuards = null;
  }

  /** The project function a call names: a function of this file, `this.m()`, or an import. */
  private resolve(callee: ts.Expression): ResolvedFunction | undefined {
    const m = this.model;
    const project = this.ctx.project;
    const c = skipOuter(callee);
    const imported = (local: string, member: string | undefined): ResolvedFunction | undefined => {
      const imp = project && m.imports.get(local);
      if (!imp || !project) return undefined;
      const mod = project.moduleOf(m, imp.module);
      if (!mod) return undefined;
      if (member === undefined) return project.exported(mod, imp.name);
      // `ns.f()` for `import * as ns` / `require('./x')`; `d.f()` for a default-exported object.
      return imp.name === '*' || imp.name === 'default' ? project.exported(mod, member) : undefined;
    };
    // `d.m()` for `d = new X(…)` (or `this.d = new X(…)`), X a class or constructor function of
    // this file or imported from a project module: X's method m (class method, `X.prototype.m`,
    // `this.m = …` in X's body).
    const instanceMethod = (key: string): ResolvedFunction | undefined => {
      const cls = m.instances.get(key);
      if (!cls || !ts.isPropertyAccessExpression(c)) return undefined;
      const member = c.name.text;
      const node = m.local(`${cls}.${member}`);
      if (node) return { model: m, node };
      const imp = project && m.imports.get(cls);
      if (!imp || !project) return undefined;
      const mod = project.moduleOf(m, imp.module);
      const named = mod && project.exportedName(mod, imp.name);
      const target = named?.model.local(`${named.name}.${member}`);
      return named && target ? { model: named.model, node: target } : undefined;
    };
    if (ts.isIdentifier(c)) {
      const local = m.local(c.text);
      return local ? { model: m, node: local } : imported(c.text, undefined);
    }
    if (ts.isPropertyAccessExpression(c)) {
      const base = skipOuter(c.expression);
      const member = c.name.text;
      if (base.kind === ts.SyntaxKind.ThisKeyword) {
        let n: ts.Node | undefined = c.parent;
        while (n && !ts.isClassLike(n)) n = n.parent;
        const cls = n && (n as ts.ClassLikeDeclaration).name?.text;
        const node = cls ? m.local(`${cls}.${member}`) : undefined;
        return node ? { model: m, node } : undefined;
      }
      if (ts.isIdentifier(base)) {
        const node = m.local(`${base.text}.${member}`);
        return node ? { model: m, node } : (imported(base.text, member) ?? instanceMethod(base.text));
      }
      // `this.users.find(x)` with `constructor(private users: UsersService)` or a field
      // `users: UsersService` (dependency injection): the method of that class, here or imported.
      if (ts.isPropertyAccessExpression(base) && skipOuter(base.expression).kind === ts.SyntaxKind.ThisKeyword) {
        const cls = injectedClass(c, base.name.text);
        if (!cls) return instanceMethod(`this.${base.name.text}`);
        const node = m.local(`${cls}.${member}`);
        if (node) return { model: m, node };
        const imp = project && m.imports.get(cls);
        if (!imp || !project || imp.name === '*' || imp.name === 'default') return undefined;
        const mod = project.moduleOf(m, imp.module);
        const target = mod?.local(`${imp.name}.${member}`);
        return mod && target ? { model: mod, node: target } : undefined;
      }
    }
    return undefined;
  }

  private summary(target: ResolvedFunction, args: ReadonlyArray<Taint | undefined>): Summary | undefined {
    const sig = args.map((t) => (t ? `${t.rules.toString(36)}${t.built ? 'b' : ''}${t.container ? 'c' : ''}${t.strings ? 's' : ''}` : '')).join(',');
    const key = `${target.model.path}:${target.node.pos}:${sig}`;
    const ctx = this.ctx;
    if (ctx.memo.has(key)) return ctx.memo.get(key);
    // Recursion, or too deep / too many: the call returns a clean value, as for unknown functions.
    if (ctx.inProgress.has(key) || this.depth >= MAX_SUMMARY_DEPTH || ctx.budget.summaries >= MAX_SUMMARIES) return undefined;
    ctx.inProgress.add(key);
    ctx.budget.summaries++;
    let sum: Summary | undefined;
    try {
      const all = (1n << BigInt(this.rules.rules.length)) - 1n;
      const engine = new TaintEngine(target.model.sf, this.rules, target.model.aliases, all, undefined, ctx, target.model, this.depth + 1);
      sum = engine.summarizeHere(target.node, args);
    } finally {
      ctx.inProgress.delete(key);
    }
    ctx.memo.set(key, sum);
    return sum;
  }

  // ---- local closures ----
  // `const where = () => ({ $where: `…${threshold}…` }); find(where())`: a function declared inside
  // a function, called with no tainted arguments, can still return (or sink) its enclosing
  // function's tainted variables. It runs again at its call site, on the current variable table
  // (what it assigns stays inside it), and its returns are the call's value. Bounded: not while
  // it is already running (recursion), MAX_INLINE_DEPTH nested, MAX_INLINE_RUNS per engine, and
  // only when some variable in scope is tainted.
  private inlineReturn: { depth: number; label: string; t: Taint | undefined } | undefined;
  private readonly inlining = new Set<ts.Node>();
  private inlineRuns = 0;

  /** The function `name` names at `call`: declared in a block of an enclosing function, not shadowed by a parameter. */
  private localClosure(call: ts.Node, name: string): FunctionNode | undefined {
    let found: FunctionNode | undefined;
    let n: ts.Node | undefined = call.parent;
    for (; n && !ts.isSourceFile(n); n = n.parent) {
      if (!found && ts.isBlock(n)) {
        for (const st of n.statements) {
          if (ts.isFunctionDeclaration(st) && st.name?.text === name) found = st.body ? st : undefined;
          else if (ts.isVariableStatement(st)) {
            for (const d of st.declarationList.declarations) {
              if (!ts.isIdentifier(d.name) || d.name.text !== name) continue;
              const init = d.initializer && skipOuter(d.initializer);
              if (!init || !isFunctionNode(init)) return undefined;
              found = init;
            }
          }
          if (found) break;
        }
      }
      if (ts.isFunctionLike(n)) {
        // A parameter of that name between the call and the declaration shadows it.
        if (!found && n.parameters.some((p) => ts.isIdentifier(p.name) && p.name.text === name)) return undefined;
        // Declared inside this function: a closure.
        if (found) return found;
      }
    }
    return undefined;
  }

  private anyTainted(): boolean {
    for (const t of this.vars.values()) if (t) return true;
    for (const o of this.outer) for (const t of o.vars.values()) if (t) return true;
    return false;
  }

  private inlineClosure(fn: FunctionNode): Taint | undefined {
    if (this.inlining.has(fn) || this.inlining.size >= MAX_INLINE_DEPTH || this.inlineRuns >= MAX_INLINE_RUNS || !this.anyTainted()) return undefined;
    this.inlineRuns++;
    this.inlining.add(fn);
    const savedVisitor = this.visitor;
    const savedReturn = this.inlineReturn;
    // Pattern rules saw its nodes where it was declared.
    this.visitor = undefined;
    const label = functionName(fn, this.sf, this.aliases);
    const ret = { depth: this.outer.length + 1, label, t: undefined as Taint | undefined };
    this.inlineReturn = ret;
    try {
      this.enter(fn, label);
    } finally {
      this.inlineReturn = savedReturn;
      this.visitor = savedVisitor;
      this.inlining.delete(fn);
    }
    return ret.t;
  }

  /** `f(tainted)` for a function with a summary: its sinks report here, its return carries taint. */
  private applySummary(node: ts.CallExpression, args: ReadonlyArray<Taint | undefined>, resolved?: ResolvedFunction): Taint | undefined {
    if (args.length > MAX_PARAMS * 2) return undefined;
    const target = resolved ?? this.resolve(node.expression);
    if (!target || !target.node.body) return undefined;
    const sum = this.summary(target, args);
    if (!sum) return undefined;
    const call: TaintStep = { path: this.file, line: this.lineOf(node), note: `call ${nodeText(node.expression, this.sf, 60)}` };
    const rebase = (inner: Taint): Taint | undefined => {
      if (inner.param === undefined) return inner; // from a source inside the callee
      const a = args[inner.param];
      if (!a) return undefined;
      const rules = inner.rules & a.rules;
      if (rules === 0n) return undefined;
      return { ...inner, rules, origin: a.origin, param: a.param, steps: joinSteps(a.steps, call, inner.steps) };
    };
    if (sum.guards) this.callGuards.set(node, sum.guards);
    for (const h of sum.hits) {
      const t = rebase(h.t);
      if (t && (this.active & (1n << BigInt(h.rule))) !== 0n) this.record(h.rule, h.node, h.sf, h.path, h.callee, t, t.steps ?? [], h.functionName);
    }
    return sum.ret && rebase(sum.ret);
  }

  // ---- variables ----

  private outerLookup(name: string): Taint | undefined {
    for (let i = this.outer.length - 1; i >= 0; i--) if (this.outer[i]!.vars.has(name)) return this.outer[i]!.vars.get(name);
    return undefined;
  }

  private lookup(name: string): Taint | undefined {
    return this.vars.has(name) ? this.vars.get(name) : this.outerLookup(name);
  }

  /**
   * The table holds tainted variables only, plus clean ones that shadow a tainted outer name, so
   * the copies made at every branch stay small even in bundles with thousands of locals.
   * Assigning a variable of an enclosing function from a nested one writes a local copy: what a
   * callback does to outer variables stays in the callback, so one route handler mutating a
   * module-level object does not taint it for the next (that would be interprocedural).
   */
  private set(name: string, t: Taint | undefined): void {
    if (t) this.vars.set(name, t);
    else if (this.outerLookup(name)) this.vars.set(name, undefined);
    else this.vars.delete(name);
  }

  private constant(name: string): string | undefined {
    const own = this.consts.get(name);
    if (own !== undefined) return own;
    for (let i = this.outer.length - 1; i >= 0; i--) {
      const v = this.outer[i]!.consts.get(name);
      if (v !== undefined) return v;
    }
    return undefined;
  }

  private snapshot(): Vars {
    return new Map(this.vars);
  }

  /** Union per variable; a state without a variable sees the enclosing functions' value. */
  private join(states: Vars[]): Vars {
    const out: Vars = new Map();
    for (const s of states) {
      for (const k of s.keys()) {
        if (out.has(k)) continue;
        let t: Taint | undefined;
        for (const other of states) t = union(t, other.has(k) ? other.get(k) : this.outerLookup(k));
        if (t || this.outerLookup(k)) out.set(k, t);
      }
    }
    return out;
  }

  private applyClears(clears: Clear[]): void {
    for (const c of clears) {
      const t = this.lookup(c.name);
      if (t) this.set(c.name, without(t, c.mask));
    }
  }

  // ---- reporting ----

  private origin(node: ts.Node, mask: bigint, container: boolean, strings = false): Taint {
    const line = this.lineOf(node);
    const expression = nodeText(node, this.sf);
    return { rules: mask, origin: { line, expression }, built: false, container, ...(strings ? { strings } : {}), steps: [{ path: this.file, line, note: `source ${nodeText(node, this.sf, 60)}` }] };
  }

  private report(rule: number, node: ts.Node, callee: string, t: Taint): void {
    const steps = joinSteps(t.steps, { path: this.file, line: this.lineOf(node), note: `sink ${callee}` });
    this.record(rule, node, this.sf, this.file, callee, t, steps, this.fn);
  }

  private record(rule: number, node: ts.Node, sf: ts.SourceFile, path: string, callee: string, t: Taint, steps: readonly TaintStep[], fn: string): void {
    if (this.summaryHits) {
      // Summarising: only what a parameter brings matters (the function's own sources are
      // reported when its file is analysed).
      if (t.param === undefined || this.summaryHits.length >= MAX_SUMMARY_HITS) return;
      const key = `${path}:${rule}:${node.pos}:${t.param}`;
      if (this.seen.has(key)) return;
      this.seen.add(key);
      this.summaryHits.push({ rule, node, sf, path, callee, functionName: fn, t: { ...t, steps } });
      return;
    }
    const key = `${path}:${rule}:${node.pos}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.hits.push({ rule, node, callee, origin: t.origin, functionName: fn, sf, path, steps });
  }

  private checkSink(spec: SinkSpec, node: ts.Node, callee: string, argNodes: readonly ts.Expression[], argTaints: ReadonlyArray<Taint | undefined>): void {
    const bit = 1n << BigInt(spec.rule);
    if ((this.active & bit) === 0n) return;
    if (spec.unlessOption && argNodes.some((a) => hasOptionKey(a, spec.unlessOption!))) return;
    if (spec.withArg !== undefined) {
      const w = argNodes[spec.withArg];
      if (!w || isLiteral(w) || isFunctionNode(skipOuter(w))) return;
    }
    if (spec.resultUsed && !resultDecides(node)) return;
    if (spec.unlessCall && this.calledAlongside(node, spec.unlessCall, argNodes)) return;
    const positions = spec.args === 'any' ? argTaints.keys() : spec.args;
    for (const i of positions) {
      const t = argTaints[i];
      const arg = argNodes[i];
      if (!t || !arg || (t.rules & bit) === 0n) continue;
      if (spec.when === 'string-built' && !t.built) continue;
      // An object: a literal holding tainted values, the request bag or a variable holding one.
      // A plain value (`findOne(req.params.id)`) cannot carry query operators.
      if (spec.when === 'object' && (!t.container || (t.strings && !t.built))) continue;
      if (spec.when === 'not-container') {
        const a = skipOuter(arg);
        if (t.container || ts.isObjectLiteralExpression(a) || ts.isArrayLiteralExpression(a)) continue;
      }
      this.report(spec.rule, node, callee, t);
      return;
    }
  }

  /** The function around a sink also calls one of `paths` with one of the sink's arguments (`jwt.verify(token, key)`). */
  private calledAlongside(node: ts.Node, paths: readonly PathPattern[], argNodes: readonly ts.Expression[]): boolean {
    const texts = new Set(argNodes.map((a) => skipOuter(a).getText(this.sf)));
    let scope: ts.Node = node;
    while (scope.parent && !ts.isFunctionLike(scope) && !ts.isSourceFile(scope)) scope = scope.parent;
    let found = false;
    const walk = (n: ts.Node): void => {
      if (found) return;
      if (n !== node && ts.isCallExpression(n)) {
        const path = pathOf(n.expression, this.aliases);
        if (path && paths.some((p) => matchPath(p, path)) && n.arguments.some((a) => texts.has(skipOuter(a).getText(this.sf)))) {
          found = true;
          return;
        }
      }
      ts.forEachChild(n, walk);
    };
    walk(scope);
    return found;
  }

  // ---- functions and classes ----

  private enter(node: FunctionNode, name: string, params?: (p: ts.NodeArray<ts.ParameterDeclaration>) => void): void {
    if (!node.body) return;
    this.visitor?.(node, this.fn);
    this.outer.push({ vars: this.vars, consts: this.consts });
    const savedFn = this.fn;
    const savedLoop = this.loopDepth;
    this.vars = new Map();
    this.consts = new Map();
    this.fn = savedFn === '<module>' ? name : `${savedFn} > ${name}`;
    this.loopDepth = 0;
    try {
      if (this.visitor) for (const p of node.parameters) this.visitor(p, this.fn);
      // Parameter decorators (`@Query('id', ParseIntPipe)`): plain calls, for the pattern rules.
      for (const p of node.parameters) for (const d of (ts.canHaveDecorators(p) ? ts.getDecorators(p) : undefined) ?? []) this.expr(d.expression);
      // Parameters shadow outer names: clean unless seeded (route handlers, element callbacks).
      if (params) params(node.parameters);
      else for (const p of node.parameters) this.bindParam(p, undefined);
      if (ts.isBlock(node.body)) this.statements(node.body.statements);
      else this.noteReturn(this.expr(node.body), node.body, node.body);
    } finally {
      const restored = this.outer.pop()!;
      this.vars = restored.vars;
      this.consts = restored.consts;
      this.fn = savedFn;
      this.loopDepth = savedLoop;
    }
  }

  private bindParam(p: ts.ParameterDeclaration, t: Taint | undefined): void {
    const init = p.initializer ? this.expr(p.initializer) : undefined;
    this.bind(p.name, union(t, init), undefined);
  }

  private functionLiteral(node: FunctionNode): void {
    const label = functionName(node, this.sf, this.aliases);
    const seeded = this.callbackSeeds.get(node) ?? this.paramSourceTaints(node);
    if (seeded) this.enter(node, label, (params) => params.forEach((p, j) => this.bindParam(p, seeded[j])));
    else if (this.handlerShaped(node)) this.enterHandler(node, label);
    else this.enter(node, label);
  }

  /** Callbacks whose parameters are `callback_param` sources, found at the call they are passed to. */
  private readonly callbackSeeds = new Map<ts.Node, Array<Taint | undefined>>();

  private seedCallbacks(node: ts.CallExpression): void {
    const path = pathOf(node.expression, this.aliases);
    if (!path) return;
    for (const spec of this.rules.callbackSources.match(path)) {
      const mask = spec.mask & this.active;
      if (!mask) continue;
      if (!spec.argMatches.every(([i, re]) => {
        const a = node.arguments[i];
        const e = a && skipOuter(a);
        return e !== undefined && ts.isStringLiteralLike(e) && re.test(e.text);
      })) continue;
      const fns: FunctionNode[] = [];
      for (const a of node.arguments) {
        const e = skipOuter(a);
        if (!spec.options) {
          if (isFunctionNode(e)) fns.push(e);
        } else if (ts.isObjectLiteralExpression(e)) {
          for (const p of e.properties) {
            const key = p.name ? propertyNameText(p.name) : undefined;
            if (key === undefined || !spec.options.includes(key)) continue;
            if (ts.isMethodDeclaration(p)) fns.push(p);
            else if (ts.isPropertyAssignment(p) && isFunctionNode(skipOuter(p.initializer))) fns.push(skipOuter(p.initializer) as FunctionNode);
          }
        }
      }
      for (const f of fns) {
        const seeds = this.callbackSeeds.get(f) ?? [];
        for (const j of spec.params) {
          const p = f.parameters[j];
          if (!p) continue;
          const t = this.origin(p.name, mask, true, spec.strings);
          seeds[j] = seeds[j] ? { ...seeds[j]!, rules: seeds[j]!.rules | mask } : t;
        }
        this.callbackSeeds.set(f, seeds);
      }
    }
  }

  /**
   * `decorated_param` / `function_param` sources: the taint each parameter starts with, or nothing
   * when no parameter of this function is a source.
   */
  private paramSourceTaints(node: FunctionNode): Array<Taint | undefined> | undefined {
    const specs = this.rules.paramSources;
    if (specs.length === 0 || node.parameters.length === 0) return undefined;
    let out: Array<Taint | undefined> | undefined;
    const add = (j: number, p: ts.ParameterDeclaration, mask: bigint, strings: boolean, container: boolean): void => {
      mask &= this.active;
      if (!mask) return;
      out ??= [];
      const prev = out[j];
      const t = this.origin(p.name, mask, container, strings && (!prev || prev.strings === true));
      out[j] = prev ? { ...t, rules: prev.rules | mask, container: prev.container || container } : t;
    };
    let fnSelected: ((s: Extract<ParamSource, { kind: 'function' }>) => boolean) | undefined;
    for (const spec of specs) {
      if (spec.kind === 'decorated') {
        node.parameters.forEach((p, j) => {
          for (const d of (ts.canHaveDecorators(p) ? ts.getDecorators(p) : undefined) ?? []) {
            const call = ts.isCallExpression(d.expression) ? d.expression : undefined;
            const name = lastName(call ? call.expression : d.expression, this.aliases);
            if (!name || !spec.decorators.has(name)) continue;
            const args = call?.arguments ?? [];
            // A pipe that converts or rejects (`@Param('id', ParseIntPipe)`, `new ParseUUIDPipe()`).
            const piped = args.some((a) => {
              const e = skipOuter(a);
              const n = ts.isNewExpression(e) ? lastName(e.expression, this.aliases) : ts.isIdentifier(e) || ts.isPropertyAccessExpression(e) ? lastName(e, this.aliases) : undefined;
              return n !== undefined && spec.unlessArg.has(n);
            });
            if (piped) continue;
            // No argument, or only pipes: the whole bag (`@Body() dto`); a name picks one value.
            const named = args.length > 0 && ts.isStringLiteralLike(skipOuter(args[0]!));
            add(j, p, spec.mask, spec.strings, !named);
          }
        });
      } else {
        fnSelected ??= this.functionSelector(node);
        if (!fnSelected(spec)) continue;
        node.parameters.forEach((p, j) => {
          if (spec.index === 'any' || spec.index.includes(j)) add(j, p, spec.mask, spec.strings, true);
        });
      }
    }
    return out;
  }

  /** Which `function_param` selections (export name, file, directive) a function meets. */
  private functionSelector(node: FunctionNode): (s: Extract<ParamSource, { kind: 'function' }>) => boolean {
    const directives = (stmts: readonly ts.Statement[] | undefined): string[] => {
      const out: string[] = [];
      for (const st of stmts ?? []) {
        if (ts.isExpressionStatement(st) && ts.isStringLiteral(st.expression)) out.push(st.expression.text);
        else break;
      }
      return out;
    };
    const own = node.body && ts.isBlock(node.body) ? directives(node.body.statements) : [];
    const fileDirectives = directives(this.sf.statements);
    const exportedAs = exportName(node);
    return (s) => {
      if (s.file && !s.file.test(this.file.replace(/\\/g, '/'))) return false;
      const exportOk = exportedAs !== undefined && (!s.exported || s.exported.has('*') || s.exported.has(exportedAs));
      if (s.directive) {
        // Its own directive marks the function (an inline server action); the file's, its exports.
        if (own.includes(s.directive)) return !s.exported || exportOk;
        return fileDirectives.includes(s.directive) && exportOk;
      }
      return exportOk;
    };
  }

  /** Enters a route handler: its destructured first parameter holds request data. */
  private enterHandler(node: FunctionNode, label: string): void {
    this.enter(node, label, (params) => params.forEach((p, j) => (j === 0 && ts.isObjectBindingPattern(p.name) ? this.bindRouteParam(p.name) : this.bindParam(p, undefined))));
  }

  /**
   * A function not passed straight to a router that still looks like a route handler, so that
   * handlers returned from factories (`return ({ query }: Request, res: Response) => …`) or
   * exported on their own keep their request data: the first parameter is destructured and names
   * a request field, and either that parameter is typed as a request or context, or the next one
   * is the response (`res`, `reply`, typed `Response`) or `next`.
   */
  private handlerShaped(node: FunctionNode): boolean {
    if (this.rules.routeParams.size === 0) return false;
    const [first, second] = node.parameters;
    if (!first || !ts.isObjectBindingPattern(first.name)) return false;
    const names = (p: ts.ObjectBindingPattern): boolean =>
      p.elements.some((el) => {
        if (el.dotDotDotToken) return false;
        const key = propertyNameText(el.propertyName ?? el.name) ?? '';
        return this.rules.routeParams.has(key) || (key === 'request' && ts.isObjectBindingPattern(el.name) && names(el.name));
      });
    if (!names(first.name)) return false;
    const typeName = (t: ts.TypeNode | undefined): string => (t && ts.isTypeReferenceNode(t) ? t.typeName.getText(this.sf) : '');
    if (REQUEST_TYPE.test(typeName(first.type))) return true;
    if (!second) return false;
    // A declared type decides (`res: number` is no response); untyped or `any`, the name does.
    if (second.type && second.type.kind !== ts.SyntaxKind.AnyKeyword) return RESPONSE_TYPE.test(typeName(second.type));
    return ts.isIdentifier(second.name) && RESPONSE_NAME.test(second.name.text);
  }

  private classLike(node: ts.ClassLikeDeclaration): void {
    for (const d of ts.getDecorators(node) ?? []) this.expr(d.expression);
    for (const h of node.heritageClauses ?? []) for (const t of h.types) this.expr(t.expression);
    for (const m of node.members) {
      if (ts.canHaveDecorators(m)) for (const d of ts.getDecorators(m) ?? []) this.expr(d.expression);
      if (m.name && ts.isComputedPropertyName(m.name)) this.expr(m.name.expression);
      if (ts.isPropertyDeclaration(m)) {
        this.visitor?.(m, this.fn);
        if (m.initializer) {
          if (isFunctionNode(m.initializer)) this.functionLiteral(m.initializer);
          else this.expr(m.initializer);
        }
      } else if (ts.isMethodDeclaration(m) || ts.isConstructorDeclaration(m) || ts.isGetAccessor(m) || ts.isSetAccessor(m)) {
        this.functionLiteral(m);
      } else if (ts.isClassStaticBlockDeclaration(m)) {
        this.statements(m.body.statements);
      }
    }
  }

  // ---- statements ----

  private statements(list: readonly ts.Statement[]): void {
    for (const s of list) this.stmt(s);
  }

  private stmt(node: ts.Statement): void {
    switch (node.kind) {
      case ts.SyntaxKind.Block:
        this.statements((node as ts.Block).statements);
        return;
      case ts.SyntaxKind.VariableStatement:
        this.declarations((node as ts.VariableStatement).declarationList);
        return;
      case ts.SyntaxKind.ExpressionStatement: {
        const e = (node as ts.ExpressionStatement).expression;
        this.expr(e);
        // `await validateOrReject(dto);`: a validation whose result is dropped throws on bad input.
        let c = skipOuter(e);
        if (ts.isAwaitExpression(c)) c = skipOuter(c.expression);
        if (ts.isCallExpression(c) && THROWING_VALIDATOR.test(lastName(c.expression, this.aliases) ?? '')) this.applyClears(this.guard(c).whenTrue);
        return;
      }
      case ts.SyntaxKind.IfStatement:
        this.ifStatement(node as ts.IfStatement);
        return;
      case ts.SyntaxKind.ReturnStatement: {
        const e = (node as ts.ReturnStatement).expression;
        if (e) this.noteReturn(this.expr(e), node, e);
        return;
      }
      case ts.SyntaxKind.ThrowStatement: {
        const e = (node as ts.ThrowStatement).expression;
        if (e) this.expr(e);
        return;
      }
      case ts.SyntaxKind.ForStatement: {
        const f = node as ts.ForStatement;
        if (f.initializer) {
          if (ts.isVariableDeclarationList(f.initializer)) this.declarations(f.initializer);
          else this.expr(f.initializer);
        }
        this.loop(() => {
          if (f.condition) this.expr(f.condition);
          this.stmt(f.statement);
          if (f.incrementor) this.expr(f.incrementor);
        });
        return;
      }
      case ts.SyntaxKind.ForOfStatement:
      case ts.SyntaxKind.ForInStatement: {
        const f = node as ts.ForOfStatement | ts.ForInStatement;
        const t = asValue(this.expr(f.expression));
        this.loop(() => {
          if (ts.isVariableDeclarationList(f.initializer)) {
            for (const d of f.initializer.declarations) this.bind(d.name, t, undefined);
          } else this.assign(f.initializer, t);
          this.stmt(f.statement);
        });
        return;
      }
      case ts.SyntaxKind.WhileStatement:
      case ts.SyntaxKind.DoStatement: {
        const w = node as ts.WhileStatement | ts.DoStatement;
        this.loop(() => {
          this.expr(w.expression);
          this.stmt(w.statement);
        });
        return;
      }
      case ts.SyntaxKind.SwitchStatement:
        this.switchStatement(node as ts.SwitchStatement);
        return;
      case ts.SyntaxKind.TryStatement:
        this.tryStatement(node as ts.TryStatement);
        return;
      case ts.SyntaxKind.LabeledStatement:
        this.stmt((node as ts.LabeledStatement).statement);
        return;
      case ts.SyntaxKind.FunctionDeclaration:
        this.functionLiteral(node as ts.FunctionDeclaration);
        return;
      case ts.SyntaxKind.ClassDeclaration:
        this.classLike(node as ts.ClassDeclaration);
        return;
      case ts.SyntaxKind.ExportAssignment:
        this.expr((node as ts.ExportAssignment).expression);
        return;
      case ts.SyntaxKind.ModuleDeclaration: {
        const body = (node as ts.ModuleDeclaration).body;
        if (body && ts.isModuleBlock(body)) this.statements(body.statements);
        return;
      }
      case ts.SyntaxKind.ImportDeclaration:
      case ts.SyntaxKind.ImportEqualsDeclaration:
      case ts.SyntaxKind.ExportDeclaration:
      case ts.SyntaxKind.InterfaceDeclaration:
      case ts.SyntaxKind.TypeAliasDeclaration:
      case ts.SyntaxKind.EnumDeclaration:
      case ts.SyntaxKind.EmptyStatement:
      case ts.SyntaxKind.BreakStatement:
      case ts.SyntaxKind.ContinueStatement:
      case ts.SyntaxKind.DebuggerStatement:
        return;
      default:
        this.generic(node);
    }
  }

  private declarations(list: ts.VariableDeclarationList): void {
    const isConst = (list.flags & ts.NodeFlags.Const) !== 0;
    for (const d of list.declarations) {
      this.visitor?.(d, this.fn);
      if (!d.initializer) {
        this.bind(d.name, undefined, undefined);
        continue;
      }
      let t = isFunctionNode(d.initializer) ? (this.functionLiteral(d.initializer), undefined) : this.expr(d.initializer);
      if (t && ts.isIdentifier(d.name)) t = this.hop(t, d, `${d.name.text} = …`);
      this.bind(d.name, t, t ? undefined : pathOf(d.initializer, this.aliases));
      if (isConst && ts.isIdentifier(d.name) && !t) {
        const lead = this.leading(d.initializer);
        if (lead?.complete) this.consts.set(d.name.text, lead.text);
      }
    }
  }

  private loop(body: () => void): void {
    if (this.loopDepth >= MAX_LOOP_DEPTH) {
      body();
      return;
    }
    this.loopDepth++;
    const before = this.snapshot();
    body();
    this.vars = this.join([before, this.vars]);
    // Second pass: what the first left tainted reaches the top of the body again.
    body();
    this.vars = this.join([before, this.vars]);
    this.loopDepth--;
  }

  private ifStatement(node: ts.IfStatement): void {
    this.expr(node.expression);
    const guard = this.guard(node.expression);
    const before = this.snapshot();
    this.applyClears(guard.whenTrue);
    this.stmt(node.thenStatement);
    const afterThen = this.vars;
    this.vars = before;
    this.applyClears(guard.whenFalse);
    if (node.elseStatement) this.stmt(node.elseStatement);
    const thenEnds = terminates(node.thenStatement);
    const elseEnds = node.elseStatement !== undefined && terminates(node.elseStatement);
    if (thenEnds && !elseEnds) return; // continue with the else state
    if (elseEnds && !thenEnds) this.vars = afterThen;
    else this.vars = this.join([afterThen, this.vars]);
  }

  private switchStatement(node: ts.SwitchStatement): void {
    this.expr(node.expression);
    const subject = skipOuter(node.expression);
    const before = this.snapshot();
    const outs: Vars[] = [];
    let hasDefault = false;
    for (const clause of node.caseBlock.clauses) {
      this.vars = new Map(before);
      if (ts.isCaseClause(clause)) {
        this.expr(clause.expression);
        // In `case 'a':` the subject is that constant.
        if (ts.isIdentifier(subject) && isLiteral(clause.expression)) this.applyClears([{ name: subject.text, mask: ALL }]);
      } else hasDefault = true;
      this.statements(clause.statements);
      outs.push(this.vars);
    }
    if (!hasDefault) outs.push(before);
    this.vars = this.join(outs);
  }

  private tryStatement(node: ts.TryStatement): void {
    const before = this.snapshot();
    this.statements(node.tryBlock.statements);
    if (node.catchClause) {
      const afterTry = this.vars;
      this.vars = this.join([before, afterTry]);
      const decl = node.catchClause.variableDeclaration;
      if (decl) this.bind(decl.name, undefined, undefined);
      this.statements(node.catchClause.block.statements);
      this.vars = this.join([afterTry, this.vars]);
    }
    if (node.finallyBlock) this.statements(node.finallyBlock.statements);
  }

  /** Walks nodes this engine has no rule for, so sinks inside them are still seen. */
  private generic(node: ts.Node): void {
    ts.forEachChild(node, (child) => {
      if (isFunctionNode(child) || ts.isFunctionDeclaration(child) || ts.isMethodDeclaration(child)) this.functionLiteral(child);
      else if (ts.isClassLike(child)) this.classLike(child);
      else if (ts.isStatement(child)) this.stmt(child);
      else if (ts.isExpression(child)) this.expr(child);
      else this.generic(child);
    });
  }

  // ---- bindings and assignments ----

  /**
   * Binds a declaration's names. `path` is what the initializer names when it is not tainted
   * itself, so `const { query } = req` finds the `req.query` source.
   */
  private bind(name: ts.BindingName, t: Taint | undefined, path: string[] | undefined): void {
    if (ts.isIdentifier(name)) {
      this.set(name.text, t);
      return;
    }
    if (ts.isObjectBindingPattern(name)) {
      for (const el of name.elements) {
        if (el.dotDotDotToken) {
          this.bind(el.name, t, undefined);
          continue;
        }
        const key = propertyNameText(el.propertyName ?? el.name);
        if (el.propertyName && ts.isComputedPropertyName(el.propertyName)) this.expr(el.propertyName.expression);
        let et = asValue(t);
        const subPath = path && key !== undefined ? [...path, key] : undefined;
        if (!et && subPath) et = this.sourceForPath(subPath, el, true);
        if (el.initializer) et = union(et, this.expr(el.initializer));
        this.bind(el.name, et, et ? undefined : subPath);
      }
      return;
    }
    for (const el of name.elements) {
      if (ts.isOmittedExpression(el)) continue;
      let et = asValue(t);
      if (el.initializer) et = union(et, this.expr(el.initializer));
      this.bind(el.name, et, undefined);
    }
  }

  private sourceForPath(path: readonly string[], node: ts.Node, container: boolean): Taint | undefined {
    if (!this.rules.sourceMember.hasName(path[path.length - 1]!)) return undefined;
    let mask = 0n;
    for (const m of this.rules.sourceMember.match(path)) mask |= m;
    mask &= this.active;
    return mask ? this.origin(node, mask, container, this.rules.stringMember.match(path).length > 0) : undefined;
  }

  private assign(target: ts.Expression, t: Taint | undefined): void {
    switch (target.kind) {
      case ts.SyntaxKind.Identifier:
        this.set((target as ts.Identifier).text, t && this.hop(t, target.parent, `${(target as ts.Identifier).text} = …`));
        return;
      case ts.SyntaxKind.ParenthesizedExpression:
      case ts.SyntaxKind.AsExpression:
      case ts.SyntaxKind.NonNullExpression:
      case ts.SyntaxKind.TypeAssertionExpression:
      case ts.SyntaxKind.SatisfiesExpression:
        this.assign((target as ts.ParenthesizedExpression).expression, t);
        return;
      case ts.SyntaxKind.PropertyAccessExpression:
      case ts.SyntaxKind.ElementAccessExpression:
        this.assignMember(target as ts.PropertyAccessExpression | ts.ElementAccessExpression, t);
        return;
      case ts.SyntaxKind.BinaryExpression: {
        // A default in a destructuring assignment: `({ a = 1 } = obj)`.
        const b = target as ts.BinaryExpression;
        if (b.operatorToken.kind === ts.SyntaxKind.EqualsToken) this.assign(b.left, union(t, this.expr(b.right)));
        return;
      }
      case ts.SyntaxKind.ObjectLiteralExpression:
        for (const p of (target as ts.ObjectLiteralExpression).properties) {
          if (ts.isPropertyAssignment(p)) this.assign(p.initializer, asValue(t));
          else if (ts.isShorthandPropertyAssignment(p)) {
            const init = p.objectAssignmentInitializer ? this.expr(p.objectAssignmentInitializer) : undefined;
            this.set(p.name.text, union(asValue(t), init));
          } else if (ts.isSpreadAssignment(p)) this.assign(p.expression, t);
        }
        return;
      case ts.SyntaxKind.ArrayLiteralExpression:
        for (const el of (target as ts.ArrayLiteralExpression).elements) {
          if (ts.isSpreadElement(el)) this.assign(el.expression, t);
          else if (!ts.isOmittedExpression(el)) this.assign(el, asValue(t));
        }
        return;
      default:
        this.expr(target);
    }
  }

  private assignMember(target: ts.PropertyAccessExpression | ts.ElementAccessExpression, t: Taint | undefined): void {
    const assignment = target.parent;
    // Keys of a computed chain `o[a][b] = v`, innermost first, and the chain's root variable.
    const keys: ts.Expression[] = [];
    let root: ts.Expression = target;
    while (ts.isPropertyAccessExpression(root) || ts.isElementAccessExpression(root)) {
      if (ts.isElementAccessExpression(root) && !isLiteral(root.argumentExpression)) keys.unshift(root.argumentExpression);
      root = skipOuter(root.expression);
    }
    const keyTaints = keys.map((k) => this.expr(k));
    if (!ts.isIdentifier(root) && root.kind !== ts.SyntaxKind.ThisKeyword) this.expr(root);
    for (const { rule, depth } of this.rules.computedKeyAssign) {
      const bit = 1n << BigInt(rule);
      if (keys.length >= depth && ((keyTaints[0]?.rules ?? 0n) & bit & this.active) !== 0n) this.report(rule, assignment, nodeText(target, this.sf, 60), keyTaints[0]!);
    }
    if (!t) return;
    const name = lastName(target, this.aliases);
    if (name !== undefined && this.rules.sinkAssign.hasName(name)) {
      const path = pathOf(target, this.aliases);
      const value = ts.isBinaryExpression(assignment) ? assignment.right : target;
      if (path) for (const spec of this.rules.sinkAssign.match(path)) this.checkSink(spec, assignment, path.join('.'), [value], [t]);
    }
    if (ts.isIdentifier(root)) this.set(root.text, union(this.lookup(root.text), { ...t, container: true }));
    // `this.x = tainted` within a method: tracked like a local named `this.x`.
    else if (root.kind === ts.SyntaxKind.ThisKeyword && ts.isPropertyAccessExpression(target) && target.expression.kind === ts.SyntaxKind.ThisKeyword) {
      this.set(`this.${target.name.text}`, t);
    }
  }

  // ---- expressions ----

  private expr(node: ts.Expression): Taint | undefined {
    switch (node.kind) {
      case ts.SyntaxKind.Identifier:
        return this.lookup((node as ts.Identifier).text);
      case ts.SyntaxKind.StringLiteral:
      case ts.SyntaxKind.NoSubstitutionTemplateLiteral:
      case ts.SyntaxKind.NumericLiteral:
      case ts.SyntaxKind.BigIntLiteral:
      case ts.SyntaxKind.RegularExpressionLiteral:
      case ts.SyntaxKind.TrueKeyword:
      case ts.SyntaxKind.FalseKeyword:
      case ts.SyntaxKind.NullKeyword:
      case ts.SyntaxKind.ThisKeyword:
      case ts.SyntaxKind.SuperKeyword:
      case ts.SyntaxKind.OmittedExpression:
        return undefined;
      case ts.SyntaxKind.ParenthesizedExpression:
      case ts.SyntaxKind.AsExpression:
      case ts.SyntaxKind.NonNullExpression:
      case ts.SyntaxKind.TypeAssertionExpression:
      case ts.SyntaxKind.SatisfiesExpression:
      case ts.SyntaxKind.AwaitExpression:
      case ts.SyntaxKind.SpreadElement:
        return this.expr((node as ts.ParenthesizedExpression).expression);
      case ts.SyntaxKind.TemplateExpression:
        return this.template(node as ts.TemplateExpression);
      case ts.SyntaxKind.PropertyAccessExpression:
        return this.member(node as ts.PropertyAccessExpression);
      case ts.SyntaxKind.ElementAccessExpression:
        return this.element(node as ts.ElementAccessExpression);
      case ts.SyntaxKind.CallExpression:
        return this.call(node as ts.CallExpression);
      case ts.SyntaxKind.NewExpression:
        return this.newExpression(node as ts.NewExpression);
      case ts.SyntaxKind.BinaryExpression:
        return this.binary(node as ts.BinaryExpression);
      case ts.SyntaxKind.ConditionalExpression:
        return this.conditional(node as ts.ConditionalExpression);
      case ts.SyntaxKind.ObjectLiteralExpression:
        return this.objectLiteral(node as ts.ObjectLiteralExpression);
      case ts.SyntaxKind.ArrayLiteralExpression: {
        let t: Taint | undefined;
        for (const el of (node as ts.ArrayLiteralExpression).elements) t = union(t, this.expr(el));
        return t && { ...t, container: true };
      }
      case ts.SyntaxKind.ArrowFunction:
      case ts.SyntaxKind.FunctionExpression:
        this.functionLiteral(node as ts.ArrowFunction);
        return undefined;
      case ts.SyntaxKind.ClassExpression:
        this.classLike(node as ts.ClassExpression);
        return undefined;
      case ts.SyntaxKind.PrefixUnaryExpression:
      case ts.SyntaxKind.PostfixUnaryExpression:
        // Numbers and booleans carry no injection.
        this.expr((node as ts.PrefixUnaryExpression).operand);
        return undefined;
      case ts.SyntaxKind.TypeOfExpression:
      case ts.SyntaxKind.VoidExpression:
      case ts.SyntaxKind.DeleteExpression:
        this.expr((node as ts.TypeOfExpression).expression);
        return undefined;
      case ts.SyntaxKind.TaggedTemplateExpression: {
        // sql`… ${x}` and friends bind values as parameters: the result is not tainted text.
        const tt = node as ts.TaggedTemplateExpression;
        this.expr(tt.tag);
        if (ts.isTemplateExpression(tt.template)) for (const s of tt.template.templateSpans) this.expr(s.expression);
        return undefined;
      }
      default:
        this.generic(node);
        return undefined;
    }
  }

  private member(node: ts.PropertyAccessExpression): Taint | undefined {
    if (node.expression.kind === ts.SyntaxKind.ThisKeyword) return this.lookup(`this.${node.name.text}`);
    const base = this.expr(node.expression);
    const name = node.name.text;
    if (this.rules.sourceMember.hasName(name)) {
      const path = pathOf(node, this.aliases);
      const src = path && this.sourceForPath(path, node, true);
      if (src) return src;
    }
    return asValue(base);
  }

  private element(node: ts.ElementAccessExpression): Taint | undefined {
    const base = this.expr(node.expression);
    this.expr(node.argumentExpression);
    if (ts.isStringLiteralLike(node.argumentExpression) && this.rules.sourceMember.hasName(node.argumentExpression.text)) {
      const path = pathOf(node, this.aliases);
      const src = path && this.sourceForPath(path, node, true);
      if (src) return src;
    }
    return asValue(base);
  }

  private flow(spec: PropagatorSpec, receiver: Taint | undefined, args: ReadonlyArray<Taint | undefined>): Taint | undefined {
    let t = spec.from === 'args' ? undefined : receiver;
    if (spec.from !== 'receiver') for (const a of args) t = union(t, a);
    return t;
  }

  private call(node: ts.CallExpression): Taint | undefined {
    this.visitor?.(node, this.fn);
    const callee = node.expression;
    let receiver: Taint | undefined;
    let receiverNode: ts.Expression | undefined;
    if (ts.isPropertyAccessExpression(callee)) {
      receiverNode = callee.expression;
      receiver = this.expr(callee.expression);
    } else if (ts.isElementAccessExpression(callee)) {
      receiverNode = callee.expression;
      receiver = this.expr(callee.expression);
      this.expr(callee.argumentExpression);
    } else if (!ts.isIdentifier(callee)) this.expr(callee);

    const r = this.rules;
    const name = lastName(callee, this.aliases);
    if (name !== undefined && r.callbackSources.hasName(name)) this.seedCallbacks(node);
    // Plain arguments first: callbacks run later, so they see the state after the call.
    const args: Array<Taint | undefined> = node.arguments.map((a) => (isFunctionNode(a) ? undefined : this.expr(a)));

    let result: Taint | undefined;
    let path: string[] | undefined;
    if (
      name !== undefined &&
      (r.sourceCall.hasName(name) || r.sinkCall.hasName(name) || r.sanitizerCall.hasName(name) || r.propagatorCall.hasName(name) || ROUTE_METHOD.has(name))
    ) {
      path = pathOf(callee, this.aliases);
    }
    // A function of the project that no rule names: follow the call when it gets tainted data.
    // `this.find(x)` is the class's own method, whatever a wildcard rule (`*.find`) says.
    if (args.some((a) => a !== undefined)) {
      const p = path;
      const known = p !== undefined && (r.sourceCall.match(p).length > 0 || r.sinkCall.match(p).length > 0 || r.sanitizerCall.match(p).length > 0 || r.propagatorCall.match(p).length > 0);
      const own =
        ts.isPropertyAccessExpression(callee) &&
        (callee.expression.kind === ts.SyntaxKind.ThisKeyword ||
          (ts.isPropertyAccessExpression(callee.expression) && callee.expression.expression.kind === ts.SyntaxKind.ThisKeyword));
      const target = own && known ? this.resolve(callee) : undefined;
      if (!known || target) {
        result = this.applySummary(node, args, target);
        if (target) path = undefined;
      }
    }
    // A local closure no rule names, called with clean arguments: run it here (`inlineClosure`).
    const ruleNamed = (p: string[] | undefined): boolean =>
      p !== undefined && (r.sourceCall.match(p).length > 0 || r.sinkCall.match(p).length > 0 || r.sanitizerCall.match(p).length > 0 || r.propagatorCall.match(p).length > 0);
    if (!result && ts.isIdentifier(callee) && !args.some((a) => a !== undefined) && !ruleNamed(path)) {
      const closure = this.localClosure(node, callee.text);
      if (closure) result = this.inlineClosure(closure);
    }
    if (path) {
      let mask = 0n;
      for (const m of r.sourceCall.match(path)) mask |= m;
      mask &= this.active;
      if (mask) result = this.origin(node, mask, false, r.stringCall.match(path).length > 0);
      const calleeText = path.join('.');
      for (const spec of r.sinkCall.match(path)) this.checkSink(spec, node, calleeText, node.arguments, args);
      let sanitized = 0n;
      for (const s of r.sanitizerCall.match(path)) if (this.constantArgOk(s, node.arguments, node.expression)) sanitized |= s.mask;
      // A sanitizer that is also a propagator (path.basename) still carries the text for the
      // other rules; one that is only a check (`re.test(x)`) returns a boolean.
      const propagators = r.propagatorCall.match(path);
      let flowed: Taint | undefined;
      for (const p of propagators) {
        const t = this.flow(p, receiver, args);
        if (p.into === undefined) flowed = union(flowed, t);
        else if (t) {
          const target = p.into === 'receiver' ? receiverNode : node.arguments[p.into];
          if (target) this.taintInto(target, t);
        }
      }
      result = union(result, without(flowed, sanitized));
    }

    // Callbacks: element callbacks get the receiver's elements; route handlers their request.
    for (const a of node.arguments) {
      if (!isFunctionNode(a)) continue;
      const label = functionName(a, this.sf, this.aliases);
      const seeded = this.callbackSeeds.get(a);
      if (seeded) {
        this.enter(a, label, (params) => params.forEach((p, j) => this.bindParam(p, seeded[j])));
        continue;
      }
      const element = name !== undefined && receiver ? ELEMENT_CALLBACKS.get(name) : undefined;
      if (name === 'then' && receiver && a === node.arguments[0]) {
        // `taintedPromise.then((value) => …)`: the value is what the promise resolves to.
        this.enter(a, label, (params) => params.forEach((p, j) => this.bindParam(p, j === 0 ? receiver : undefined)));
      } else if (element !== undefined) {
        this.enter(a, label, (params) => params.forEach((p, j) => this.bindParam(p, j === element ? asValue(receiver) : undefined)));
      } else if (
        r.routeParams.size > 0 &&
        ((name !== undefined && ROUTE_METHOD.has(name) && receiverNode) || this.handlerShaped(a))
      ) {
        this.enterHandler(a, label);
      } else this.enter(a, label);
    }
    return result;
  }

  private bindRouteParam(pattern: ts.ObjectBindingPattern): void {
    for (const el of pattern.elements) {
      const key = el.dotDotDotToken ? undefined : propertyNameText(el.propertyName ?? el.name);
      // Koa: `({ request: { body } }, next)` — the request's fields, one level down.
      if (key === 'request' && ts.isObjectBindingPattern(el.name)) {
        this.bindRouteParam(el.name);
        continue;
      }
      const mask = key !== undefined ? (this.rules.routeParams.get(key) ?? 0n) & this.active : 0n;
      this.bind(el.name, mask ? this.origin(el, mask, true, this.rules.stringRouteParams.has(key!)) : undefined, undefined);
    }
  }

  /** `arr.push(x)`, `Object.assign(target, x)`: the target variable now holds tainted data. */
  private taintInto(target: ts.Expression, t: Taint): void {
    let root = skipOuter(target);
    while (ts.isPropertyAccessExpression(root) || ts.isElementAccessExpression(root)) root = skipOuter(root.expression);
    if (ts.isIdentifier(root)) this.set(root.text, union(this.lookup(root.text), { ...t, container: true }));
    // `this.x = tainted` within a method: tracked like a local named `this.x`.
    else if (root.kind === ts.SyntaxKind.ThisKeyword && ts.isPropertyAccessExpression(target) && target.expression.kind === ts.SyntaxKind.ThisKeyword) {
      this.set(`this.${target.name.text}`, t);
    }
  }

  private newExpression(node: ts.NewExpression): Taint | undefined {
    this.visitor?.(node, this.fn);
    if (!ts.isIdentifier(node.expression)) this.expr(node.expression);
    const argNodes = node.arguments ?? ts.factory.createNodeArray<ts.Expression>();
    const args = argNodes.map((a) => (isFunctionNode(a) ? undefined : this.expr(a)));
    const name = lastName(node.expression, this.aliases);
    let result: Taint | undefined;
    if (name !== undefined && (this.rules.sinkNew.hasName(name) || this.rules.propagatorNew.hasName(name))) {
      const path = pathOf(node.expression, this.aliases);
      if (path) {
        for (const spec of this.rules.sinkNew.match(path)) this.checkSink(spec, node, path.join('.'), argNodes, args);
        for (const p of this.rules.propagatorNew.match(path)) result = union(result, this.flow(p, undefined, args));
      }
    }
    for (const a of argNodes) if (isFunctionNode(a)) this.functionLiteral(a);
    return result;
  }

  private binary(node: ts.BinaryExpression): Taint | undefined {
    const op = node.operatorToken.kind;
    switch (op) {
      case ts.SyntaxKind.EqualsToken: {
        this.visitor?.(node, this.fn);
        const t = isFunctionNode(node.right) ? (this.functionLiteral(node.right), undefined) : this.expr(node.right);
        this.assign(node.left, t);
        return t;
      }
      case ts.SyntaxKind.PlusEqualsToken: {
        const t = asString(union(this.expr(node.left), this.expr(node.right)));
        this.assign(node.left, t);
        return t;
      }
      case ts.SyntaxKind.BarBarEqualsToken:
      case ts.SyntaxKind.QuestionQuestionEqualsToken:
      case ts.SyntaxKind.AmpersandAmpersandEqualsToken: {
        const t = union(this.expr(node.left), this.expr(node.right));
        this.assign(node.left, t);
        return t;
      }
      case ts.SyntaxKind.PlusToken:
        return this.plus(node);
      case ts.SyntaxKind.BarBarToken:
      case ts.SyntaxKind.QuestionQuestionToken:
      case ts.SyntaxKind.AmpersandAmpersandToken:
        return union(this.expr(node.left), this.expr(node.right));
      case ts.SyntaxKind.CommaToken:
        this.expr(node.left);
        return this.expr(node.right);
      default:
        if (op >= ts.SyntaxKind.FirstCompoundAssignment && op <= ts.SyntaxKind.LastCompoundAssignment) {
          // `-=`, `*=`…: the variable now holds a number.
          this.expr(node.left);
          this.expr(node.right);
          this.assign(node.left, undefined);
          return undefined;
        }
        // Comparisons, arithmetic, `in`, `instanceof`: booleans and numbers.
        this.expr(node.left);
        this.expr(node.right);
        return undefined;
    }
  }

  /** The constant text an expression starts with, if its leftmost part is constant. */
  private leading(node: ts.Expression): { text: string; complete: boolean } | undefined {
    const n = skipOuter(node);
    if (ts.isStringLiteralLike(n)) return { text: n.text, complete: true };
    if (ts.isIdentifier(n)) {
      const c = this.constant(n.text);
      return c === undefined ? undefined : { text: c, complete: true };
    }
    if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      const l = this.leading(n.left);
      if (!l || !l.complete) return l;
      const r = this.leading(n.right);
      return r ? { text: l.text + r.text, complete: r.complete } : { text: l.text, complete: false };
    }
    if (ts.isTemplateExpression(n)) {
      let text = n.head.text;
      for (const span of n.templateSpans) {
        const v = this.leading(span.expression);
        if (!v) return { text, complete: false };
        text += v.text;
        if (!v.complete) return { text, complete: false };
        text += span.literal.text;
      }
      return { text, complete: true };
    }
    return undefined;
  }

  /** Built strings are tainted unless they start with a constant a rule's `prefix` sanitizer accepts. */
  private built(node: ts.Expression, t: Taint | undefined): Taint | undefined {
    let out = asString(t);
    if (!out || this.rules.sanitizerPrefix.length === 0) return out;
    const lead = this.leading(node);
    if (lead && lead.text.length > 0) for (const p of this.rules.sanitizerPrefix) if (p.regex.test(lead.text)) out = without(out, p.mask);
    return out;
  }

  private plus(node: ts.BinaryExpression): Taint | undefined {
    const t = union(this.expr(node.left), this.expr(node.right));
    return t && this.built(node, t);
  }

  private template(node: ts.TemplateExpression): Taint | undefined {
    let t: Taint | undefined;
    for (const span of node.templateSpans) t = union(t, this.expr(span.expression));
    return t && this.built(node, t);
  }

  private conditional(node: ts.ConditionalExpression): Taint | undefined {
    this.expr(node.condition);
    const guard = this.guard(node.condition);
    if (guard === NO_GUARD) return union(this.expr(node.whenTrue), this.expr(node.whenFalse));
    const before = this.snapshot();
    this.applyClears(guard.whenTrue);
    const a = this.expr(node.whenTrue);
    const afterTrue = this.vars;
    this.vars = before;
    this.applyClears(guard.whenFalse);
    const b = this.expr(node.whenFalse);
    this.vars = this.join([afterTrue, this.vars]);
    return union(a, b);
  }

  private objectLiteral(node: ts.ObjectLiteralExpression): Taint | undefined {
    let t: Taint | undefined;
    for (const p of node.properties) {
      if (p.name && ts.isComputedPropertyName(p.name)) this.expr(p.name.expression);
      if (ts.isPropertyAssignment(p)) {
        this.visitor?.(p, this.fn);
        t = union(t, isFunctionNode(p.initializer) ? (this.functionLiteral(p.initializer), undefined) : this.expr(p.initializer));
      } else if (ts.isShorthandPropertyAssignment(p)) t = union(t, this.lookup(p.name.text));
      else if (ts.isSpreadAssignment(p)) t = union(t, this.expr(p.expression));
      else if (ts.isMethodDeclaration(p) || ts.isGetAccessor(p) || ts.isSetAccessor(p)) this.functionLiteral(p);
    }
    return t && { ...t, container: true };
  }

  // ---- guards ----

  /** A sanitizer with `arg_constant` applies only when its first argument is such a constant. */
  private constantArgOk(s: SanitizerSpec, args: readonly ts.Expression[], callee?: ts.Expression): boolean {
    if (s.receiverConstant) {
      const c = callee && skipOuter(callee);
      if (!c || !ts.isPropertyAccessExpression(c) || !fixedCollection(c.expression)) return false;
    }
    if (!s.argConstant) return true;
    const lead = args[0] && this.leading(args[0]);
    return lead !== undefined && lead.complete && s.argConstant.test(lead.text);
  }

  /** Variables a call vouches for: plain identifiers, or the subject of `new URL(x).host`. */
  private subjects(node: ts.Expression): string[] {
    const n = skipOuter(node);
    if (ts.isIdentifier(n)) return [n.text];
    if (ts.isPropertyAccessExpression(n) || ts.isElementAccessExpression(n)) {
      const base = skipOuter(n.expression);
      return ts.isNewExpression(base) || ts.isCallExpression(base) ? this.subjects(base) : [];
    }
    if (ts.isNewExpression(n) || ts.isCallExpression(n)) return (n.arguments ?? []).flatMap((a) => (ts.isIdentifier(skipOuter(a)) ? [(skipOuter(a) as ts.Identifier).text] : []));
    return [];
  }

  private guard(cond: ts.Expression): Guard {
    const n = skipOuter(cond);
    if (ts.isPrefixUnaryExpression(n) && n.operator === ts.SyntaxKind.ExclamationToken) {
      const g = this.guard(n.operand);
      return g === NO_GUARD ? g : { whenTrue: g.whenFalse, whenFalse: g.whenTrue };
    }
    if (ts.isBinaryExpression(n)) {
      const op = n.operatorToken.kind;
      if (op === ts.SyntaxKind.AmpersandAmpersandToken || op === ts.SyntaxKind.BarBarToken) {
        const a = this.guard(n.left);
        const b = this.guard(n.right);
        if (a === NO_GUARD && b === NO_GUARD) return NO_GUARD;
        return op === ts.SyntaxKind.AmpersandAmpersandToken
          ? { whenTrue: [...a.whenTrue, ...b.whenTrue], whenFalse: [] }
          : { whenTrue: [], whenFalse: [...a.whenFalse, ...b.whenFalse] };
      }
      const eq = op === ts.SyntaxKind.EqualsEqualsEqualsToken || op === ts.SyntaxKind.EqualsEqualsToken;
      const ne = op === ts.SyntaxKind.ExclamationEqualsEqualsToken || op === ts.SyntaxKind.ExclamationEqualsToken;
      if (eq || ne) {
        const l = skipOuter(n.left);
        const r = skipOuter(n.right);
        let subject: ts.Expression | undefined;
        if (isLiteral(r) && r.kind !== ts.SyntaxKind.NullKeyword) subject = l;
        else if (isLiteral(l) && l.kind !== ts.SyntaxKind.NullKeyword) subject = r;
        // `typeof x === 'number'`
        if (subject && ts.isTypeOfExpression(subject)) {
          const other = subject === l ? r : l;
          subject = ts.isStringLiteralLike(other) && (other.text === 'number' || other.text === 'boolean') ? subject.expression : undefined;
        }
        const s = subject && skipOuter(subject);
        if (s && ts.isIdentifier(s)) {
          const clears = [{ name: s.text, mask: ALL }];
          return eq ? { whenTrue: clears, whenFalse: [] } : { whenTrue: [], whenFalse: clears };
        }
      }
      return NO_GUARD;
    }
    if (ts.isCallExpression(n)) {
      const validated = this.callGuards.get(n);
      if (validated) {
        const clears: Clear[] = [];
        for (const [i, mask] of validated) {
          const arg = n.arguments[i];
          if (arg) for (const v of this.subjects(arg)) clears.push({ name: v, mask });
        }
        if (clears.length) return { whenTrue: clears, whenFalse: [] };
      }
      const name = lastName(n.expression, this.aliases);
      if (name === undefined || !this.rules.sanitizerCall.hasName(name)) return NO_GUARD;
      const path = pathOf(n.expression, this.aliases);
      if (!path) return NO_GUARD;
      // `/allowed\.com/.test(url)` checks for a substring: `https://evil.test/?allowed.com` passes.
      // Only a regex anchored at the start (`/^https:\/\/allowed\.com\//`) validates a value.
      if (ts.isPropertyAccessExpression(n.expression) && n.expression.name.text === 'test') {
        const re = skipOuter(n.expression.expression);
        if (ts.isRegularExpressionLiteral(re) && !re.text.startsWith('/^')) return NO_GUARD;
      }
      const clears: Clear[] = [];
      for (const s of this.rules.sanitizerCall.match(path)) {
        if (!this.constantArgOk(s, n.arguments, n.expression)) continue;
        const vouched =
          s.guard === 'receiver'
            ? ts.isPropertyAccessExpression(n.expression) || ts.isElementAccessExpression(n.expression)
              ? this.subjects(n.expression.expression)
              : []
            : n.arguments.flatMap((a) => this.subjects(a));
        for (const v of vouched) clears.push({ name: v, mask: s.mask });
      }
      return clears.length ? { whenTrue: clears, whenFalse: [] } : NO_GUARD;
    }
    return NO_GUARD;
  }
}

/** The name a function is exported under: `export function GET`, `export const POST = …`, `export default`. */
function exportName(node: ts.Node): string | undefined {
  const exported = (n: ts.Node): boolean => ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  const isDefault = (n: ts.Node): boolean => ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
  if (ts.isFunctionDeclaration(node)) {
    if (!exported(node)) return undefined;
    return isDefault(node) ? 'default' : node.name?.text;
  }
  let p: ts.Node = node.parent;
  while (p && (ts.isParenthesizedExpression(p) || ts.isAsExpression(p) || ts.isSatisfiesExpression(p) || ts.isCallExpression(p))) p = p.parent;
  if (p && ts.isExportAssignment(p)) return 'default';
  if (p && ts.isVariableDeclaration(p) && ts.isIdentifier(p.name) && ts.isVariableDeclarationList(p.parent) && ts.isVariableStatement(p.parent.parent) && exported(p.parent.parent)) return p.name.text;
  return undefined;
}

/**
 * Whether a call's result decides something: it (or a variable it initialises, destructuring
 * included, or a property read from either) is tested in a condition, returned, or stored in a
 * property (`req.user = payload`). Logging or displaying it decides nothing.
 */
function resultDecides(call: ts.Node): boolean {
  const decides = (e: ts.Node): boolean => {
    let n = e;
    // Climb through wrappers and property reads (`decoded.role`, `(await x).sub`, `x?.admin`).
    for (;;) {
      const p = n.parent;
      if (!p) return false;
      if (ts.isParenthesizedExpression(p) || ts.isAsExpression(p) || ts.isNonNullExpression(p) || ts.isAwaitExpression(p) || ts.isTypeAssertionExpression(p) || ts.isSatisfiesExpression(p)) n = p;
      else if ((ts.isPropertyAccessExpression(p) || ts.isElementAccessExpression(p)) && p.expression === n) n = p;
      else if (ts.isBinaryExpression(p) && [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken, ts.SyntaxKind.AmpersandAmpersandToken, ts.SyntaxKind.BarBarToken, ts.SyntaxKind.GreaterThanToken, ts.SyntaxKind.LessThanToken, ts.SyntaxKind.GreaterThanEqualsToken, ts.SyntaxKind.LessThanEqualsToken].includes(p.operatorToken.kind)) return true;
      else if (ts.isPrefixUnaryExpression(p) && p.operator === ts.SyntaxKind.ExclamationToken) return true;
      else break;
    }
    const p = n.parent!;
    if ((ts.isIfStatement(p) || ts.isWhileStatement(p) || ts.isDoStatement(p)) && p.expression === n) return true;
    if (ts.isConditionalExpression(p) && p.condition === n) return true;
    if (ts.isSwitchStatement(p) && p.expression === n) return true;
    if (ts.isReturnStatement(p) || (ts.isArrowFunction(p) && p.body === n)) return true;
    if (ts.isBinaryExpression(p) && p.operatorToken.kind === ts.SyntaxKind.EqualsToken && p.right === n) {
      const left = skipOuter(p.left);
      return ts.isPropertyAccessExpression(left) || ts.isElementAccessExpression(left);
    }
    if (ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)) return decides(p.parent);
    if (ts.isVariableDeclaration(p) && p.initializer === n) return boundDecides(p.name, p);
    return false;
  };
  const boundDecides = (name: ts.BindingName, decl: ts.Node): boolean => {
    const names: string[] = [];
    const collect = (b: ts.BindingName): void => {
      if (ts.isIdentifier(b)) names.push(b.text);
      else for (const el of b.elements) if (!ts.isOmittedExpression(el)) collect(el.name);
    };
    collect(name);
    let scope: ts.Node = decl;
    while (scope.parent && !ts.isFunctionLike(scope) && !ts.isSourceFile(scope)) scope = scope.parent;
    let found = false;
    const walk = (n: ts.Node): void => {
      if (found) return;
      if (ts.isIdentifier(n) && names.includes(n.text) && n.pos > decl.end && !(ts.isPropertyAccessExpression(n.parent) && n.parent.name === n) && decides(n)) {
        found = true;
        return;
      }
      ts.forEachChild(n, walk);
    };
    walk(scope);
    return found;
  };
  return decides(call);
}

/**
 * The class name a field of the enclosing class is typed with: a constructor parameter property
 * (`constructor(private readonly users: UsersService)`) or a field declaration (`users: UsersService`).
 */
function injectedClass(from: ts.Node, field: string): string | undefined {
  let n: ts.Node | undefined = from.parent;
  while (n && !ts.isClassLike(n)) n = n.parent;
  if (!n) return undefined;
  const typeName = (t: ts.TypeNode | undefined): string | undefined => (t && ts.isTypeReferenceNode(t) && ts.isIdentifier(t.typeName) && !t.typeArguments ? t.typeName.text : undefined);
  for (const m of (n as ts.ClassLikeDeclaration).members) {
    if (ts.isPropertyDeclaration(m) && m.name && ts.isIdentifier(m.name) && m.name.text === field) return typeName(m.type);
    if (ts.isConstructorDeclaration(m)) {
      for (const p of m.parameters) {
        if (!ts.isIdentifier(p.name) || p.name.text !== field) continue;
        if ((ts.getModifiers(p) ?? []).length === 0) continue;
        return typeName(p.type);
      }
    }
  }
  return undefined;
}
