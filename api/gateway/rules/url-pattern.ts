// URL patterns of rate limits and virtual patches: `*` matches any run of characters, `/` included;
// every other character is literal; the pattern must match the whole path.
//
// Paths are compared in normalised form, so that encoding tricks do not slip past a rule:
//   - the query string and fragment are cut off; an absolute-form target (`http://h/p`) becomes `/p`;
//   - percent-escapes are decoded once, as the origin decodes them (`/%61dmin` → `/admin`; a double
//     encoding `%2561` stays `%61`, which the origin does not read as `a` either). Malformed or
//     non-UTF-8 escapes are kept as written;
//   - runs of `/` collapse into one and `.` / `..` segments are resolved (`/x/../admin` → `/admin`),
//     after decoding, so `%2e%2e` and `%2f` count too;
//   - case is kept: matching is case-sensitive, like nginx locations and Cloudflare's path rules.
//     `\` and `;` are not separators here.
// Patterns are decoded and slash-merged the same way (`/caf%C3%A9` is `/café`); in a pattern `?` and
// `#` are ordinary characters (they can only meet a decoded `%3F` / `%23` in a path).
// A pattern that does not end in `/` or `*` also matches the same path with one trailing `/`
// (`/login` catches `/login/`), because most frameworks route both to the same handler.
//
// Patterns are never turned into a RegExp: a match is a prefix test, a suffix test and one
// left-to-right indexOf per literal between stars, which is linear and cannot backtrack.

/** Decodes the valid %XX runs of `text` that form UTF-8 (or ASCII); anything else stays literal. */
function percentDecode(text: string): string {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    // A stray `%` or an invalid byte sequence somewhere: decode what can be decoded, run by run.
    return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run.replace(/%([0-7][0-9A-Fa-f])/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
      }
    });
  }
}

/** A request target as a normalised path; `literal` for patterns, where `?` and `#` are text. */
function normaliseUncached(raw: string, literal = false): string {
  let path = raw;
  const cut = literal ? -1 : path.search(/[?#]/);
  if (cut >= 0) path = path.slice(0, cut);
  if (path.charCodeAt(0) !== 47 /* / */) {
    // A pattern not starting with `/` can match no path; it is only decoded, for consistency.
    if (literal) return percentDecode(path);
    const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/]*/.exec(path);
    path = scheme ? path.slice(scheme[0].length) || '/' : `/${path}`;
  }
  // Nothing to decode or resolve: the common case costs three substring scans.
  if (!path.includes('%') && !path.includes('//') && !path.includes('/.')) return path;

  const parts = percentDecode(path).split('/');
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

/** The path as rules see it (see the file comment). Pure; repeated calls with one path are free. */
export function normalisePath(raw: string): string {
  if (raw !== lastRaw) {
    lastNormalised = normaliseUncached(raw);
    lastRaw = raw;
  }
  return lastNormalised;
}

export function compileUrlPattern(pattern: string): (path: string) => boolean {
  if (!pattern.includes('*')) {
    const target = normaliseUncached(pattern, true);
    const lenient = !target.endsWith('/');
    return (path) => {
      const p = normalisePath(path);
      return p === target || (lenient && p.length === target.length + 1 && p.endsWith('/') && p.startsWith(target));
    };
  }

  // Literals between stars, written the way normalised paths are (decoded, single slashes).
  const pieces = pattern.split('*').map((piece) => percentDecode(piece).replace(/\/{2,}/g, '/'));
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
    const p = normalisePath(path);
    return glob(p, p.length) || (lenient && p.length > 1 && p.endsWith('/') && glob(p, p.length - 1));
  };
}

/** `ANY` matches every method; otherwise the methods must be equal, ignoring case. */
export function methodMatches(ruleMethod: string, method: string): boolean {
  // Stored methods are upper case: the common answers need no case folding.
  if (ruleMethod === method || ruleMethod === 'ANY') return true;
  const rule = ruleMethod.toUpperCase();
  return rule === 'ANY' || rule === method.toUpperCase();
}

/**
 * The first path segment shared by every path the pattern matches (`/api/*` → `api`, `/login` →
 * `login`, `/` → ``), or null when the pattern leaves it open (`/*`, `/ap*`). Lets callers bucket
 * many patterns by segment and test only the plausible ones; `firstSegment` gives a path's key.
 */
export function patternScope(pattern: string): string | null {
  const star = pattern.indexOf('*');
  const literal = star < 0 ? normaliseUncached(pattern, true) : percentDecode(pattern.slice(0, star)).replace(/\/{2,}/g, '/');
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
  /** Items whose pattern leaves the first segment open (`/*`): candidates for every path. */
  readonly #anywhere: Entry<T>[] = [];
  readonly #anywhereItems: T[] = [];
  readonly #scoped = new Map<string, Entry<T>[]>();
  /** Per scope, its items and the anywhere items merged in insertion order; built on first use. */
  readonly #merged = new Map<string, readonly T[]>();
  #count = 0;

  add(pattern: string, item: T): void {
    const scope = patternScope(pattern);
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
    const scope = firstSegment(normalisePath(path));
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
