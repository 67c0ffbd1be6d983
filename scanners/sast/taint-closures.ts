// ---- local closures ----
// `const where = () => ({ $where: `…${threshold}…` }); find(where())`: a function declared inside
// a function, called with no tainted arguments, can still return (or sink) its enclosing
// function's tainted variables. It runs again at its call site, on the current variable table
// (what it assigns stays inside it), and its returns are the call's value. Bounded: not while
// it is already running (recursion), MAX_INLINE_DEPTH nested, MAX_INLINE_RUNS per engine, and
// only when some variable in scope is tainted.
import ts from 'typescript';
import { functionName, skipOuter } from './ast.ts';
import { TaintBindings } from './taint-bindings.ts';
import { isFunctionNode, MAX_INLINE_DEPTH, MAX_INLINE_RUNS, type FunctionNode, type Taint } from './taint-values.ts';

export abstract class TaintClosures extends TaintBindings {
  protected inlineReturn: { depth: number; label: string; t: Taint | undefined } | undefined;
  protected readonly inlining = new Set<ts.Node>();
  protected inlineRuns = 0;

  /** The function `name` names at `call`: declared in a block of an enclosing function, not shadowed by a parameter. */
  protected localClosure(call: ts.Node, name: string): FunctionNode | undefined {
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

  protected anyTainted(): boolean {
    for (const t of this.vars.values()) if (t) return true;
    for (const o of this.outer) for (const t of o.vars.values()) if (t) return true;
    return false;
  }

  protected inlineClosure(fn: FunctionNode): Taint | undefined {
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

  /** The functions part (taint-functions.ts). */
  protected abstract enter(node: FunctionNode, name: string, params?: (p: ts.NodeArray<ts.ParameterDeclaration>) => void): void;
}
