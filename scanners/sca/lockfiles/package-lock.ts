// npm's package-lock.json / npm-shrinkwrap.json. v1 keeps a nested `dependencies` tree; v2 keeps
// both that tree and a flat `packages` map keyed by install path, v3 only the map. The map is the
// more precise one (it records aliases, links and the root's own declarations), so it wins when
// present.
import { isObject, type JsonObject } from '../../../schemas/json-value.ts';
import { dedupePackages, type LockPackage, type ParseIssue, type ParseResult } from './types.ts';
import { isNonRegistryNpmResolved, isNonRegistryNpmSource, str } from './shared.ts';

const MAX_DEPTH = 200;

export function parsePackageLock(text: string, path: string): ParseResult {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return { packages: [], issues: [{ path, reason: 'parse_error', message: `invalid JSON: ${(e as Error).message}` }] };
  }
  if (!isObject(doc)) return { packages: [], issues: [{ path, reason: 'parse_error', message: 'not a JSON object' }] };
  const issues: ParseIssue[] = [];
  const packages = isObject(doc.packages) ? fromPackagesMap(doc.packages, path, issues) : isObject(doc.dependencies) ? fromTree(doc.dependencies, path, issues) : [];
  return { packages: dedupePackages(packages), issues };
}

/** v2/v3: `{"": root, "node_modules/a": {...}, "node_modules/a/node_modules/b": {...}}`. */
function fromPackagesMap(map: JsonObject, path: string, issues: ParseIssue[]): LockPackage[] {
  const root = isObject(map['']) ? map[''] : {};
  const prodDirect = new Set([...Object.keys(objOr(root.dependencies)), ...Object.keys(objOr(root.optionalDependencies)), ...Object.keys(objOr(root.peerDependencies))]);
  const devDirect = new Set(Object.keys(objOr(root.devDependencies)));
  const out: LockPackage[] = [];
  for (const [key, entry] of Object.entries(map)) {
    // "" is the project itself; keys without node_modules/ are workspace sources, i.e. the project's own code.
    if (key === '' || !isObject(entry)) continue;
    const idx = key.lastIndexOf('node_modules/');
    if (idx < 0) continue;
    if (entry.link === true) continue;
    const installName = key.slice(idx + 'node_modules/'.length);
    const name = str(entry.name) ?? installName;
    const version = str(entry.version);
    const resolved = str(entry.resolved);
    if (!version) {
      issues.push({ path, reason: 'unsupported', message: `${key}: no version` });
      continue;
    }
    if (resolved && isNonRegistryNpmResolved(resolved)) {
      issues.push({ path, reason: 'unsupported', message: `${name}@${version}: not from the registry (${resolved.slice(0, 120)})` });
      continue;
    }
    // Only `node_modules/<name>` at the top can be something the root declared.
    const topLevel = key.startsWith('node_modules/') && idx === 0;
    const direct = topLevel && (prodDirect.has(installName) || devDirect.has(installName));
    out.push({ ecosystem: 'npm', name, version, path, direct, dev: entry.dev === true });
  }
  return out;
}

/** v1: `dependencies: {name: {version, dev, dependencies: {...nested}}}`. */
function fromTree(tree: JsonObject, path: string, issues: ParseIssue[]): LockPackage[] {
  const out: LockPackage[] = [];
  const walk = (deps: JsonObject, depth: number): void => {
    if (depth > MAX_DEPTH) {
      issues.push({ path, reason: 'parse_error', message: 'dependency tree too deep' });
      return;
    }
    for (const [installName, entry] of Object.entries(deps)) {
      if (!isObject(entry)) continue;
      const raw = str(entry.version);
      if (raw) {
        const pkg = v1Package(installName, raw, entry);
        if (pkg) out.push({ ecosystem: 'npm', ...pkg, path, dev: entry.dev === true });
        else issues.push({ path, reason: 'unsupported', message: `${installName}@${raw.slice(0, 120)}: not from the registry` });
      }
      if (isObject(entry.dependencies)) walk(entry.dependencies, depth + 1);
    }
  };
  walk(tree, 0);
  return out;
}

/** v1 versions are either a version, `npm:real-name@version` for an alias, or a git/file/URL source. */
function v1Package(installName: string, raw: string, entry: JsonObject): { name: string; version: string } | null {
  if (raw.startsWith('npm:')) {
    const spec = raw.slice(4);
    const at = spec.lastIndexOf('@');
    if (at <= 0) return null;
    return { name: spec.slice(0, at), version: spec.slice(at + 1) };
  }
  const resolved = str(entry.resolved);
  if (isNonRegistryNpmSource(raw) || (resolved !== undefined && isNonRegistryNpmResolved(resolved))) return null;
  return { name: installName, version: raw };
}

function objOr(v: unknown): JsonObject {
  return isObject(v) ? v : {};
}
