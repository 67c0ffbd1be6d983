// ---- expressions ----
// What an expression's value carries: sources read (`req.query.x`), propagation through
// operators, literals, members and the propagators rules list, and calls — sinks checked,
// sanitizers applied, project functions followed through summaries, callbacks entered with what
// they receive.
import ts from 'typescript';
import { lastName, pathOf } from './aliases.ts';
import { functionName, skipOuter } from './ast.ts';
import { ROUTE_METHODS, type PropagatorSpec } from './rules.ts';
import { TaintStatements } from './taint-statements.ts';
import { asString, asValue, isFunctionNode, NO_GUARD, union, without, type Taint } from './taint-values.ts';

const ROUTE_METHOD = new Set(ROUTE_METHODS);
// Array methods whose callback receives the receiver's elements (as the given parameter).
const ELEMENT_CALLBACKS = new Map([
  ['forEach', 0], ['map', 0], ['flatMap', 0], ['filter', 0], ['find', 0], ['findLast', 0], ['some', 0], ['every', 0], ['reduce', 1], ['reduceRight', 1],
]);

export abstract class TaintExpressions extends TaintStatements {
  protected override expr(node: ts.Expression): Taint | undefined {
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

  protected member(node: ts.PropertyAccessExpression): Taint | undefined {
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

  protected element(node: ts.ElementAccessExpression): Taint | undefined {
    const base = this.expr(node.expression);
    this.expr(node.argumentExpression);
    if (ts.isStringLiteralLike(node.argumentExpression) && this.rules.sourceMember.hasName(node.argumentExpression.text)) {
      const path = pathOf(node, this.aliases);
      const src = path && this.sourceForPath(path, node, true);
      if (src) return src;
    }
    return asValue(base);
  }

  protected flow(spec: PropagatorSpec, receiver: Taint | undefined, args: ReadonlyArray<Taint | undefined>): Taint | undefined {
    let t = spec.from === 'args' ? undefined : receiver;
    if (spec.from !== 'receiver') for (const a of args) t = union(t, a);
    return t;
  }

  protected call(node: ts.CallExpression): Taint | undefined {
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

  protected taintInto(target: ts.Expression, t: Taint): void {
    let root = skipOuter(target);
    while (ts.isPropertyAccessExpression(root) || ts.isElementAccessExpression(root)) root = skipOuter(root.expression);
    if (ts.isIdentifier(root)) this.set(root.text, union(this.lookup(root.text), { ...t, container: true }));
    // `this.x = tainted` within a method: tracked like a local named `this.x`.
    else if (root.kind === ts.SyntaxKind.ThisKeyword && ts.isPropertyAccessExpression(target) && target.expression.kind === ts.SyntaxKind.ThisKeyword) {
      this.set(`this.${target.name.text}`, t);
    }
  }

  protected newExpression(node: ts.NewExpression): Taint | undefined {
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

  protected binary(node: ts.BinaryExpression): Taint | undefined {
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

  /** Built strings are tainted unless they start with a constant a rule's `prefix` sanitizer accepts. */
  protected built(node: ts.Expression, t: Taint | undefined): Taint | undefined {
    let out = asString(t);
    if (!out || this.rules.sanitizerPrefix.length === 0) return out;
    const lead = this.leading(node);
    if (lead && lead.text.length > 0) for (const p of this.rules.sanitizerPrefix) if (p.regex.test(lead.text)) out = without(out, p.mask);
    return out;
  }

  protected plus(node: ts.BinaryExpression): Taint | undefined {
    const t = union(this.expr(node.left), this.expr(node.right));
    return t && this.built(node, t);
  }

  protected template(node: ts.TemplateExpression): Taint | undefined {
    let t: Taint | undefined;
    for (const span of node.templateSpans) t = union(t, this.expr(span.expression));
    return t && this.built(node, t);
  }

  protected conditional(node: ts.ConditionalExpression): Taint | undefined {
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

  protected objectLiteral(node: ts.ObjectLiteralExpression): Taint | undefined {
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
}
