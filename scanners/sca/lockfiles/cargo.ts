// Cargo.lock: one `[[package]]` per crate with name, version and `source`. Crates without a source
// are the workspace's own (or path dependencies); `git+…` sources are repositories. Only crates from
// the crates.io index (git or sparse protocol) are crates.io releases that RustSec/OSV advisories
// describe; crates from other registries may share a name with an unrelated crates.io crate, so they
// are reported rather than matched.
import { dedupePackages, type LockPackage, type ParseIssue, type ParseResult } from './types.ts';
import { packageTables } from './toml.ts';

const CRATES_IO = new Set(['registry+https://github.com/rust-lang/crates.io-index', 'sparse+https://index.crates.io/']);

export function parseCargoLock(text: string, path: string): ParseResult {
  const read = packageTables(text, path);
  if ('issue' in read) return { packages: [], issues: [read.issue] };
  const issues: ParseIssue[] = [];
  const out: LockPackage[] = [];
  for (const pkg of read.tables) {
    const { name, version, source } = pkg;
    if (typeof name !== 'string' || typeof version !== 'string') {
      issues.push({ path, reason: 'parse_error', message: 'package without name or version' });
      continue;
    }
    if (source === undefined) continue;
    if (typeof source !== 'string' || !CRATES_IO.has(source)) {
      issues.push({ path, reason: 'unsupported', message: `${name} ${version}: source ${String(source).slice(0, 120)} is not crates.io` });
      continue;
    }
    out.push({ ecosystem: 'crates.io', name, version, path });
  }
  return { packages: dedupePackages(out), issues };
}
