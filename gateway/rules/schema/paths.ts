// Path templates and the trie request paths are matched against (route matching).
//
// Request paths are read as lenient origins read them before routing: empty segments (`//`) are
// dropped, a literal segment is compared without its `;` parameters (`/pets;x=1`) and, for sites
// with `path_case: insensitive`, without case (`/PETS` is `/pets`), so the operation validated is
// the one the origin will run. A segment that does not decode, or a dot segment, matches nothing.
//
// Paths match with or without a server's base path (`servers: [{url: /v3}]`: `/v3/pet` and `/pet`):
// a document's server URL often names another deployment than the one behind the gateway, and the
// origin answers 404 to a prefix it does not serve. The prefixed form is tried first.
import RE2 from 're2';
import { isObject } from '../../../schemas/json-value.ts';
import { clip, type CompiledOperation } from './model.ts';
import { decode } from './params.ts';

/** Base paths one server URL may expand to through its variables' enums. */
const MAX_SERVER_VARIANTS = 16;

export type TemplateSegment = { kind: 'literal'; value: string } | { kind: 'param'; name: string } | { kind: 'mixed'; pattern: RE2; names: string[] };

export interface Route {
  segments: TemplateSegment[];
  operations: Map<string, CompiledOperation>;
}

interface TrieNode {
  literal: Map<string, TrieNode>;
  /** The same children by lower-case literal (the first declared wins when two differ only in case). */
  folded: Map<string, TrieNode>;
  /** Segments mixing text and parameters (`{name}.json`), by shape. */
  mixed: Map<string, { pattern: RE2; node: TrieNode }>;
  param: TrieNode | null;
  routes: Route[];
}

const newNode = (): TrieNode => ({ literal: new Map(), folded: new Map(), mixed: new Map(), param: null, routes: [] });
/** A decoded segment as literal children are looked up: without `;` parameters. */
const literalKey = (segment: string): string => {
  const semi = segment.indexOf(';');
  return semi < 0 ? segment : segment.slice(0, semi);
};
const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function templateSegments(path: string): TemplateSegment[] {
  return splitPath(path).map((segment): TemplateSegment => {
    const whole = /^\{([^{}]+)\}$/.exec(segment);
    if (whole) return { kind: 'param', name: whole[1]! };
    if (!segment.includes('{')) return { kind: 'literal', value: decode(segment) };
    const names: string[] = [];
    const source = segment
      .split(/(\{[^{}]+\})/)
      .map((part) => {
        if (!part.startsWith('{')) return escapeRegex(part);
        names.push(part.slice(1, -1));
        return '(.+?)';
      })
      .join('');
    return { kind: 'mixed', pattern: new RE2(`^${source}$`, 'u'), names };
  });
}

/** `/a/b/` → ['a', 'b']; the root is no segment, and one trailing slash is not significant. */
function splitPath(path: string): string[] {
  const trimmed = path.replace(/^\/+/, '').replace(/\/$/, '');
  return trimmed === '' ? [] : trimmed.split('/');
}

/** The path prefixes of the servers (`https://api.example.com/v1` → `/v1`), variables expanded, and no prefix. */
export function serverBasePaths(servers: unknown, warn: (message: string) => void): string[] {
  const bases = new Set<string>();
  if (!Array.isArray(servers)) return [''];
  for (const server of servers) {
    if (!isObject(server) || typeof server.url !== 'string') continue;
    let urls = [server.url];
    const variables = isObject(server.variables) ? server.variables : {};
    for (const [name, variable] of Object.entries(variables)) {
      if (!isObject(variable)) continue;
      const values = new Set<string>([variable.default, ...(Array.isArray(variable.enum) ? variable.enum : [])].filter((v): v is string => typeof v === 'string'));
      urls = urls.flatMap((url) => [...values].map((value) => url.split(`{${name}}`).join(value))).slice(0, MAX_SERVER_VARIANTS);
    }
    for (const url of urls) {
      try {
        bases.add(new URL(url, 'http://server.invalid/').pathname.replace(/\/+$/, ''));
      } catch {
        warn(`server URL ${JSON.stringify(clip(url))} is not a URL; its base path is ignored`);
      }
    }
  }
  // The bare path too (see the header); added last so that prefixed routes come first.
  bases.add('');
  return [...bases];
}

export interface Matched {
  route: Route;
  operation: CompiledOperation;
  raw: string[];
}

export type MatchResult = { kind: 'operation'; match: Matched } | { kind: 'no_path' } | { kind: 'no_method' };

/** The routes of a document by path template; a request's method and path find its operation. */
export class RouteTrie {
  readonly root = newNode();
  /** Deepest template; longer request paths cannot match. */
  maxDepth = 0;

  match(method: string, path: string, foldCase = false): MatchResult {
    const raw = splitPath(path).filter((segment) => segment !== '');
    if (raw.length > this.maxDepth) return { kind: 'no_path' };
    const decoded: string[] = [];
    for (const segment of raw) {
      let value: string;
      try {
        value = decodeURIComponent(segment);
      } catch {
        return { kind: 'no_path' };
      }
      // Dot segments would be resolved by the origin into some other path than the one matched.
      if (value === '.' || value === '..') return { kind: 'no_path' };
      decoded.push(value);
    }
    const state = { pathFound: false };
    const found = this.walk(this.root, raw, decoded, 0, method, state, foldCase);
    if (found) return { kind: 'operation', match: { ...found, raw } };
    return { kind: state.pathFound ? 'no_method' : 'no_path' };
  }

  /** Depth first, literal segments before mixed ones before whole-segment parameters. */
  private walk(node: TrieNode, raw: string[], decoded: string[], i: number, method: string, state: { pathFound: boolean }, foldCase: boolean): { route: Route; operation: CompiledOperation } | null {
    if (i === decoded.length) {
      for (const route of node.routes) {
        state.pathFound = true;
        const operation = route.operations.get(method) ?? (method === 'HEAD' ? route.operations.get('GET') : undefined);
        if (operation) return { route, operation };
      }
      return null;
    }
    const segment = decoded[i]!;
    const key = literalKey(segment);
    const literal = node.literal.get(key) ?? (foldCase ? node.folded.get(key.toLowerCase()) : undefined);
    if (literal) {
      const found = this.walk(literal, raw, decoded, i + 1, method, state, foldCase);
      if (found) return found;
    }
    for (const edge of node.mixed.values()) {
      if (!edge.pattern.test(raw[i]!)) continue;
      const found = this.walk(edge.node, raw, decoded, i + 1, method, state, foldCase);
      if (found) return found;
    }
    if (node.param && segment !== '') return this.walk(node.param, raw, decoded, i + 1, method, state, foldCase);
    return null;
  }

  /** Adds a path template; the compiler fills in the route's operations. */
  add(segments: TemplateSegment[]): Route {
    let node = this.root;
    for (const segment of segments) {
      if (segment.kind === 'literal') {
        let next = node.literal.get(segment.value);
        if (!next) {
          node.literal.set(segment.value, (next = newNode()));
          const lower = segment.value.toLowerCase();
          if (!node.folded.has(lower)) node.folded.set(lower, next);
        }
        node = next;
      } else if (segment.kind === 'param') {
        node = node.param ??= newNode();
      } else {
        const key = segment.pattern.source;
        let edge = node.mixed.get(key);
        if (!edge) node.mixed.set(key, (edge = { pattern: segment.pattern, node: newNode() }));
        node = edge.node;
      }
    }
    this.maxDepth = Math.max(this.maxDepth, segments.length);
    const route: Route = { segments, operations: new Map() };
    node.routes.push(route);
    return route;
  }
}
