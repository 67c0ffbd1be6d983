// URL patterns of rate limits, virtual patches and managed-rule exclusions: `*` matches any run of
// characters, `/` included; every other character is literal; the pattern must match the whole path.
//
// Paths are compared in normalised form, read the way the most lenient origin would read them, so
// that an encoding or a router's leniency does not slip past a rule:
//   - the query string and fragment are cut off; an absolute-form target (`http://h/p`) becomes `/p`;
//   - percent-escapes are decoded once, as the origin decodes them (`/%61dmin` → `/admin`; a double
//     encoding `%2561` stays `%61`, which the origin does not read as `a` either), and so are the
//     overlong UTF-8 forms and IIS `%uXXXX` escapes some servers still decode (inspect/percent.ts).
//     Escapes that form no character are kept as written;
//   - the path ends at a NUL (C-string handling in some servers and file systems); `\` is a
//     separator (IIS, Windows);
//   - `;` parameters are removed from every segment (`/search;jsessionid=1` → `/search`,
//     `/x/..;/admin` → `/admin`), as servlet containers do before routing;
//   - runs of `/` collapse into one and `.` / `..` segments are resolved (`/x/../admin` → `/admin`),
//     after decoding, so `%2e%2e` and `%2f` count too;
//   - with `foldCase` (a site's `path_case: insensitive`, the default) path and pattern are compared
//     in lower case, as Express, ASP.NET and IIS route; otherwise case is kept.
// Patterns are decoded, cleaned and slash-merged the same way (`/caf%C3%A9` is `/café`); in a
// pattern `?` and `#` are ordinary characters (they can only meet a decoded `%3F` / `%23` in a path).
// A pattern that does not end in `/` or `*` also matches the same path with one trailing `/`
// (`/login` catches `/login/`), because most frameworks route both to the same handler.
//
// Patterns are never turned into a RegExp: a match is a prefix test, a suffix test and one
// left-to-right indexOf per literal between stars, which is linear and cannot backtrack.
import { decodePercent } from '../inspect/percent.ts';

/** Decodes, then cleans one piece of a path or pattern: NUL ends it, `\` is `/`, `;` parameters go. */
function cleanDecoded(text: string): string {
  let decoded = decodePercent(text, false);
  const nul = decoded.indexOf('\0');
  if (nul >= 0) decoded = decoded.slice(0, nul);
  if (decoded.includes('\\')) decoded = decoded.replace(/\\/g, '/');
  return decoded.includes(';') ? decoded.replace(/;[^/]*/g, '') : decoded;
}

