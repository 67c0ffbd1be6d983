// SemVer 2.0 precedence for npm and crates.io (and OSV `SEMVER` ranges). Versions are compared one
// to one, never through npm range syntax: a range such as `<1.5.0` silently excludes `1.5.0-beta`,
// which is exactly the kind of version an advisory boundary must catch.
import semver from 'semver';

/** Parses strictly (a leading `v` is tolerated); build metadata is kept but plays no part in order. */
export function parseSemver(version: string): semver.SemVer | null {
  if (version.length > 256) return null;
  return semver.parse(version, { loose: false });
}

export function compareSemver(a: string, b: string): number | null {
  const pa = parseSemver(a);
  const pb = parseSemver(b);
  if (!pa || !pb) return null;
  return pa.compare(pb);
}
