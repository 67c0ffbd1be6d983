// ---- function summaries ----
// A call passing tainted data to a project function no rule names runs that function's body in
// an engine of its own, parameters seeded with the arguments' shape and tagged with their index.
// What reaches a sink or the return is rebased on the caller's arguments. Bounded: memoised per
// (file, function, argument shape), recursion guard, MAX_SUMMARY_DEPTH, MAX_SUMMARY_HITS,
// MAX_SUMMARIES.
import ts from 'typescript';
import { functionName, nodeText, skipOuter } from './ast.ts';
import type { FileModel, ResolvedFunction } from './project.ts';
import { TaintClosures } from './taint-closures.ts';
import { joinSteps, MAX_PARAMS, MAX_SUMMARIES, MAX_SUMMARY_DEPTH, union, type Summary, type Taint, type TaintStep } from './taint-values.ts';

export abstract class TaintSummaries extends TaintClosures {
  /** While summarising: what the function returns. */
  protected returned: Taint | undefined;
  /** While summarising: parameter names → index, and what the returns vouch for (null: nothing). */
  protected paramIndex: Map<string, number> | undefined;
  protected returnGuards: Map<number, bigint> | null | undefined;

  /** Summarises `fn` for arguments of this shape: run its body with the parameters seeded. */
  protected summarizeHere(fn: ts.FunctionLikeDeclaration, args: ReadonlyArray<Taint | undefined>): Summary {
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

  protected noteReturn(t: Taint | undefined, node: ts.Node, e?: ts.Expression): void {
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
  protected noteReturnGuard(e: ts.Expression | undefined): void {
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
  protected resolve(callee: ts.Expression): ResolvedFunction | undefined {
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

  protected summary(target: ResolvedFunction, args: ReadonlyArray<Taint | undefined>): Summary | undefined {
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
      const engine = this.summaryEngine(target.model, all);
      sum = engine.summarizeHere(target.node, args);
    } finally {
      ctx.inProgress.delete(key);
    }
    ctx.memo.set(key, sum);
    return sum;
  }

  /** `f(tainted)` for a function with a summary: its sinks report here, its return carries taint. */
  protected applySummary(node: ts.CallExpression, args: ReadonlyArray<Taint | undefined>, resolved?: ResolvedFunction): Taint | undefined {
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

  /** The functions part (taint-functions.ts). */
  protected abstract bindParam(p: ts.ParameterDeclaration, t: Taint | undefined): void;

  /** A new engine for the function being summarised (the whole engine: TaintEngine in taint.ts). */
  protected abstract summaryEngine(model: FileModel, active: bigint): TaintSummaries;
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
