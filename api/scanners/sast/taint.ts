// Intraprocedural taint tracking over one file's syntax tree (no type checker). One walk serves
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
// - Calls propagate taint only through the propagators the rules list (string and array methods,
//   path.join…); unknown functions return clean values. A database result or a helper's return is
//   not attacker text, and treating it so is the main source of false positives in such tools.
// - Writing tainted data into `obj.x` taints `obj` (weak update); reading `obj.y` then is tainted.
// - A sanitizer call used as a condition (`if (!isValid(x)) return;`) clears its arguments (or its
//   receiver, if the rule says so) where the condition is known true; so does `x === 'literal'`.
import ts from 'typescript';
import { lastName, pathOf, type AliasMap } from './aliases.ts';
import { functionName, isLiteral, nodeText, propertyNameText, skipOuter } from './ast.ts';
import { ROUTE_METHODS, type PropagatorSpec, type SanitizerSpec, type SinkSpec, type TaintRules } from './rules.ts';

export interface TaintOrigin {
  line: number;
  expression: string;
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
}

export interface TaintHit {
  rule: number;
  /** The sink: a call, a `new` or an assignment. */
  node: ts.Node;
  callee: string;
  origin: TaintOrigin;
  functionName: string;
}

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
  return {
    rules: a.rules | b.rules,
    origin: b.origin.line < a.origin.line ? b.origin : a.origin,
    built: a.built || b.built,
    container: a.container && b.container,
    ...(a.strings && b.strings ? { strings: true } : {}),
  };
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
    private readonly visitor?: (node: ts.Node, fn: string) => void,
  ) {}

  run(): TaintHit[] {
    this.statements(this.sf.statements);
    return this.hits;
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
    const line = this.sf.getLineAndCharacterOfPosition(node.getStart(this.sf)).line + 1;
    return { rules: mask, origin: { line, expression: nodeText(node, this.sf) }, built: false, container, ...(strings ? { strings } : {}) };
  }

  private report(rule: number, node: ts.Node, callee: string, t: Taint): void {
    const key = `${rule}:${node.pos}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.hits.push({ rule, node, callee, origin: t.origin, functionName: this.fn });
  }

  private checkSink(spec: SinkSpec, node: ts.Node, callee: string, argNodes: readonly ts.Expression[], argTaints: ReadonlyArray<Taint | undefined>): void {
    const bit = 1n << BigInt(spec.rule);
    if ((this.active & bit) === 0n) return;
    if (spec.unlessOption && argNodes.some((a) => hasOptionKey(a, spec.unlessOption!))) return;
    if (spec.withArg !== undefined) {
      const w = argNodes[spec.withArg];
      if (!w || isLiteral(w) || isFunctionNode(skipOuter(w))) return;
    }
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
      // Parameters shadow outer names: clean unless seeded (route handlers, element callbacks).
      if (params) params(node.parameters);
      else for (const p of node.parameters) this.bindParam(p, undefined);
      if (ts.isBlock(node.body)) this.statements(node.body.statements);
      else this.expr(node.body);
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
    if (this.handlerShaped(node)) this.enterHandler(node, label);
    else this.enter(node, label);
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
      case ts.SyntaxKind.ExpressionStatement:
        this.expr((node as ts.ExpressionStatement).expression);
        return;
      case ts.SyntaxKind.IfStatement:
        this.ifStatement(node as ts.IfStatement);
        return;
      case ts.SyntaxKind.ReturnStatement:
      case ts.SyntaxKind.ThrowStatement: {
        const e = (node as ts.ReturnStatement).expression;
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
      const t = isFunctionNode(d.initializer) ? (this.functionLiteral(d.initializer), undefined) : this.expr(d.initializer);
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
        this.set((target as ts.Identifier).text, t);
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

    // Plain arguments first: callbacks run later, so they see the state after the call.
    const args: Array<Taint | undefined> = node.arguments.map((a) => (isFunctionNode(a) ? undefined : this.expr(a)));

    const r = this.rules;
    const name = lastName(callee, this.aliases);
    let result: Taint | undefined;
    let path: string[] | undefined;
    if (
      name !== undefined &&
      (r.sourceCall.hasName(name) || r.sinkCall.hasName(name) || r.sanitizerCall.hasName(name) || r.propagatorCall.hasName(name) || ROUTE_METHOD.has(name))
    ) {
      path = pathOf(callee, this.aliases);
    }
    if (path) {
      let mask = 0n;
      for (const m of r.sourceCall.match(path)) mask |= m;
      mask &= this.active;
      if (mask) result = this.origin(node, mask, false, r.stringCall.match(path).length > 0);
      const calleeText = path.join('.');
      for (const spec of r.sinkCall.match(path)) this.checkSink(spec, node, calleeText, node.arguments, args);
      let sanitized = 0n;
      for (const s of r.sanitizerCall.match(path)) if (this.constantArgOk(s, node.arguments)) sanitized |= s.mask;
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
      const element = name !== undefined && receiver ? ELEMENT_CALLBACKS.get(name) : undefined;
      if (element !== undefined) {
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
  private constantArgOk(s: SanitizerSpec, args: readonly ts.Expression[]): boolean {
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
        if (!this.constantArgOk(s, n.arguments)) continue;
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
