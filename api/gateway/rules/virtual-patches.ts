// A site's virtual patches compiled for the request path.
//
// A patch matches a request when its method and URL pattern match (url-pattern.ts: normalised,
// case-sensitive path) and a value of its parameter matches its regex under RE2 semantics.
//
// Where a parameter's values come from (all of them are inspected):
//   - the query string and an application/x-www-form-urlencoded body (every occurrence of the name);
//   - a JSON body: the top-level key of that name; when the body is an array, the same key in each
//     of its first MAX_VALUES_PER_PARAM object elements (batch APIs); and, for a name with dots
//     (`user.name`, `items.0.id`) that is not itself a top-level key, the nested path. Strings are
//     taken as they are, numbers/booleans/null as their JSON text, an array as its elements (an
//     element that is itself an array as JSON text) and an object as its JSON text.
// Inspection is bounded: each value is cut to its first MAX_VALUE_CHARS characters (so `$` then
// anchors at the cut, and whatever follows is not seen), and past MAX_VALUES_PER_PARAM occurrences
// of one name only the first ones and the last one are tested (the last, because many frameworks
// keep the last of repeated parameters).
//
// Evaluation: patches are grouped by parameter name, and each group's regexes form one RE2.Set, so
// a value is tested once against all of them in a single linear pass. Only the patches whose regex
// hit are then checked for method and path. Of several matching patches the one given first (the
// loader orders by id) wins. A pattern RE2 refuses is reported in `skipped`, never thrown.
// Whether any patch applies to a method and path at all (`inspectsBody`, and the first step of
// `match`) is answered from the patches a ScopeIndex gives for the path's first segment, rather
// than by trying every pattern.
import RE2 from 're2';
import type { VirtualPatchRow } from '../../db/schema.ts';
import { compileUserRegex, type CompiledPattern } from '../../shield/regex.ts';
import type { InspectedRequest } from '../inspected-request.ts';
import { compileUrlPattern, methodMatches, ScopeIndex } from './url-pattern.ts';

export const MAX_VALUE_CHARS = 8 * 1024;
export const MAX_VALUES_PER_PARAM = 32;

export type PatchAction = 'block' | 'challenge' | 'log';

export interface PatchSet {
  skipped: { id: string; reason: string }[];
  /** Whether some patch could apply to this method and path, so the body is worth buffering. */
  inspectsBody(method: string, path: string): boolean;
  match(request: InspectedRequest): { patchId: string; action: PatchAction } | null;
}

export type VirtualPatchSource = Pick<VirtualPatchRow, 'id' | 'url_pattern' | 'method' | 'match_param' | 'match_regex' | 'action' | 'expires_at'>;

type RegexSet = InstanceType<typeof RE2.Set>;

interface CompiledPatch {
  /** Position in the input: the tie-break between matching patches. */
  order: number;
  id: string;
  method: string;
  matchesPath: (path: string) => boolean;
  action: PatchAction;
  regex: CompiledPattern;
}

/** Some patches of one parameter, tested together; `set` null means one by one (see buildChunks). */
interface Chunk {
  set: RegexSet | null;
  /** In input order, so set.match's ascending indices are ascending `order` too. */
  members: CompiledPatch[];
}

interface ParamGroup {
  chunks: Chunk[];
}

const LARGE_SET_MEMORY = 64 * 1024 * 1024;

/**
 * One RE2.Set for all the patterns if RE2 can build it; failing that (a set too big for its memory
 * budget) a larger budget, then halves. A pattern that fits in no set is tested on its own — still
 * RE2, still linear; only slower.
 */
function buildChunks(members: CompiledPatch[]): Chunk[] {
  const regexes = members.map((m) => m.regex);
  for (const options of [undefined, { maxMem: LARGE_SET_MEMORY }]) {
    try {
      return [{ set: new RE2.Set(regexes, 'u', options), members }];
    } catch {
      // try the next budget, then split
    }
  }
  if (members.length === 1) return [{ set: null, members }];
  const half = Math.ceil(members.length / 2);
  return [...buildChunks(members.slice(0, half)), ...buildChunks(members.slice(half))];
}

/** Indices (ascending) of the chunk members whose regex matches. */
function matchingMembers(chunk: Chunk, text: string): number[] {
  if (chunk.set) {
    try {
      return chunk.set.match(text);
    } catch {
      // The set ran out of DFA memory on this input: answer the slow, exact way instead.
    }
  }
  const hits: number[] = [];
  chunk.members.forEach((member, i) => {
    if (member.regex.test(text)) hits.push(i);
  });
  return hits;
}

function isAction(value: string): value is PatchAction {
  return value === 'block' || value === 'challenge' || value === 'log';
}

/** A JSON value as the texts a patch tests (see the file comment). */
function jsonTexts(value: unknown, out: string[]): void {
  if (value === undefined) return;
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) {
    // All elements are listed (the body is already size-capped); the per-parameter cap applies later.
    for (const element of value) {
      if (Array.isArray(element)) out.push(JSON.stringify(element));
      else jsonTexts(element, out);
    }
  } else if (value !== null && typeof value === 'object') out.push(JSON.stringify(value));
  else out.push(String(value));
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The value at a dotted path of own properties (`a.b`, `items.0.id`), or undefined. */
function atPath(root: Record<string, unknown>, path: readonly string[]): unknown {
  let current: unknown = root;
  for (const key of path) {
    if (Array.isArray(current)) {
      const index = /^\d{1,9}$/.test(key) ? Number(key) : -1;
      if (index < 0 || index >= current.length) return undefined;
      current = current[index];
    } else if (isRecord(current) && Object.hasOwn(current, key)) current = current[key];
    else return undefined;
  }
  return current;
}

