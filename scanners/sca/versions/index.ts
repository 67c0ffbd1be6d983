// One entry point for version order: `compareVersions(ecosystem, a, b)` is negative, zero or
// positive like a sort comparator, or null when either version is not valid for the ecosystem (or
// the ecosystem is unknown). Callers treat null as "cannot decide", never as equal.
import { compareGo } from './go.ts';
import { comparePep440 } from './pep440.ts';
import { compareSemver } from './semver.ts';

export { compareGo, isPseudoVersion, parseGoVersion } from './go.ts';
export { comparePep440 } from './pep440.ts';
export { compareSemver, parseSemver } from './semver.ts';

export type Comparator = (a: string, b: string) => number | null;

const byEcosystem: Record<string, Comparator> = {
  npm: compareSemver,
  'crates.io': compareSemver,
  PyPI: comparePep440,
  Go: compareGo,
};

export function comparatorFor(ecosystem: string): Comparator | null {
  return byEcosystem[ecosystem] ?? null;
}

export function compareVersions(ecosystem: string, a: string, b: string): number | null {
  const cmp = comparatorFor(ecosystem);
  if (!cmp) return null;
  try {
    const c = cmp(a, b);
    return c === null ? null : Math.sign(c);
  } catch {
    // Comparators validate first; this only guards against a library edge case taking a scan down.
    return null;
  }
}

/**
 * The order an OSV range uses: `SEMVER` ranges are SemVer 2.0 whatever the ecosystem (Go's own
 * comparator for Go, which is SemVer with an optional `v`), `ECOSYSTEM` ranges the ecosystem's order.
 */
export function rangeComparator(rangeType: string, ecosystem: string): Comparator | null {
  if (rangeType === 'SEMVER') {
    const base: Comparator = ecosystem === 'Go' ? compareGo : compareSemver;
    return (a, b) => {
      const c = base(a, b);
      return c === null ? null : Math.sign(c);
    };
  }
  if (rangeType === 'ECOSYSTEM') {
    if (!comparatorFor(ecosystem)) return null;
    return (a, b) => compareVersions(ecosystem, a, b);
  }
  return null;
}
