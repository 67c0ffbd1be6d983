// A site's virtual patches compiled for the request path.
//
// A patch matches a request when its method and URL pattern match (url-pattern.ts: normalised path,
// compared in lower case unless the site's `path_case` is `sensitive`) and a value of its parameter
// matches its regex under RE2 semantics.
//
// Which values are a parameter's (inspect/: every one of them is tested, whole):
//   - the request's fields from the query string, a form body, a multipart body (text parts, and a
//     file part's content when a patch names that part) and a JSON body — cookies are not parameters;
//   - names compare in lower case and without bracket suffixes: a patch on `q` sees `q`, `Q`, `q[]`,
//     `q[0]` and `q[key]` (inspect/names.ts);
//   - in a JSON body (and in bracket names) a patch on a key sees that key at any depth and every
//     scalar below it (`user` sees `user.name`), and a dotted name (`user.name`, `items.0.id`) names a
//     path. Strings are tested unescaped, numbers, booleans and null as their JSON text; every value
//     of a key an object repeats is tested;
//   - a parameter sent more than once is tested value by value and as the values joined with `,`;
//   - a value holding NUL characters is also tested without them.
// The gateway bounds what is inspected (body cap, MAX_FIELDS) and refuses requests beyond the bounds
// when a patch needs to read them, so nothing past a bound goes through unseen.
//
// Evaluation: patches are grouped by parameter name, and each group's regexes form one RE2.Set, so
// a value is tested once against all of them in a single linear pass. Only the patches whose regex
// hit are then checked for method and path. Of several matching patches the one given first (the
// loader orders by id) wins. A pattern RE2 refuses is reported in `skipped`, never thrown.
// Whether any patch applies to a method and path at all (`inspectsBody`, and the first step of
// `match`) is answered from the patches a ScopeIndex gives for the path's first segment, rather
// than by trying every pattern.
import RE2 from 're2';
import type { VirtualPatchRow } from '../../platform/db/schema.ts';
import { compileUserRegex, type CompiledPattern } from '../../schemas/checks/regex.ts';
import type { InspectedRequest } from '../inspected-request.ts';
import { compileUrlPattern, methodMatches, ScopeIndex } from './url-pattern.ts';

export type PatchAction = 'block' | 'challenge' | 'log';

export interface PatchSet {
  skipped: { id: string; reason: string }[];
  /** Whether some patch could apply to this method and path, so the body is worth buffering. */
  inspectsBody(method: string, path: string): boolean;
  /** Whether some patch names this parameter (lower case): a multipart file part of that name is read. */
  names(name: string): boolean;
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

export function compileVirtualPatches(rows: readonly VirtualPatchSource[], now: number = Date.now(), foldCase = false): PatchSet {
  const skipped: { id: string; reason: string }[] = [];
  const matchers = new Map<string, (path: string) => boolean>();
  const byParam = new Map<string, CompiledPatch[]>();
  const byPath = new ScopeIndex<CompiledPatch>(foldCase);

  rows.forEach((row, order) => {
    if (row.expires_at && new Date(row.expires_at).getTime() <= now) return;
    if (!isAction(row.action)) return void skipped.push({ id: row.id, reason: `unknown action ${JSON.stringify(row.action)}` });
    if (row.match_param === '') return void skipped.push({ id: row.id, reason: 'empty match_param' });
    const regex = compileUserRegex(row.match_regex);
    if (!regex.ok) return void skipped.push({ id: row.id, reason: `match_regex ${regex.reason}` });
    let matchesPath = matchers.get(row.url_pattern);
    if (!matchesPath) {
      matchesPath = compileUrlPattern(row.url_pattern, foldCase);
      matchers.set(row.url_pattern, matchesPath);
    }
    const patch: CompiledPatch = { order, id: row.id, method: row.method, matchesPath, action: row.action, regex: regex.compiled };
    const name = row.match_param.toLowerCase();
    const group = byParam.get(name);
    if (group) group.push(patch);
    else byParam.set(name, [patch]);
    byPath.add(row.url_pattern, patch);
  });

  const groups = new Map<string, ParamGroup>();
  for (const [name, patches] of byParam) groups.set(name, { chunks: buildChunks(patches) });
  return new CompiledPatchSet(skipped, groups, byPath);
}

// Methods rather than closures made per request: the request path allocates as little as it can.
class CompiledPatchSet implements PatchSet {
  constructor(
    readonly skipped: { id: string; reason: string }[],
    private readonly groups: Map<string, ParamGroup>,
    private readonly byPath: ScopeIndex<CompiledPatch>,
  ) {}

  inspectsBody(method: string, path: string): boolean {
    for (const patch of this.byPath.candidates(path)) if (methodMatches(patch.method, method) && patch.matchesPath(path)) return true;
    return false;
  }

  names(name: string): boolean {
    return this.groups.has(name);
  }

  match(request: InspectedRequest): { patchId: string; action: PatchAction } | null {
    if (this.groups.size === 0 || !this.inspectsBody(request.method, request.path)) return null;
    let best: CompiledPatch | null = null;
    for (const field of request.fields) {
      // Patches name parameters of queries, forms and JSON (the specification's); XML elements are the managed rules' to read.
      if (field.source === 'cookie' || field.source === 'file_name' || field.source === 'xml') continue;
      for (const name of field.names) {
        const group = this.groups.get(name);
        if (!group) continue;
        best = this.#test(group, field.value, request, best);
        if (field.value.includes('\0')) best = this.#test(group, field.value.replace(/\0/g, ''), request, best);
      }
    }
    return best ? { patchId: best.id, action: best.action } : null;
  }

  /** The better of `best` and the first patch of `group` matching `text` and the request. */
  #test(group: ParamGroup, text: string, request: InspectedRequest, best: CompiledPatch | null): CompiledPatch | null {
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
    return best;
  }
}
