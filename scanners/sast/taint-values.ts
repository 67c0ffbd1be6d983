// Taint values, the shapes the engine hands out (hits, summaries, the call context) and its
// bounds. Pure data and pure functions, no walking: every part of the engine (taint.ts and the
// taint-*.ts layers it is built from) uses them, so they sit below all of those.
import ts from 'typescript';
import type { Project } from './project.ts';

export interface TaintOrigin {
  line: number;
  expression: string;
}

/** One step of a source → sink path: a place (file and line) and what happens there. */
export interface TaintStep {
  path: string;
  line: number;
  note: string;
}

export interface Taint {
  /** One bit per taint rule still live. */
  rules: bigint;
  origin: TaintOrigin;
  /** Went through string building (concatenation, template, `+=`): what `when: string-built` asks for. */
  built: boolean;
  /** The whole request bag or an object/array literal holding tainted values (`when: not-container`). */
  container: boolean;
  /** Only from `strings: true` sources (path parameters, headers): strings, never query operators. */
  strings?: boolean;
  /** How the value got here: the source first, then the hops that matter (bounded). */
  steps?: readonly TaintStep[] | undefined;
  /** While summarising a function: the parameter this value came from. */
  param?: number | undefined;
}

export interface TaintHit {
  rule: number;
  /** The sink: a call, a `new` or an assignment. */
  node: ts.Node;
  callee: string;
  origin: TaintOrigin;
  functionName: string;
  /** The file the sink is in: this one, or a module whose function the flow was followed into. */
  sf: ts.SourceFile;
  path: string;
  /** Source → sink, each step with its file and line. */
  steps: readonly TaintStep[];
}

/** A parameter → sink flow inside a summarised function. */
export interface SummaryHit {
  rule: number;
  node: ts.Node;
  sf: ts.SourceFile;
  path: string;
  callee: string;
  functionName: string;
  /** Carries the parameter (`param`) and the steps from it to the sink. */
  t: Taint;
}

/**
 * What a function does with tainted arguments of a given shape: what its return value carries
 * (relative to its parameters, or from a source of its own) and which parameters reach which sinks.
 */
export interface Summary {
  ret: Taint | undefined;
  hits: SummaryHit[];
  /**
   * A validator: parameter → rule bits its `true` result vouches for (every return is a check that
   * clears the parameter, or a falsy constant): `if (!isSafeName(x)) return` then clears `x`.
   */
  guards?: Map<number, bigint> | undefined;
}

/** Shared by the engines of one analysis (and, through the project, of one scan). */
export interface CallContext {
  project?: Project | undefined;
  memo: Map<string, Summary | undefined>;
  inProgress: Set<string>;
  /** Summaries computed so far; none beyond MAX_SUMMARIES (then calls return clean values again). */
  budget: { summaries: number };
}

export function newCallContext(project?: Project): CallContext {
  return { project, memo: (project?.summaries as Map<string, Summary | undefined> | undefined) ?? new Map(), inProgress: new Set(), budget: { summaries: 0 } };
}

/** Bounds of the interprocedural part (README-rules.md, "Taint engine"). */
export const MAX_SUMMARY_DEPTH = 4;
export const MAX_SUMMARY_HITS = 16;
export const MAX_SUMMARIES = 5000;
export const MAX_STEPS = 12;
/** Local closures run at their call site: nested at most, and runs per engine. */
export const MAX_INLINE_DEPTH = 2;
export const MAX_INLINE_RUNS = 200;
export const MAX_PARAMS = 8;

export type Vars = Map<string, Taint | undefined>;
export interface Clear {
  name: string;
  mask: bigint;
}
export interface Guard {
  whenTrue: Clear[];
  whenFalse: Clear[];
}

export const ALL = -1n;
export const NO_GUARD: Guard = { whenTrue: [], whenFalse: [] };

export function union(a: Taint | undefined, b: Taint | undefined): Taint | undefined {
  if (!a) return b;
  if (!b) return a;
  if (a === b) return a;
  const pick = b.origin.line < a.origin.line ? b : a;
  return {
    rules: a.rules | b.rules,
    origin: pick.origin,
    built: a.built || b.built,
    container: a.container && b.container,
    ...(a.strings && b.strings ? { strings: true } : {}),
    ...(pick.steps ? { steps: pick.steps } : {}),
    ...(pick.param !== undefined ? { param: pick.param } : {}),
  };
}

/** Steps joined, keeping the first and the last ones when there are too many. */
export function joinSteps(...parts: Array<readonly TaintStep[] | TaintStep | undefined>): TaintStep[] {
  const out: TaintStep[] = [];
  for (const p of parts) {
    if (!p) continue;
    for (const s of Array.isArray(p) ? (p as readonly TaintStep[]) : [p as TaintStep]) {
      const last = out[out.length - 1];
      if (last && last.path === s.path && last.line === s.line && last.note === s.note) continue;
      out.push(s);
    }
  }
  return out.length > MAX_STEPS ? [...out.slice(0, 3), ...out.slice(out.length - (MAX_STEPS - 3))] : out;
}

export function without(t: Taint | undefined, mask: bigint): Taint | undefined {
  if (!t) return undefined;
  const rules = t.rules & ~mask;
  if (rules === 0n) return undefined;
  return rules === t.rules ? t : { ...t, rules };
}

export function asValue(t: Taint | undefined): Taint | undefined {
  return t && t.container ? { ...t, container: false } : t;
}

export function asString(t: Taint | undefined): Taint | undefined {
  return t && (!t.built || t.container) ? { ...t, built: true, container: false } : t;
}

export type FunctionNode = ts.FunctionLikeDeclaration;

export function isFunctionNode(node: ts.Node): node is ts.ArrowFunction | ts.FunctionExpression {
  return ts.isArrowFunction(node) || ts.isFunctionExpression(node);
}
