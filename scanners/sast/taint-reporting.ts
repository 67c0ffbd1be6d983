// ---- reporting ----
// Where taint starts (a source's value and first step) and where it ends (a sink's checks and the
// hit, or while summarising a function, the parameter → sink flow): the two ends of every path.
import ts from 'typescript';
import { pathOf } from './aliases.ts';
import { isLiteral, nodeText, propertyNameText, skipOuter } from './ast.ts';
import { matchPath, type PathPattern } from './path-pattern.ts';
import type { SinkSpec } from './rules.ts';
import { TaintVariables } from './taint-variables.ts';
import { isFunctionNode, joinSteps, MAX_SUMMARY_HITS, type Taint, type TaintStep } from './taint-values.ts';

export abstract class TaintReporting extends TaintVariables {
  protected origin(node: ts.Node, mask: bigint, container: boolean, strings = false): Taint {
    const line = this.lineOf(node);
    const expression = nodeText(node, this.sf);
    return { rules: mask, origin: { line, expression }, built: false, container, ...(strings ? { strings } : {}), steps: [{ path: this.file, line, note: `source ${nodeText(node, this.sf, 60)}` }] };
  }

  protected report(rule: number, node: ts.Node, callee: string, t: Taint): void {
    const steps = joinSteps(t.steps, { path: this.file, line: this.lineOf(node), note: `sink ${callee}` });
    this.record(rule, node, this.sf, this.file, callee, t, steps, this.fn);
  }

  protected record(rule: number, node: ts.Node, sf: ts.SourceFile, path: string, callee: string, t: Taint, steps: readonly TaintStep[], fn: string): void {
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

  protected checkSink(spec: SinkSpec, node: ts.Node, callee: string, argNodes: readonly ts.Expression[], argTaints: ReadonlyArray<Taint | undefined>): void {
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
  protected calledAlongside(node: ts.Node, paths: readonly PathPattern[], argNodes: readonly ts.Expression[]): boolean {
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
}

function hasOptionKey(node: ts.Expression, keys: readonly string[]): boolean {
  const n = skipOuter(node);
  return ts.isObjectLiteralExpression(n) && n.properties.some((p) => p.name !== undefined && keys.includes(propertyNameText(p.name) ?? ''));
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