export function compileVirtualPatches(rows: readonly VirtualPatchSource[], now: number = Date.now()): PatchSet {
  const skipped: { id: string; reason: string }[] = [];
  const matchers = new Map<string, (path: string) => boolean>();
  const byParam = new Map<string, CompiledPatch[]>();
  const byPath = new ScopeIndex<CompiledPatch>();

  rows.forEach((row, order) => {
    if (row.expires_at && new Date(row.expires_at).getTime() <= now) return;
    if (!isAction(row.action)) return void skipped.push({ id: row.id, reason: `unknown action ${JSON.stringify(row.action)}` });
    if (row.match_param === '') return void skipped.push({ id: row.id, reason: 'empty match_param' });
    const regex = compileUserRegex(row.match_regex);
    if (!regex.ok) return void skipped.push({ id: row.id, reason: `match_regex ${regex.reason}` });
    let matchesPath = matchers.get(row.url_pattern);
    if (!matchesPath) {
      matchesPath = compileUrlPattern(row.url_pattern);
      matchers.set(row.url_pattern, matchesPath);
    }
    const patch: CompiledPatch = { order, id: row.id, method: row.method, matchesPath, action: row.action, regex: regex.compiled };
    const group = byParam.get(row.match_param);
    if (group) group.push(patch);
    else byParam.set(row.match_param, [patch]);
    byPath.add(row.url_pattern, patch);
  });

  const groups = new Map<string, ParamGroup>();
  for (const [name, patches] of byParam) groups.set(name, { chunks: buildChunks(patches) });
  return new CompiledPatchSet(skipped, groups, byPath);
}

/** Applies to one request: every value of every inspected parameter, by group, in arrival order. */
type Collected = Map<ParamGroup, string[]>;

// Methods rather than closures made per request: the request path allocates as little as it can.
class CompiledPatchSet implements PatchSet {
  /** Names with dots, also looked up as nested JSON paths. */
  readonly #dotted: { name: string; path: string[]; group: ParamGroup }[];

  constructor(
    readonly skipped: { id: string; reason: string }[],
    private readonly groups: Map<string, ParamGroup>,
    private readonly byPath: ScopeIndex<CompiledPatch>,
  ) {
    this.#dotted = [...groups.entries()].filter(([name]) => name.includes('.')).map(([name, group]) => ({ name, path: name.split('.'), group }));
  }

  inspectsBody(method: string, path: string): boolean {
    for (const patch of this.byPath.candidates(path)) if (methodMatches(patch.method, method) && patch.matchesPath(path)) return true;
    return false;
  }

  match(request: InspectedRequest): { patchId: string; action: PatchAction } | null {
    if (this.groups.size === 0 || !this.inspectsBody(request.method, request.path)) return null;
    const values: Collected = new Map();
    this.#fromParams(values, request.query);
    if (request.bodyState === 'form' && request.form) this.#fromParams(values, request.form);
    if (request.bodyState === 'json') {
      const json = request.json;
      if (isRecord(json)) this.#fromObject(values, json);
      else if (Array.isArray(json)) {
        for (const element of json.slice(0, MAX_VALUES_PER_PARAM)) if (isRecord(element)) this.#fromObject(values, element);
      }
    }

    let best: CompiledPatch | null = null;
    for (const [group, all] of values) {
      const tested = all.length <= MAX_VALUES_PER_PARAM ? all : [...all.slice(0, MAX_VALUES_PER_PARAM - 1), all[all.length - 1]!];
      for (const value of tested) {
        const text = value.length > MAX_VALUE_CHARS ? value.slice(0, MAX_VALUE_CHARS) : value;
        for (const chunk of group.chunks) {
          for (const i of matchingMembers(chunk, text)) {
            const patch = chunk.members[i]!;
            if (best && patch.order >= best.order) break; // ascending: no better one follows
            if (methodMatches(patch.method, request.method) && patch.matchesPath(request.path)) {
              best = patch;
              break;
            }
          }
        }
      }
    }
    return best ? { patchId: best.id, action: best.action } : null;
  }

  #add(values: Collected, group: ParamGroup, texts: readonly string[]): void {
    if (texts.length === 0) return;
    let list = values.get(group);
    if (!list) values.set(group, (list = []));
    // A loop, not push(...texts): a JSON array can hold tens of thousands of values.
    for (const text of texts) list.push(text);
  }

  #fromParams(values: Collected, params: URLSearchParams): void {
    for (const [name, value] of params) {
      const group = this.groups.get(name);
      if (group) this.#add(values, group, [value]);
    }
  }

  #fromObject(values: Collected, body: Record<string, unknown>): void {
    for (const key of Object.keys(body)) {
      const group = this.groups.get(key);
      if (!group) continue;
      const texts: string[] = [];
      jsonTexts(body[key], texts);
      this.#add(values, group, texts);
    }
    for (const { name, path, group } of this.#dotted) {
      if (Object.hasOwn(body, name)) continue;
      const texts: string[] = [];
      jsonTexts(atPath(body, path), texts);
      this.#add(values, group, texts);
    }
  }
}
