// Just enough lexing of one line of JavaScript/TypeScript or Python to find a call's argument list
// and split a string concatenation. Anything it does not fully understand (comments, nested
// templates, regex literals, multi-line calls) makes it return undefined: the patch writers then
// write no patch rather than a wrong one.

export interface CallArgs {
  /** Index just after the opening parenthesis. */
  open: number;
  /** Index of the closing parenthesis. */
  close: number;
  /** Top-level arguments, trimmed. */
  args: string[];
}

const QUOTES = new Set(["'", '"', '`']);

/** Index after the string literal starting at `i` (a quote), or -1 when it does not end on the line. */
function skipString(s: string, i: number): number {
  const q = s[i]!;
  for (let j = i + 1; j < s.length; j++) {
    const c = s[j]!;
    if (c === '\\') j++;
    else if (q === '`' && c === '$' && s[j + 1] === '{') return -1; // template with substitutions: caller handles
    else if (c === q) return j + 1;
  }
  return -1;
}

/** Index after the template literal at `i`, substitutions included (one level, no nested templates). */
function skipTemplate(s: string, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    const c = s[j]!;
    if (c === '\\') j++;
    else if (c === '`') return j + 1;
    else if (c === '$' && s[j + 1] === '{') {
      const end = s.indexOf('}', j + 2);
      if (end < 0 || /[`'"{]/.test(s.slice(j + 2, end))) return -1;
      j = end;
    }
  }
  return -1;
}

function skipLiteral(s: string, i: number): number {
  return s[i] === '`' ? skipTemplate(s, i) : skipString(s, i);
}

/** The arguments of the call whose `(` is at `paren`, when the call closes on this line. */
export function callArgs(line: string, paren: number): CallArgs | undefined {
  if (line[paren] !== '(') return undefined;
  const args: string[] = [];
  let depth = 0;
  let start = paren + 1;
  for (let i = paren + 1; i < line.length; i++) {
    const c = line[i]!;
    if (QUOTES.has(c)) {
      const end = skipLiteral(line, i);
      if (end < 0) return undefined;
      i = end - 1;
    } else if (c === '/' && (line[i + 1] === '/' || line[i + 1] === '*')) return undefined;
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) {
        if (c !== ')') return undefined;
        const last = line.slice(start, i).trim();
        if (last !== '' || args.length > 0) args.push(last);
        return { open: paren + 1, close: i, args };
      }
      depth--;
    } else if (c === ',' && depth === 0) {
      args.push(line.slice(start, i).trim());
      start = i + 1;
    }
  }
  return undefined;
}

export type Part = { kind: 'literal'; quote: string; raw: string } | { kind: 'expr'; text: string };

/** A plain value reference: `name`, `req.query.id`, `row?.id`, `args[0]`, `body['name']`. */
export const SIMPLE_EXPR = /^[A-Za-z_$][\w$]*(?:(?:\?\.|\.)[A-Za-z_$][\w$]*|\[(?:\d+|'[\w-]*'|"[\w-]*")\])*$/;

/**
 * `'a' + x + "b"` or `` `a${x}b` `` as literal and expression parts (literals keep their raw,
 * still-escaped text). Undefined unless every expression is a SIMPLE_EXPR.
 */
export function concatParts(arg: string): Part[] | undefined {
  const parts: Part[] = [];
  let i = 0;
  const s = arg.trim();
  while (i < s.length) {
    while (s[i] === ' ') i++;
    const c = s[i];
    if (c === undefined) break;
    if (c === '`') {
      const end = skipTemplate(s, i);
      if (end < 0) return undefined;
      const body = s.slice(i + 1, end - 1);
      let from = 0;
      for (const m of body.matchAll(/\$\{([^}]*)\}/g)) {
        parts.push({ kind: 'literal', quote: '`', raw: body.slice(from, m.index) });
        const expr = m[1]!.trim();
        if (!SIMPLE_EXPR.test(expr)) return undefined;
        parts.push({ kind: 'expr', text: expr });
        from = m.index + m[0].length;
      }
      parts.push({ kind: 'literal', quote: '`', raw: body.slice(from) });
      i = end;
    } else if (c === "'" || c === '"') {
      const end = skipString(s, i);
      if (end < 0) return undefined;
      parts.push({ kind: 'literal', quote: c, raw: s.slice(i + 1, end - 1) });
      i = end;
    } else {
      const m = /^[A-Za-z_$][\w$]*(?:(?:\?\.|\.)[A-Za-z_$][\w$]*|\[(?:\d+|'[\w-]*'|"[\w-]*")\])*/.exec(s.slice(i));
      if (!m) return undefined;
      parts.push({ kind: 'expr', text: m[0] });
      i += m[0].length;
    }
    while (s[i] === ' ') i++;
    if (i < s.length) {
      if (s[i] !== '+') return undefined;
      i++;
    }
  }
  return parts;
}
