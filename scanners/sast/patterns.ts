// Pattern rules: each node is dispatched by kind to the few matchers indexed under its name (calls
// by callee name, properties by key, bindings and functions by a name regex). No data flow: these
// rules look at one construct and its surroundings. The nodes come from the taint engine's walk
// when taint rules run on the file (`onNode`), else from this walker's own (`run`).
import ts from 'typescript';
import { lastName, pathOf, type AliasMap } from './aliases.ts';
import { functionName, skipOuter } from './ast.ts';
import type { LiteralValue, PatternMatcher, PatternRules } from './rules.ts';

export interface PatternHit {
  rule: number;
  /** Where the finding is reported. */
  node: ts.Node;
  matcher: PatternMatcher['kind'];
  functionName: string;
  /** A string literal holding a secret: masked in the evidence. */
  secret?: ts.Node;
}

function nameText(name: ts.Node | undefined): string | undefined {
  if (!name) return undefined;
  if (ts.isIdentifier(name) || ts.isStringLiteralLike(name) || ts.isPrivateIdentifier(name)) return name.text;
  if (ts.isPropertyAccessExpression(name)) return name.name.text;
  if (ts.isElementAccessExpression(name) && ts.isStringLiteralLike(name.argumentExpression)) return name.argumentExpression.text;
  return undefined;
}

/** The literal an expression is, if it is one (`!0`/`!1` are how minifiers write booleans). */
function literalOf(node: ts.Expression): { value: LiteralValue } | undefined {
  const n = skipOuter(node);
  if (ts.isStringLiteralLike(n)) return { value: n.text };
  if (ts.isNumericLiteral(n)) return { value: Number(n.text) };
  if (n.kind === ts.SyntaxKind.TrueKeyword) return { value: true };
  if (n.kind === ts.SyntaxKind.FalseKeyword) return { value: false };
  if (n.kind === ts.SyntaxKind.NullKeyword) return { value: null };
  if (ts.isPrefixUnaryExpression(n) && n.operator === ts.SyntaxKind.ExclamationToken && ts.isNumericLiteral(n.operand)) return { value: Number(n.operand.text) === 0 };
  return undefined;
}

function sameLiteral(a: LiteralValue, b: LiteralValue): boolean {
  return typeof a === 'string' && typeof b === 'string' ? a.toLowerCase() === b.toLowerCase() : a === b;
}

function valueMatches(node: ts.Expression, values: readonly LiteralValue[]): boolean {
  const n = skipOuter(node);
  if (ts.isArrayLiteralExpression(n)) return n.elements.some((e) => valueMatches(e, values));
  const lit = literalOf(n);
  return lit !== undefined && values.some((v) => sameLiteral(v, lit.value));
}

/** A string literal, or the literal fallback of `process.env.X || 'literal'`. */
function stringValue(node: ts.Expression): ts.StringLiteralLike | undefined {
  const n = skipOuter(node);
  if (ts.isStringLiteralLike(n)) return n;
  if (ts.isBinaryExpression(n) && (n.operatorToken.kind === ts.SyntaxKind.BarBarToken || n.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken)) {
    const r = skipOuter(n.right);
    if (ts.isStringLiteralLike(r)) return r;
  }
  return undefined;
}

/** The initializer of the `const` an identifier refers to, found scope by scope outwards. */
export function constInitializer(id: ts.Identifier): ts.Expression | undefined {
  const name = id.text;
  for (let p: ts.Node | undefined = id.parent; p; p = p.parent) {
    if (ts.isFunctionLike(p) && (p.parameters as readonly ts.ParameterDeclaration[]).some((q) => (ts.isIdentifier(q.name) ? q.name.text === name : true))) return undefined;
    if (!ts.isBlock(p) && !ts.isSourceFile(p) && !ts.isModuleBlock(p) && !ts.isCaseClause(p) && !ts.isDefaultClause(p)) continue;
    for (const st of p.statements) {
      if (!ts.isVariableStatement(st)) continue;
      for (const d of st.declarationList.declarations) {
        if (!ts.isIdentifier(d.name) || d.name.text !== name) continue;
        return (st.declarationList.flags & ts.NodeFlags.Const) !== 0 ? d.initializer : undefined;
      }
    }
  }
  return undefined;
}

