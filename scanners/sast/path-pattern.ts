// Dotted path patterns that rules use to name callees and members (`child_process.exec`,
// `*.query`, `{req,request}.body`), and an index that finds the patterns matching a path by its last
// segment, so a node is tested only against the few patterns that end with its name.
//
// A path is what an expression resolves to, as segments: `cp.exec` with `cp = require('node:child_process')`
// is [child_process, exec]; `res.status(404).send` is [res, status(), send]; an unresolvable
// receiver is `?`. In a pattern, `*` matches exactly one segment, except in first position where it
// matches one or more (any receiver: `*.query` matches `db.query` and `this.pool.query`), and
// `{a,b}` alternatives are expanded when the rule is loaded (`{a,}` allows an empty alternative).

/** Expands `{a,b}` alternatives, nested or repeated, into every combination. */
export function expandBraces(pattern: string): string[] {
  const open = pattern.indexOf('{');
  if (open < 0) return [pattern];
  let depth = 0;
  let close = -1;
  const commas: number[] = [];
  for (let i = open; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '{') depth++;
    else if (c === '}' && --depth === 0) {
      close = i;
      break;
    } else if (c === ',' && depth === 1) commas.push(i);
  }
  if (close < 0) throw new Error(`unbalanced '{' in pattern '${pattern}'`);
  const bounds = [open, ...commas, close];
  const head = pattern.slice(0, open);
  const tail = pattern.slice(close + 1);
  const out: string[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const alternative = pattern.slice(bounds[i]! + 1, bounds[i + 1]);
    for (const expanded of expandBraces(head + alternative + tail)) out.push(expanded);
  }
  return out;
}

export interface PathPattern {
  /** The expanded pattern text, for messages. */
  text: string;
  segments: string[];
  /** First segment is `*`: matches one or more leading segments. */
  anyReceiver: boolean;
}

const SEGMENT = /^(?:\*|[^.\s{}*]+)$/;

export function parsePathPattern(text: string): PathPattern {
  const segments = text.split('.');
  for (const s of segments) {
    if (!SEGMENT.test(s)) throw new Error(`invalid path pattern '${text}': bad segment '${s}'`);
  }
  return { text, segments, anyReceiver: segments.length > 1 && segments[0] === '*' };
}

export function matchPath(pattern: PathPattern, path: readonly string[]): boolean {
  const p = pattern.segments;
  if (pattern.anyReceiver ? path.length < p.length : path.length !== p.length) return false;
  // Compare from the end: the receiver wildcard absorbs whatever is left at the front.
  for (let i = 1; i <= (pattern.anyReceiver ? p.length - 1 : p.length); i++) {
    const want = p[p.length - i]!;
    if (want !== '*' && want !== path[path.length - i]) return false;
  }
  return true;
}

/**
 * Patterns with a value each, looked up by a path's last segment. `hasName` is the cheap test a
 * walker does before it builds a node's full path.
 */
export class PathIndex<T> {
  private readonly byLast = new Map<string, Array<{ pattern: PathPattern; value: T }>>();
  private readonly anyLast: Array<{ pattern: PathPattern; value: T }> = [];
  size = 0;

  add(pattern: PathPattern, value: T): void {
    const last = pattern.segments[pattern.segments.length - 1]!;
    const entry = { pattern, value };
    this.size++;
    if (last === '*') this.anyLast.push(entry);
    else {
      const list = this.byLast.get(last);
      if (list) list.push(entry);
      else this.byLast.set(last, [entry]);
    }
  }

  hasName(name: string): boolean {
    return this.anyLast.length > 0 || this.byLast.has(name);
  }

  match(path: readonly string[]): T[] {
    const last = path[path.length - 1];
    if (last === undefined) return [];
    const out: T[] = [];
    for (const e of this.byLast.get(last) ?? []) if (matchPath(e.pattern, path)) out.push(e.value);
    for (const e of this.anyLast) if (matchPath(e.pattern, path)) out.push(e.value);
    return out;
  }
}

/**
 * Identifier-like words a file must contain for the pattern to possibly match it: every concrete
 * segment, split where a module name has punctuation (`node-fetch` → node, fetch). Used by the
 * prefilter, which tests them against the identifiers found in the text (strings included).
 */
export function requiredWords(pattern: PathPattern): string[] {
  const words: string[] = [];
  for (const s of pattern.segments) {
    if (s === '*') continue;
    for (const w of s.replace(/\(\)$/, '').split(/[^A-Za-z0-9_$]+/)) if (w) words.push(w);
  }
  return words;
}
