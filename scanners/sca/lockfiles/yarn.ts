// yarn.lock, both dialects. Classic (yarn 1) writes its own indented text format; berry (yarn 2+)
// writes YAML with a `__metadata` entry. Each entry's key lists the specs that resolved to it
// (`lodash@^4.17.15, lodash@^4.17.20`), and its body gives the version (classic) or a
// `resolution` naming the real package and where it came from (berry).
import { isObject } from '../../../schemas/json-value.ts';
import { dedupePackages, type LockPackage, type ParseIssue, type ParseResult } from './types.ts';
import { isNonRegistryNpmResolved, isNonRegistryNpmSource, splitNameAt, str, yamlMapping } from './shared.ts';

export function parseYarnLock(text: string, path: string): ParseResult {
  // Berry always writes `__metadata:` as its first entry; classic never has it.
  if (/^__metadata:/m.test(text)) return parseBerry(text, path);
  return parseClassic(text, path);
}

interface ClassicEntry {
  specs: string[];
  fields: Map<string, string>;
  line: number;
}

/**
 * Classic format: a top-level line (indent 0) lists comma-separated, optionally quoted specs and
 * ends in `:`; its fields follow indented by two spaces as `key value` (value optionally quoted);
 * `dependencies:` and similar open a sub-block indented by four, which is skipped here.
 */
function parseClassic(text: string, path: string): ParseResult {
  const issues: ParseIssue[] = [];
  const entries: ClassicEntry[] = [];
  let current: ClassicEntry | null = null;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const indent = line.length - line.trimStart().length;
    if (indent === 0) {
      if (!line.endsWith(':')) {
        issues.push({ path, line: i + 1, reason: 'parse_error', message: 'expected an entry header ending in ":"' });
        current = null;
        continue;
      }
      current = { specs: splitSpecs(line.slice(0, -1)), fields: new Map(), line: i + 1 };
      entries.push(current);
    } else if (indent === 2 && current) {
      const m = /^ {2}("(?:[^"\\]|\\.)*"|[^\s:]+):?\s*(.*)$/.exec(line);
      if (!m) continue;
      const key = unquote(m[1]!);
      const value = m[2]!;
      // `dependencies:` and friends have no value: their block follows.
      if (value !== '') current.fields.set(key, unquote(value));
    }
  }

  const out: LockPackage[] = [];
  for (const entry of entries) {
    const version = entry.fields.get('version');
    const first = entry.specs[0];
    if (!first || !version) {
      issues.push({ path, line: entry.line, reason: 'parse_error', message: 'entry without a version' });
      continue;
    }
    const parsed = splitNameAt(first);
    if (!parsed) {
      issues.push({ path, line: entry.line, reason: 'parse_error', message: `cannot read spec '${first.slice(0, 120)}'` });
      continue;
    }
    let name = parsed.name;
    let range = parsed.rest;
    // `alias@npm:real-name@^1.0.0`: the installed package is real-name.
    if (range.startsWith('npm:')) {
      const real = splitNameAt(range.slice(4));
      if (real) ({ name, rest: range } = real);
      else range = range.slice(4);
    }
    const resolved = entry.fields.get('resolved');
    if (isNonRegistryNpmSource(range) || (resolved !== undefined && isNonRegistryNpmResolved(resolved))) {
      issues.push({ path, line: entry.line, reason: 'unsupported', message: `${name}@${range.slice(0, 120)}: not from the registry` });
      continue;
    }
    out.push({ ecosystem: 'npm', name, version, path });
  }
  return { packages: dedupePackages(out), issues };
}

function splitSpecs(header: string): string[] {
  const specs: string[] = [];
  const re = /\s*("(?:[^"\\]|\\.)*"|[^,]+)\s*(?:,|$)/g;
  for (let m = re.exec(header); m && m[0] !== ''; m = re.exec(header)) specs.push(unquote(m[1]!.trim()));
  return specs;
}

function unquote(s: string): string {
  const t = s.trim();
  if (t.length >= 2 && t.startsWith('"') && t.endsWith('"')) {
    try {
      return JSON.parse(t) as string;
    } catch {
      return t.slice(1, -1);
    }
  }
  return t;
}

/** Berry: `"lodash@npm:^4.17.15": {version, resolution: "lodash@npm:4.17.21", ...}`. */
function parseBerry(text: string, path: string): ParseResult {
  const read = yamlMapping(text, path);
  if ('issue' in read) return { packages: [], issues: [read.issue] };
  const { doc } = read;
  const issues: ParseIssue[] = [];
  const out: LockPackage[] = [];
  for (const [key, entry] of Object.entries(doc)) {
    if (key === '__metadata' || !isObject(entry)) continue;
    const resolution = str(entry.resolution);
    const parsed = resolution ? splitNameAt(resolution) : null;
    if (!parsed) {
      issues.push({ path, reason: 'parse_error', message: `${key.slice(0, 120)}: no resolution` });
      continue;
    }
    // Only `npm:` resolutions are registry packages. `workspace:` is the project itself, `patch:`
    // repeats an npm entry that is also listed, and git/file/link sources are not the registry's.
    if (!parsed.rest.startsWith('npm:')) {
      if (!/^(workspace|patch):/.test(parsed.rest)) issues.push({ path, reason: 'unsupported', message: `${resolution!.slice(0, 160)}: not from the registry` });
      continue;
    }
    // Non-default registries append `::__archiveUrl=…` to the version.
    const version = parsed.rest.slice(4).split('::')[0]!;
    if (version === '') continue;
    out.push({ ecosystem: 'npm', name: parsed.name, version, path });
  }
  return { packages: dedupePackages(out), issues };
}