/** A collection fixed in the source: an array literal or `new Set([...])` of literals (frozen or not), or a `const` bound to one. */
export function fixedCollection(node: ts.Expression, depth = 0): boolean {
  if (depth > 4) return false;
  const n = skipOuter(node);
  if (ts.isArrayLiteralExpression(n)) return n.elements.every((e) => literalOf(e as ts.Expression) !== undefined);
  if (ts.isNewExpression(n) && ts.isIdentifier(n.expression) && (n.expression.text === 'Set' || n.expression.text === 'Map')) {
    const a = n.arguments?.[0];
    return a === undefined || fixedCollection(a, depth + 1);
  }
  const c = ts.isCallExpression(n) ? n.expression : undefined;
  if (c && ts.isPropertyAccessExpression(c) && ts.isIdentifier(c.expression) && c.expression.text === 'Object' && c.name.text === 'freeze' && (n as ts.CallExpression).arguments[0]) return fixedCollection((n as ts.CallExpression).arguments[0]!, depth + 1);
  if (ts.isIdentifier(n)) {
    const init = constInitializer(n);
    return init !== undefined && fixedCollection(init, depth + 1);
  }
  return false;
}

/** Buffer constructors whose result is fixed when their arguments are (`Buffer.alloc(16)` is zeros). */
const FIXED_BUFFER_CALLS = new Set(['Buffer.from', 'Buffer.alloc', 'Buffer.of', 'Uint8Array', 'Uint8Array.from', 'Uint8Array.of']);

const isAssignment = (n: ts.Node): n is ts.BinaryExpression => ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.EqualsToken;

export class PatternWalker {
  private readonly hits: PatternHit[] = [];
  private readonly seen = new Set<string>();
  private readonly names: string[] = ['<module>'];

  constructor(
    private readonly sf: ts.SourceFile,
    private readonly rules: PatternRules,
    private readonly aliases: AliasMap,
    /** Rules the prefilter left active for this file. */
    private readonly active: readonly boolean[],
  ) {}

  run(): PatternHit[] {
    this.visit(this.sf);
    return this.hits;
  }

  private get fn(): string {
    return this.names[this.names.length - 1]!;
  }

