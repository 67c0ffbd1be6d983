// ---- variables ----
// The per-function variable tables (tainted names only, plus clean ones shadowing a tainted outer
// name), the string constants in scope, and joining tables where control flow meets. Also the
// constant text an expression starts with, which needs the constants and nothing else.
import ts from 'typescript';
import { skipOuter } from './ast.ts';
import { TaintEngineBase } from './taint-base.ts';
import { union, without, type Clear, type Taint, type Vars } from './taint-values.ts';

export abstract class TaintVariables extends TaintEngineBase {
  protected outerLookup(name: string): Taint | undefined {
    for (let i = this.outer.length - 1; i >= 0; i--) if (this.outer[i]!.vars.has(name)) return this.outer[i]!.vars.get(name);
    return undefined;
  }

  protected lookup(name: string): Taint | undefined {
    return this.vars.has(name) ? this.vars.get(name) : this.outerLookup(name);
  }

  /**
   * The table holds tainted variables only, plus clean ones that shadow a tainted outer name, so
   * the copies made at every branch stay small even in bundles with thousands of locals.
   * Assigning a variable of an enclosing function from a nested one writes a local copy: what a
   * callback does to outer variables stays in the callback, so one route handler mutating a
   * module-level object does not taint it for the next (that would be interprocedural).
   */
  protected set(name: string, t: Taint | undefined): void {
    if (t) this.vars.set(name, t);
    else if (this.outerLookup(name)) this.vars.set(name, undefined);
    else this.vars.delete(name);
  }

  protected constant(name: string): string | undefined {
    const own = this.consts.get(name);
    if (own !== undefined) return own;
    for (let i = this.outer.length - 1; i >= 0; i--) {
      const v = this.outer[i]!.consts.get(name);
      if (v !== undefined) return v;
    }
    return undefined;
  }

  protected snapshot(): Vars {
    return new Map(this.vars);
  }

  /** Union per variable; a state without a variable sees the enclosing functions' value. */
  protected join(states: Vars[]): Vars {
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

  protected applyClears(clears: Clear[]): void {
    for (const c of clears) {
      const t = this.lookup(c.name);
      if (t) this.set(c.name, without(t, c.mask));
    }
  }

  /** The constant text an expression starts with, if its leftmost part is constant. */
  protected leading(node: ts.Expression): { text: string; complete: boolean } | undefined {
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
}
