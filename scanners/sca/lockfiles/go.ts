// Go modules: go.mod and go.sum.
//
// go.mod lists the requirements of the main module (since Go 1.17 every module needed to build its
// packages, direct ones plain and the rest marked `// indirect`); `replace` directives then swap a
// module (one version of it, or all) for another module version or a local directory. The versions
// after replacement are what gets built, so those are reported.
//
// go.sum holds hashes for every module version the go command downloaded while resolving the
// graph: lines ending in `/go.mod` only hash a module's go.mod (its code was not fetched and is not
// built) and are ignored; several versions of one module can appear and minimal version selection
// builds the highest. go.mod is authoritative for every module it names, so go.sum adds only
// modules go.mod does not mention (graph pruning leaves out, for instance, dependencies of tests
// of dependencies). Those extra modules are reported at go.sum's path, at their highest version.
import { compareGo, parseGoVersion } from '../versions/go.ts';
import { dedupePackages, type LockPackage, type ParseIssue, type ParseResult } from './types.ts';

interface Replacement {
  oldVersion?: string;
  newPath: string;
  /** Absent for a replacement by a local directory. */
  newVersion?: string;
}

export interface GoModResult extends ParseResult {
  /** Module paths go.mod speaks for (required or replacing), so go.sum does not add them again. */
  covered: string[];
}

export function parseGoMod(text: string, path: string): GoModResult {
  const issues: ParseIssue[] = [];
  const requires: { module: string; version: string; indirect: boolean; line: number }[] = [];
  const replaces = new Map<string, Replacement[]>();
  let block: string | null = null;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const commentAt = raw.indexOf('//');
    const comment = commentAt >= 0 ? raw.slice(commentAt + 2).trim() : '';
    let tokens = tokenize(commentAt >= 0 ? raw.slice(0, commentAt) : raw);
    if (tokens === null) {
      issues.push({ path, line: i + 1, reason: 'parse_error', message: 'unterminated quoted string' });
      continue;
    }
    if (tokens.length === 0) continue;
    let verb: string;
    if (block !== null) {
      if (tokens.length === 1 && tokens[0] === ')') {
        block = null;
        continue;
      }
      verb = block;
    } else {
      verb = tokens[0]!;
      tokens = tokens.slice(1);
      if (tokens.length === 1 && tokens[0] === '(') {
        block = verb;
        continue;
      }
    }
    if (verb === 'require') {
      if (tokens.length !== 2) {
        issues.push({ path, line: i + 1, reason: 'parse_error', message: 'require needs a module path and a version' });
        continue;
      }
      // `// indirect` may share the comment with other text (`// indirect; reason`).
      requires.push({ module: tokens[0]!, version: tokens[1]!, indirect: /^indirect(\s*;|$)/.test(comment), line: i + 1 });
    } else if (verb === 'replace') {
      const arrow = tokens.indexOf('=>');
      const left = tokens.slice(0, arrow);
      const right = tokens.slice(arrow + 1);
      if (arrow < 0 || left.length < 1 || left.length > 2 || right.length < 1 || right.length > 2) {
        issues.push({ path, line: i + 1, reason: 'parse_error', message: 'replace needs `module [version] => target [version]`' });
        continue;
      }
      const r: Replacement = { newPath: right[0]! };
      if (left[1]) r.oldVersion = left[1];
      if (right[1]) r.newVersion = right[1];
      const list = replaces.get(left[0]!) ?? [];
      list.push(r);
      replaces.set(left[0]!, list);
    }
    // module, go, toolchain, exclude, retract, godebug: nothing to report.
  }

  const out: LockPackage[] = [];
  const covered = new Set<string>();
  for (const req of requires) {
    covered.add(req.module);
    const list = replaces.get(req.module) ?? [];
    // A version-specific replacement beats a module-wide one, as in the go command.
    const r = list.find((x) => x.oldVersion === req.version) ?? list.find((x) => x.oldVersion === undefined);
    if (r && r.newVersion === undefined) {
      issues.push({ path, line: req.line, reason: 'excluded', message: `${req.module}: replaced by local directory ${r.newPath.slice(0, 120)}` });
      continue;
    }
    const module = r ? r.newPath : req.module;
    const version = r?.newVersion ?? req.version;
    covered.add(module);
    out.push({ ecosystem: 'Go', name: module, version, path, direct: !req.indirect });
  }
  return { packages: dedupePackages(out), issues, covered: [...covered] };
}

/** Splits a go.mod line into tokens; quoted ("…" or `…`) module paths are unquoted. Null if a quote is unclosed. */
function tokenize(line: string): string[] | null {
  const out: string[] = [];
  const re = /\s*(?:"((?:[^"\\]|\\.)*)"|`([^`]*)`|(=>|\(|\)|[^\s()"`]+))/y;
  let pos = 0;
  while (pos < line.length) {
    if (/^\s*$/.test(line.slice(pos))) break;
    re.lastIndex = pos;
    const m = re.exec(line);
    if (!m) return null;
    out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : (m[2] ?? m[3]!));
    pos = re.lastIndex;
  }
  return out;
}

export function parseGoSum(text: string, path: string): ParseResult {
  const issues: ParseIssue[] = [];
  const highest = new Map<string, string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    const parts = line.split(/\s+/);
    if (parts.length !== 3 || !parts[2]!.startsWith('h1:')) {
      issues.push({ path, line: i + 1, reason: 'parse_error', message: 'expected `module version h1:hash`' });
      continue;
    }
    const [module, version] = parts as [string, string, string];
    if (version.endsWith('/go.mod')) continue;
    const prev = highest.get(module);
    const cmp = parseGoVersion(version) === null ? null : prev === undefined ? 1 : compareGo(version, prev);
    if (cmp === null) {
      issues.push({ path, line: i + 1, reason: 'parse_error', message: `${module}: invalid version ${version.slice(0, 60)}` });
      continue;
    }
    if (cmp > 0) highest.set(module, version);
  }
  const out: LockPackage[] = [...highest].map(([name, version]) => ({ ecosystem: 'Go', name, version, path }));
  return { packages: out, issues };
}

/** go.mod's packages plus the modules only go.sum knows. Either file may be missing. */
export function mergeGoModules(mod: GoModResult | null, sum: ParseResult | null): ParseResult {
  const covered = new Set(mod?.covered ?? []);
  const extra = (sum?.packages ?? []).filter((p) => !covered.has(p.name));
  return { packages: [...(mod?.packages ?? []), ...extra], issues: [...(mod?.issues ?? []), ...(sum?.issues ?? [])] };
}