  private hit(m: PatternMatcher, node: ts.Node, fn: string, secret?: ts.Node): void {
    // The taint engine may show a node twice (it runs loop bodies twice).
    const key = `${m.rule}:${node.pos}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.hits.push({ rule: m.rule, node, matcher: m.kind, functionName: fn, ...(secret ? { secret } : {}) });
  }

  /**
   * Matches one node against the pattern rules, without descending. `fn` names the function the
   * node is in. Called by this walker's own traversal, or by the taint engine's so that one walk
   * serves both kinds of rule.
   */
  readonly onNode = (node: ts.Node, fn: string): void => {
    switch (node.kind) {
      case ts.SyntaxKind.CallExpression:
      case ts.SyntaxKind.NewExpression:
        this.callLike(node as ts.CallExpression | ts.NewExpression, fn);
        return;
      case ts.SyntaxKind.PropertyAssignment: {
        const p = node as ts.PropertyAssignment;
        this.property(nameText(p.name), p.initializer, node, fn);
        this.binding(nameText(p.name), p.initializer, node, fn);
        return;
      }
      case ts.SyntaxKind.BinaryExpression:
        if (isAssignment(node)) {
          const left = skipOuter(node.left);
          this.property(nameText(left), node.right, node, fn);
          this.binding(nameText(left), node.right, node, fn);
        }
        return;
      case ts.SyntaxKind.VariableDeclaration:
      case ts.SyntaxKind.Parameter:
      case ts.SyntaxKind.PropertyDeclaration: {
        const d = node as ts.VariableDeclaration | ts.ParameterDeclaration | ts.PropertyDeclaration;
        if (d.initializer) {
          this.binding(nameText(d.name), d.initializer, node, fn);
          if (ts.isPropertyDeclaration(d)) this.property(nameText(d.name), d.initializer, node, fn);
        }
        return;
      }
      default:
        if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
          this.mergeFunction(node as ts.FunctionLikeDeclaration, functionName(node, this.sf, this.aliases), fn);
        }
    }
  };

  private readonly visit = (node: ts.Node): void => {
    this.onNode(node, this.fn);
    if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
      // Decorators and a computed name (`[Symbol.for('x')]()`) are evaluated outside the method.
      const key = (node as ts.FunctionLikeDeclaration).name;
      const outside = new Set<ts.Node>(ts.canHaveDecorators(node) ? (ts.getDecorators(node) ?? []) : []);
      if (key && ts.isComputedPropertyName(key)) outside.add(key);
      for (const n of outside) this.visit(n);
      const name = functionName(node, this.sf, this.aliases);
      this.names.push(this.fn === '<module>' ? name : `${this.fn} > ${name}`);
      ts.forEachChild(node, (child) => (outside.has(child) ? undefined : this.visit(child)));
      this.names.pop();
    } else ts.forEachChild(node, this.visit);
  };

  /** Hits so far (after the taint engine has fed `onNode`). */
  results(): PatternHit[] {
    return this.hits;
  }

  // ---- matchers ----

  private callLike(node: ts.CallExpression | ts.NewExpression, fn: string): void {
    const index = ts.isCallExpression(node) ? this.rules.calls : this.rules.news;
    if (index.size === 0) return;
    const name = lastName(node.expression, this.aliases);
    if (name === undefined || !index.hasName(name)) return;
    const path = pathOf(node.expression, this.aliases);
    if (!path) return;
    const args = node.arguments ?? [];
    for (const m of index.match(path)) {
      if (m.kind !== 'call' && m.kind !== 'new') continue;
      if (!this.active[m.rule]) continue;
      if (!m.argMatches.every(([i, re]) => {
        const a = args[i];
        const s = a && skipOuter(a);
        return s !== undefined && ts.isStringLiteralLike(s) && re.test(s.text);
      })) continue;
      if (m.argNotConstant) {
        const positions = m.argNotConstant === 'any' ? [...args.keys()] : m.argNotConstant;
        if (!positions.some((i) => args[i] !== undefined && literalOf(args[i]!) === undefined)) continue;
      }
      if (m.argFixed && !m.argFixed.every((i) => args[i] !== undefined && this.fixedValue(args[i]!, 0))) continue;
      if (m.optionMissing && !this.optionMissing(args[m.optionMissing.arg], m.optionMissing.keys)) continue;
      let secret: ts.Node | undefined;
      // A literal matched by a hard-coded-secret rule (CWE-798) is masked in the evidence.
      if (m.argMatches.length > 0 && this.rules.rules[m.rule]?.cwe === 'CWE-798') secret = args[m.argMatches[m.argMatches.length - 1]![0]];
      if (m.optionLiteral) {
        secret = this.optionLiteral(args[m.optionLiteral.arg], m.optionLiteral.keys);
        if (!secret) continue;
      }
      if (m.context && !m.context.test(this.context(node))) continue;
      this.hit(m, node, fn, secret);
    }
  }

  /**
   * A value fixed in the source: a literal or a build of literals, an array of them, `Buffer.from`,
   * `Buffer.alloc` (zeros), `Buffer.of` or `new Uint8Array` of such values, a `const` of the file
   * bound to one, or a property of a `const` object literal holding one.
   */
  private fixedValue(node: ts.Expression, depth: number): boolean {
    if (depth > 4) return false;
    const n = skipOuter(node);
    // `null` is no IV at all (ECB), which the weak-cipher rule is about.
    const lit = literalOf(n);
    if (lit !== undefined) return lit.value !== null;
    if (ts.isTemplateExpression(n)) return n.templateSpans.every((s) => this.fixedValue(s.expression, depth + 1));
    if (ts.isArrayLiteralExpression(n)) return n.elements.every((e) => !ts.isSpreadElement(e) && this.fixedValue(e, depth + 1));
    if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.PlusToken) return this.fixedValue(n.left, depth + 1) && this.fixedValue(n.right, depth + 1);
    if (ts.isIdentifier(n)) {
      const init = constInitializer(n);
      return init !== undefined && this.fixedValue(init, depth + 1);
    }
    if (ts.isPropertyAccessExpression(n) && ts.isIdentifier(n.expression)) {
      const obj = constInitializer(n.expression);
      const o = obj && skipOuter(obj);
      if (!o || !ts.isObjectLiteralExpression(o)) return false;
      const p = o.properties.find((q) => ts.isPropertyAssignment(q) && nameText(q.name) === n.name.text);
      return p !== undefined && ts.isPropertyAssignment(p) && this.fixedValue(p.initializer, depth + 1);
    }
    if (ts.isCallExpression(n) || ts.isNewExpression(n)) {
      const path = pathOf(n.expression, this.aliases)?.join('.');
      if (path === undefined || !FIXED_BUFFER_CALLS.has(path)) return false;
      return (n.arguments ?? []).every((a) => this.fixedValue(a, depth + 1));
    }
    return false;
  }

  /** The non-empty string literal (or `env.X || 'literal'` fallback) an object-literal option sets one of the keys to. */
  private optionLiteral(arg: ts.Expression | undefined, keys: readonly string[]): ts.StringLiteralLike | undefined {
    const a = arg && skipOuter(arg);
    if (!a || !ts.isObjectLiteralExpression(a)) return undefined;
    for (const p of a.properties) {
      if (!ts.isPropertyAssignment(p) || !keys.includes(nameText(p.name) ?? '')) continue;
      const lit = stringValue(p.initializer);
      if (lit && lit.text.length > 0) return lit;
    }
    return undefined;
  }

  /** Options absent, a callback in their place, or an object literal lacking a key or setting it false. */
  private optionMissing(arg: ts.Expression | undefined, keys: readonly string[]): boolean {
    if (!arg) return true;
    const a = skipOuter(arg);
    if (ts.isArrowFunction(a) || ts.isFunctionExpression(a)) return true;
    if (!ts.isObjectLiteralExpression(a)) return false; // a variable: cannot tell
    if (a.properties.some((p) => ts.isSpreadAssignment(p))) return false;
    return keys.some((k) => {
      const p = a.properties.find((q) => q.name !== undefined && nameText(q.name) === k);
      if (!p) return true;
      return ts.isPropertyAssignment(p) && literalOf(p.initializer)?.value === false;
    });
  }

  private property(name: string | undefined, value: ts.Expression, node: ts.Node, fn: string): void {
    if (name === undefined) return;
    const matchers = this.rules.properties.get(name);
    if (!matchers) return;
    for (const m of matchers) {
      if (m.kind !== 'property' || !this.active[m.rule]) continue;
      if (!valueMatches(value, m.values)) continue;
      if (m.context && !m.context.test(this.context(node))) continue;
      this.hit(m, node, fn);
    }
  }

  private binding(name: string | undefined, value: ts.Expression, node: ts.Node, fn: string): void {
    if (name === undefined || this.rules.bindings.length === 0) return;
    const literal = stringValue(value);
    if (!literal) return;
    for (const m of this.rules.bindings) {
      if (m.kind !== 'string_binding' || !this.active[m.rule]) continue;
      if (!m.name.test(name) || m.nameNot.some((re) => re.test(name))) continue;
      if (m.value && !m.value.test(literal.text)) continue;
      if (m.valueNot.some((re) => re.test(literal.text))) continue;
      this.hit(m, node, fn, literal);
    }
  }

  /**
   * A recursive function copying keys in a loop (`for (k in src) … target[k] = …`) with no
   * mention of the keys that reach the prototype: the shape of prototype-pollution bugs.
   */
  private mergeFunction(fn: ts.FunctionLikeDeclaration, name: string, outer: string): void {
    if (this.rules.mergeFunctions.length === 0 || !fn.body) return;
    const own = name.split(/[ .>]/).pop() ?? name;
    const matchers = this.rules.mergeFunctions.filter((m) => m.kind === 'deep_merge_function' && this.active[m.rule] && m.name.test(own));
    if (matchers.length === 0) return;
    const loopVars = new Set<string>();
    let copies = false;
    let recursive = false;
    const loopVar = (init: ts.ForInitializer): void => {
      if (!ts.isVariableDeclarationList(init)) return;
      const n = init.declarations[0]?.name;
      if (n && ts.isIdentifier(n)) loopVars.add(n.text);
      else if (n && ts.isArrayBindingPattern(n)) {
        const first = n.elements[0];
        if (first && ts.isBindingElement(first) && ts.isIdentifier(first.name)) loopVars.add(first.name.text);
      }
    };
    const scan = (node: ts.Node): void => {
      if (ts.isForInStatement(node)) loopVar(node.initializer);
      else if (ts.isForOfStatement(node)) {
        const e = skipOuter(node.expression);
        if (ts.isCallExpression(e) && /^Object\.(keys|entries|getOwnPropertyNames)$/.test(e.expression.getText(this.sf))) loopVar(node.initializer);
      } else if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && /^(forEach)$/.test(node.expression.name.text)) {
        // Object.keys(src).forEach((k) => …)
        const cb = node.arguments[0];
        const p = cb && (ts.isArrowFunction(cb) || ts.isFunctionExpression(cb)) ? cb.parameters[0] : undefined;
        if (p && ts.isIdentifier(p.name)) loopVars.add(p.name.text);
      }
      if (isAssignment(node)) {
        const left = skipOuter(node.left);
        if (ts.isElementAccessExpression(left) && ts.isIdentifier(left.argumentExpression) && loopVars.has(left.argumentExpression.text)) copies = true;
      }
      if (ts.isCallExpression(node) && nameText(skipOuter(node.expression)) === own) recursive = true;
      ts.forEachChild(node, scan);
    };
    scan(fn.body);
    if (!copies || !recursive) return;
    const text = fn.body.getText(this.sf);
    const at = fn.name ?? fn;
    for (const m of matchers) if (m.kind === 'deep_merge_function' && !m.unless.some((re) => re.test(text))) this.hit(m, at, outer);
  }

  /**
   * What a construct is about, for `context:`: the expression chain it sits in up to its statement
   * (`createHash('md5').update(password)`), the name it is bound to (`const token = …`,
   * `otp += …`, `{ nonce: … }` with the names of enclosing object literals), and the enclosing
   * function's own name when the value is what the function returns (`return Math.random()…`, or
   * the bound variable is returned) — a `jitter` computed inside `sessionHandler` is not a token.
   */
  private context(node: ts.Node, callers = true): string {
    const parts: string[] = [];
    let cur: ts.Node = node;
    let bound: string | undefined;
    let returned = false;
    for (let steps = 0; cur.parent && steps < 16; steps++) {
      const p: ts.Node = cur.parent;
      if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p) || ts.isParameter(p)) {
        bound = nameText(p.name);
        parts.push(bound ?? '');
        let outer: ts.Node = p;
        while (ts.isPropertyAssignment(outer) && ts.isObjectLiteralExpression(outer.parent) && outer.parent.parent) {
          outer = outer.parent.parent;
          if (ts.isVariableDeclaration(outer) || ts.isPropertyAssignment(outer)) parts.push(nameText(outer.name) ?? '');
        }
        break;
      }
      if (ts.isBinaryExpression(p) && p.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && p.operatorToken.kind <= ts.SyntaxKind.LastAssignment && p.right === cur) {
        const left = skipOuter(p.left);
        bound = ts.isIdentifier(left) ? left.text : undefined;
        parts.push(left.getText(this.sf));
        break;
      }
      if (ts.isReturnStatement(p) || (ts.isArrowFunction(p) && p.body === cur)) {
        returned = true;
        break;
      }
      if (!ts.isExpression(p) || ts.isFunctionLike(p) || ts.isObjectLiteralExpression(p) || ts.isArrayLiteralExpression(p)) break;
      cur = p;
    }
    const text = cur.getText(this.sf);
    parts.push(text.length > 300 ? text.slice(0, 300) : text);
    let fn: ts.Node | undefined = node.parent;
    while (fn && !ts.isFunctionLike(fn)) fn = fn.parent;
    if (fn && (returned || (bound !== undefined && returnsName(fn as ts.FunctionLikeDeclaration, bound)))) {
      const name = functionName(fn, this.sf, this.aliases);
      parts.push(name);
      // A helper returning the value (`const hash = (s) => createHash('md5')…digest('hex')`) is
      // about what its callers in this file do with it: `user.password = security.hash(pw)`.
      const own = name.split(/[ .>]/).pop();
      if (callers && own && /^[A-Za-z_$][\w$]*$/.test(own)) for (const call of this.callsNamed(own)) parts.push(this.context(call, false));
    }
    return parts.join(' ');
  }

  private callsByName: Map<string, ts.CallExpression[]> | undefined;

  /** Calls in this file whose callee's last name is `name` (`hash(x)`, `security.hash(x)`), at most 50. */
  private callsNamed(name: string): ts.CallExpression[] {
    if (!this.callsByName) {
      const index = new Map<string, ts.CallExpression[]>();
      const scan = (n: ts.Node): void => {
        if (ts.isCallExpression(n)) {
          const callee = skipOuter(n.expression);
          const last = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : undefined;
          if (last !== undefined) {
            const l = index.get(last);
            if (!l) index.set(last, [n]);
            else if (l.length < 50) l.push(n);
          }
        }
        ts.forEachChild(n, scan);
      };
      scan(this.sf);
      this.callsByName = index;
    }
    return this.callsByName.get(name) ?? [];
  }
}

/** Whether a function returns the variable `name` (not looking into nested functions). */
function returnsName(fn: ts.FunctionLikeDeclaration, name: string): boolean {
  const body = fn.body;
  if (!body) return false;
  if (!ts.isBlock(body)) {
    const e = skipOuter(body);
    return ts.isIdentifier(e) && e.text === name;
  }
  let found = false;
  const scan = (n: ts.Node): void => {
    if (found || ts.isFunctionLike(n)) return;
    if (ts.isReturnStatement(n) && n.expression) {
      const e = skipOuter(n.expression);
      if (ts.isIdentifier(e) && e.text === name) found = true;
    }
    ts.forEachChild(n, scan);
  };
  ts.forEachChild(body, scan);
  return found;
}
