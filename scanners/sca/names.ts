// Package-name identity per ecosystem: two spellings name the same package exactly when their
// normalised forms are equal. The advisory store indexes records by `packageKey`, so lookups and
// storage must both go through here.
import type { Ecosystem } from './lockfiles/types.ts';

/**
 * PyPI: PEP 503 (lower case, runs of `-`, `_`, `.` become one `-`), so `Django` and `django`,
 * `Flask_Cors` and `flask-cors` meet. npm, crates.io and Go: as written — Go module paths are
 * case-sensitive (`github.com/Sirupsen/logrus` is a different module from the lower-case one), npm
 * names are compared exactly as the registry serves them, and Cargo.lock always holds the crate's
 * published spelling.
 */
export function normalizePackageName(ecosystem: Ecosystem | string, name: string): string {
  if (ecosystem === 'PyPI') return name.trim().toLowerCase().replace(/[-_.]+/g, '-');
  return name.trim();
}

/** `ecosystem/normalised-name`: the key advisories are stored and looked up by. */
export function packageKey(ecosystem: Ecosystem | string, name: string): string {
  return `${ecosystem}/${normalizePackageName(ecosystem, name)}`;
}
