// ---- guards ----
// What a condition vouches for where it holds: `x === 'literal'`, `typeof x === 'number'`, a
// sanitizer call (`if (!isValid(x)) return;`), a call of a project function whose summary says it
// validates. The branches of `if`, `?:` and validators' returns clear taint through these.
import ts from 'typescript';
import { lastName, pathOf } from './aliases.ts';
import { isLiteral, skipOuter } from './ast.ts';
import { fixedCollection } from './patterns.ts';
import type { SanitizerSpec } from './rules.ts';
import { TaintReporting } from './taint-reporting.ts';
import { ALL, NO_GUARD, type Clear, type Guard } from './taint-values.ts';

export abstract class TaintGuards extends TaintReporting {
  /** Calls of validator functions seen so far, for `guard` (`if (!isSafe(x)) return`). */
  protected readonly callGuards = new Map<ts.CallExpression, Map<number, bigint>>();

  /** A sanitizer with `arg_constant` applies only when its first argument is such a constant. */
  protected constantArgOk(s: SanitizerSpec, args: readonly ts.Expression[], callee?: ts.Expression): boolean {
    if (s.receiverConstant) {
      const c = callee && skipOuter(callee);
      if (!c || !ts.isPropertyAccessExpression(c) || !fixedCollection(c.expression)) return false;
    }
    if (!s.argConstant) return true;
    const lead = args[0] && this.leading(args[0]);
    return lead !== undefined && lead.complete && s.argConstant.test(lead.text);
  }

  /** Variables a call vouches for: plain identifiers, or the subject of `new URL(x).host`. */
  protected subjects(node: ts.Expression): string[] {
    const n = skipOuter(node);
    if (ts.isIdentifier(n)) return [n.text];
    if (ts.isPropertyAccessExpression(n) || ts.isElementAccessExpression(n)) {
      const base = skipOuter(n.expression);
      return ts.isNewExpression(base) || ts.isCallExpression(base) ? this.subjects(base) : [];
    }
    if (ts.isNewExpression(n) || ts.isCallExpression(n)) return (n.arguments ?? []).flatMap((a) => (ts.isIdentifier(skipOuter(a)) ? [(skipOuter(a) as ts.Identifier).text] : []));
    return [];
  }

  protected guard(cond: ts.Expression): Guard {
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