/** A request target as a normalised path; `literal` for patterns, where `?` and `#` are text. */
function normaliseUncached(raw: string, literal = false): string {
  let path = raw;
  const cut = literal ? -1 : path.search(/[?#]/);
  if (cut >= 0) path = path.slice(0, cut);
  if (path.charCodeAt(0) !== 47 /* / */) {
    // A pattern not starting with `/` can match no path; it is only decoded, for consistency.
    if (literal) return cleanDecoded(path);
    const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/]*/.exec(path);
    path = scheme ? path.slice(scheme[0].length) || '/' : `/${path}`;
  }
  // Nothing to decode or resolve: the common case costs a few substring scans.
  if (!/[%;\\\0]|\/\/|\/\./.test(path)) return path;

  const parts = cleanDecoded(path).split('/');
  const segments: string[] = [];
  for (let i = 1; i < parts.length; i++) {
    const segment = parts[i]!;
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const last = parts[parts.length - 1];
  const trailing = segments.length > 0 && parts.length > 1 && (last === '' || last === '.' || last === '..');
  return `/${segments.join('/')}${trailing ? '/' : ''}`;
}

// Every rule of a site normalises the same request path in turn: remembering the last answer makes
// that one normalisation per request, not one per rule.
let lastRaw: string | undefined;
let lastNormalised = '/';
let lastFolded: string | undefined;

/** The path as rules see it (see the file comment). Pure; repeated calls with one path are free. */
export function normalisePath(raw: string, foldCase = false): string {
  if (raw !== lastRaw) {
    lastNormalised = normaliseUncached(raw);
    lastFolded = undefined;
    lastRaw = raw;
  }
  if (!foldCase) return lastNormalised;
  return (lastFolded ??= lastNormalised.toLowerCase());
}

/** A pattern in the form it is compared in: normalised (see the file comment) and, with `foldCase`, lower case. */
function patternText(pattern: string, foldCase: boolean): string {
  const text = normaliseUncached(pattern, true);
  return foldCase ? text.toLowerCase() : text;
}

/** Literals between stars, written the way normalised paths are (decoded, cleaned, single slashes). */
function patternPieces(pattern: string, foldCase: boolean): string[] {
  return pattern.split('*').map((piece) => {
    const text = cleanDecoded(piece).replace(/\/{2,}/g, '/');
    return foldCase ? text.toLowerCase() : text;
  });
}

export function compileUrlPattern(pattern: string, foldCase = false): (path: string) => boolean {
  if (!pattern.includes('*')) {
    const target = patternText(pattern, foldCase);
    const lenient = !target.endsWith('/');
    return (path) => {
      const p = normalisePath(path, foldCase);
      return p === target || (lenient && p.length === target.length + 1 && p.endsWith('/') && p.startsWith(target));
    };
  }

  const pieces = patternPieces(pattern, foldCase);
  const prefix = pieces[0]!;
  const suffix = pieces[pieces.length - 1]!;
  const middles = pieces.slice(1, -1).filter((piece) => piece !== '');
  const minLength = prefix.length + suffix.length + middles.reduce((n, piece) => n + piece.length, 0);
  const lenient = suffix !== '' && !suffix.endsWith('/');

  const glob = (p: string, end: number): boolean => {
    if (end < minLength || !p.startsWith(prefix) || !p.startsWith(suffix, end - suffix.length)) return false;
    const limit = end - suffix.length;
    let at = prefix.length;
    // Taking each literal at its leftmost place leaves the most room for the rest: no backtracking.
    for (const piece of middles) {
      const found = p.indexOf(piece, at);
      if (found < 0 || found + piece.length > limit) return false;
      at = found + piece.length;
    }
    return true;
  };
  return (path) => {
    const p = normalisePath(path, foldCase);
    return glob(p, p.length) || (lenient && p.length > 1 && p.endsWith('/') && glob(p, p.length - 1));
  };
}

/**
 * `ANY` matches every method; otherwise the methods must be equal, ignoring case — and a `GET` rule
 * also covers `HEAD`, which Express, Rails and most servers answer with the GET handler.
 */
export function methodMatches(ruleMethod: string, method: string): boolean {
  // Stored methods are upper case: the common answers need no case folding.
  if (ruleMethod === method || ruleMethod === 'ANY') return true;
  const rule = ruleMethod.toUpperCase();
  const asked = method.toUpperCase();
  return rule === 'ANY' || rule === asked || (rule === 'GET' && asked === 'HEAD');
}

/**
 * The first path segment shared by every path the pattern matches (`/api/*` → `api`, `/login` →
 * `login`, `/` → ``), or null when the pattern leaves it open (`/*`, `/ap*`). Lets callers bucket
 * many patterns by segment and test only the plausible ones; `firstSegment` gives a path's key.
 */
export function patternScope(pattern: string, foldCase = false): string | null {
  const star = pattern.indexOf('*');
  const literal = star < 0 ? patternText(pattern, foldCase) : patternPieces(pattern.slice(0, star), foldCase)[0]!;
  if (literal.charCodeAt(0) !== 47) return null;
  const slash = literal.indexOf('/', 1);
  if (slash >= 0) return literal.slice(1, slash);
  return star < 0 ? literal.slice(1) : null;
}

/** The first segment of a normalised path (`/api/items` → `api`, `/` → ``). */
export function firstSegment(normalisedPath: string): string {
  const slash = normalisedPath.indexOf('/', 1);
  return slash < 0 ? normalisedPath.slice(1) : normalisedPath.slice(1, slash);
}

/**
 * Items keyed by URL pattern, looked up by path: only the items whose pattern could match the
 * path's first segment are returned, in the order they were added, so that a site's hundreds of
 * rules cost a map lookup and a short loop rather than a test each. Callers still test each
 * returned item's full pattern.
 */
export class ScopeIndex<T> {
  /** Patterns and paths compared in lower case (a site's `path_case: insensitive`). */
  constructor(private readonly foldCase = false) {}

  /** Items whose pattern leaves the first segment open (`/*`): candidates for every path. */
  readonly #anywhere: Entry<T>[] = [];
  readonly #anywhereItems: T[] = [];
  readonly #scoped = new Map<string, Entry<T>[]>();
  /** Per scope, its items and the anywhere items merged in insertion order; built on first use. */
  readonly #merged = new Map<string, readonly T[]>();
  #count = 0;

  add(pattern: string, item: T): void {
    const scope = patternScope(pattern, this.foldCase);
    const entry = { order: this.#count++, item };
    if (scope === null) {
      this.#anywhere.push(entry);
      this.#anywhereItems.push(item);
    } else {
      const bucket = this.#scoped.get(scope);
      if (bucket) bucket.push(entry);
      else this.#scoped.set(scope, [entry]);
    }
    this.#merged.clear();
  }

  get size(): number {
    return this.#count;
  }

  /** Items whose pattern may match `path` (raw or normalised), in insertion order. */
  candidates(path: string): readonly T[] {
    if (this.#scoped.size === 0) return this.#anywhereItems;
    const scope = firstSegment(normalisePath(path, this.foldCase));
    const bucket = this.#scoped.get(scope);
    if (!bucket) return this.#anywhereItems;
    let merged = this.#merged.get(scope);
    if (!merged) {
      merged = [...bucket, ...this.#anywhere].sort((a, b) => a.order - b.order).map((e) => e.item);
      this.#merged.set(scope, merged);
    }
    return merged;
  }
}

interface Entry<T> {
  order: number;
  item: T;
}
