// What the SCA lockfile parsers produce (packages, issues) and the ecosystems they name; the
// scanner reads the same shapes. Kept beside the parsers so that lockfiles/ needs nothing from the
// folder above it, which imports lockfiles/.

/** OSV ecosystem names, spelled as OSV spells them. */
export type Ecosystem = 'npm' | 'PyPI' | 'Go' | 'crates.io';

export const ECOSYSTEMS: readonly Ecosystem[] = ['npm', 'PyPI', 'Go', 'crates.io'];

export function isEcosystem(value: string): value is Ecosystem {
  return (ECOSYSTEMS as readonly string[]).includes(value);
}

/** One installed package as a lockfile records it. */
export interface LockPackage {
  ecosystem: Ecosystem;
  /** As the lockfile writes it (PyPI names are compared after PEP 503 normalisation). */
  name: string;
  version: string;
  /** Lockfile path relative to the scan root, `/`-separated. */
  path: string;
  /** Declared by the project itself rather than pulled in by another package; absent when unknown. */
  direct?: boolean;
  /** Only needed for development; absent when unknown. */
  dev?: boolean;
}

/** An entry a parser could not turn into a package, or a whole file it could not read. */
export interface ParseIssue {
  /** Lockfile path relative to the scan root. */
  path: string;
  /** 1-based line, for line-oriented formats. */
  line?: number;
  reason: 'unsupported' | 'parse_error' | 'excluded';
  message: string;
}

export interface ParseResult {
  packages: LockPackage[];
  issues: ParseIssue[];
  /** Further files this one pulls in (requirements `-r`), relative to the scan root, not yet checked to exist. */
  includes?: string[];
}

/** Drops repeated (ecosystem, name, version, path) entries, keeping the first and merging flags. */
export function dedupePackages(packages: LockPackage[]): LockPackage[] {
  const seen = new Map<string, LockPackage>();
  for (const p of packages) {
    const key = `${p.ecosystem}\0${p.name}\0${p.version}\0${p.path}`;
    const prev = seen.get(key);
    if (!prev) {
      seen.set(key, { ...p });
      continue;
    }
    // A package reached both directly and transitively is direct; needed by anything non-dev is not dev.
    if (p.direct === true) prev.direct = true;
    if (p.dev === false) prev.dev = false;
  }
  return [...seen.values()];
}
