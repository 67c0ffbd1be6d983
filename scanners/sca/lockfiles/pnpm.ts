// pnpm-lock.yaml. The `packages` map is keyed by package and version, spelled differently per
// lockfile version:
//   v5.x  `/name/1.2.3` or `/@scope/name/1.2.3_peer@2.0.0+other@1.0.0`
//   v6.x  `/name@1.2.3` or `/@scope/name@1.2.3(peer@2.0.0)`
//   v9    `name@1.2.3` (peer variants move to `snapshots`, same form as v6 without the slash)
// Peer suffixes (`_…` in v5, `(…)` later) only say which peers a copy was linked against; they are
// not part of the version. Keys that name a git, tarball, file or link source are not registry
// packages and are reported as unsupported.
import { isObject, type JsonObject } from '../../../schemas/json-value.ts';
import { dedupePackages, type LockPackage, type ParseIssue, type ParseResult } from './types.ts';
import { splitNameAt, str, yamlMapping } from './shared.ts';

const DEP_SECTIONS = ['dependencies', 'devDependencies', 'optionalDependencies'] as const;

export function parsePnpmLock(text: string, path: string): ParseResult {
  const read = yamlMapping(text, path);
  if ('issue' in read) return { packages: [], issues: [read.issue] };
  const { doc } = read;
  const major = Math.trunc(Number.parseFloat(str(doc.lockfileVersion) ?? '0'));
  if (!(major >= 5)) return { packages: [], issues: [{ path, reason: 'unsupported', message: `lockfileVersion ${str(doc.lockfileVersion) ?? '(none)'} not supported` }] };

  const direct = directDependencies(doc, major);
  const issues: ParseIssue[] = [];
  const out: LockPackage[] = [];
  const seen = new Set<string>();
  const sections = [doc.packages, doc.snapshots];
  for (const section of sections) {
    if (!isObject(section)) continue;
    for (const [key, entry] of Object.entries(section)) {
      const body: JsonObject = isObject(entry) ? entry : {};
      const parsed = parseKey(key, major);
      if (!parsed) {
        // `snapshots` repeats `packages`; report each unreadable key once.
        if (!seen.has(key)) issues.push({ path, reason: 'unsupported', message: `${key.slice(0, 160)}: not a registry package` });
        seen.add(key);
        continue;
      }
      seen.add(key);
      // Entries written for a non-registry source carry their own name/version fields.
      if (isObject(body.resolution) && (str(body.resolution.repo) || str(body.resolution.directory) || (str(body.resolution.tarball) && !str(body.resolution.integrity)))) {
        issues.push({ path, reason: 'unsupported', message: `${key.slice(0, 160)}: not from the registry` });
        continue;
      }
      const d = direct.get(`${parsed.name}@${parsed.version}`);
      const dev = body.dev === 'true' ? true : body.dev === 'false' ? false : d?.prod ? false : undefined;
      const pkg: LockPackage = { ecosystem: 'npm', name: parsed.name, version: parsed.version, path, direct: d !== undefined };
      if (dev !== undefined) pkg.dev = dev;
      out.push(pkg);
    }
  }
  return { packages: dedupePackages(out), issues };
}

/** Package name and version from a `packages`/`snapshots` key, or null for non-registry sources. */
export function parseKey(key: string, major: number): { name: string; version: string } | null {
  let k = key;
  if (major < 9) {
    if (!k.startsWith('/')) return null;
    k = k.slice(1);
  }
  let name: string;
  let version: string;
  if (major < 6) {
    const parts = k.split('/');
    const scoped = k.startsWith('@');
    if (parts.length !== (scoped ? 3 : 2)) return null;
    name = scoped ? `${parts[0]}/${parts[1]}` : parts[0]!;
    version = parts[parts.length - 1]!;
    // SemVer never contains `_`, so the first one starts the peer suffix.
    const underscore = version.indexOf('_');
    if (underscore >= 0) version = version.slice(0, underscore);
  } else {
    const split = splitNameAt(k);
    if (!split) return null;
    name = split.name;
    version = stripPeers(split.rest);
  }
  if (!name || !isPlainVersion(version)) return null;
  return { name, version };
}

function stripPeers(version: string): string {
  const paren = version.indexOf('(');
  return paren >= 0 ? version.slice(0, paren) : version;
}

/** A registry version, as opposed to a URL, path or git reference in the version slot. */
function isPlainVersion(version: string): boolean {
  return /^\d[0-9A-Za-z.+-]*$/.test(version);
}

/** `name@version` of what the project's importers declare, and whether any declares it outside devDependencies. */
function directDependencies(doc: JsonObject, major: number): Map<string, { prod: boolean }> {
  const out = new Map<string, { prod: boolean }>();
  const importers: JsonObject[] = [];
  if (isObject(doc.importers)) for (const imp of Object.values(doc.importers)) if (isObject(imp)) importers.push(imp);
  // Single-project v5/v6 lockfiles keep the root's dependencies at the top level.
  if (importers.length === 0) importers.push(doc);
  for (const imp of importers) {
    for (const section of DEP_SECTIONS) {
      const deps = imp[section];
      if (!isObject(deps)) continue;
      for (const [alias, value] of Object.entries(deps)) {
        const raw = isObject(value) ? str(value.version) : str(value);
        if (!raw) continue;
        const resolved = resolveImporterVersion(alias, raw, major);
        if (!resolved) continue;
        const key = `${resolved.name}@${resolved.version}`;
        const prev = out.get(key);
        out.set(key, { prod: (prev?.prod ?? false) || section !== 'devDependencies' });
      }
    }
  }
  return out;
}

/** An importer's version is a plain version (possibly with peers) or, for an alias, a package key. */
function resolveImporterVersion(alias: string, raw: string, major: number): { name: string; version: string } | null {
  if (major < 6) {
    if (raw.startsWith('/')) return parseKey(raw, major);
    const underscore = raw.indexOf('_');
    const version = underscore >= 0 ? raw.slice(0, underscore) : raw;
    return isPlainVersion(version) ? { name: alias, version } : null;
  }
  const version = stripPeers(raw);
  if (isPlainVersion(version)) return { name: alias, version };
  return parseKey(raw, major);
}
