// ---- bindings and assignments ----
// Where values land: declarations (destructuring included, which is also how `const { query } =
// req` finds its source), assignments to variables, members (a weak update of the object, and
// assignment sinks) and destructuring targets.
import ts from 'typescript';
import { lastName, pathOf } from './aliases.ts';
import { isLiteral, nodeText, propertyNameText, skipOuter } from './ast.ts';
import { TaintGuards } from './taint-guards.ts';
import { asValue, union, type Taint } from './taint-values.ts';

export abstract class TaintBindings extends TaintGuards {
  /**
   * Binds a declaration's names. `path` is what the initializer names when it is not tainted
   * itself, so `const { query } = req` finds the `req.query` source.
   */
  protected bind(name: ts.BindingName, t: Taint | undefined, path: string[] | undefined): void {
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

  protected sourceForPath(path: readonly string[], node: ts.Node, container: boolean): Taint | undefined {
    if (!this.rules.sourceMember.hasName(path[path.length - 1]!)) return undefined;
    let mask = 0n;
    for (const m of this.rules.sourceMember.match(path)) mask |= m;
    mask &= this.active;
    return mask ? this.origin(node, mask, container, this.rules.stringMember.match(path).length > 0) : undefined;
  }

  protected assign(target: ts.Expression, t: Taint | undefined): void {
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

  protected assignMember(target: ts.PropertyAccessExpression | ts.ElementAccessExpression, t: Taint | undefined): void {
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

  /** The expressions part (taint-expressions.ts). */
  protected abstract expr(node: ts.Expression): Taint | undefined;
}
