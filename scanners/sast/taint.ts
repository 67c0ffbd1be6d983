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
//
// The engine is one class built in layers, a module for each part (taint-base.ts explains the
// layering): values and bounds (taint-values.ts), state (taint-base.ts), variables, reporting
// (sources and sinks), guards, bindings and assignments, local closures, function summaries,
// framework heuristics (parameters and route handlers that are sources), functions and classes,
// statements, expressions. This module closes the chain and is the one entry importers use.
import type { FileModel } from './project.ts';
import { TaintExpressions } from './taint-expressions.ts';

export {
  MAX_INLINE_DEPTH,
  MAX_INLINE_RUNS,
  MAX_STEPS,
  MAX_SUMMARIES,
  MAX_SUMMARY_DEPTH,
  MAX_SUMMARY_HITS,
  newCallContext,
  type CallContext,
  type Summary,
  type TaintHit,
  type TaintOrigin,
  type TaintStep,
} from './taint-values.ts';

export class TaintEngine extends TaintExpressions {
  /** Summaries run the whole engine over the callee's body, one level deeper, sharing the context. */
  protected override summaryEngine(model: FileModel, active: bigint): TaintEngine {
    return new TaintEngine(model.sf, this.rules, model.aliases, active, undefined, this.ctx, model, this.depth + 1);
  }
}
