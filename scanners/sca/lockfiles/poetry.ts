// poetry.lock: one `[[package]]` table per locked distribution with name, version and, before
// Poetry 1.5, `category = "main" | "dev"`; lock format 2.1 lists `groups` instead. Packages whose
// `[package.source]` is git, a directory, a file or a URL are not PyPI releases and are skipped.
import { dedupePackages, type LockPackage, type ParseIssue, type ParseResult } from './types.ts';
import { isTable, packageTables } from './toml.ts';

export function parsePoetryLock(text: string, path: string): ParseResult {
  const read = packageTables(text, path);
  if ('issue' in read) return { packages: [], issues: [read.issue] };
  const issues: ParseIssue[] = [];
  const out: LockPackage[] = [];
  for (const pkg of read.tables) {
    const { name, version } = pkg;
    if (typeof name !== 'string' || typeof version !== 'string') {
      issues.push({ path, reason: 'parse_error', message: 'package without name or version' });
      continue;
    }
    const source = pkg.source;
    if (isTable(source) && typeof source.type === 'string' && ['git', 'directory', 'file', 'url'].includes(source.type)) {
      issues.push({ path, reason: 'unsupported', message: `${name}: ${source.type} source, not a PyPI release` });
      continue;
    }
    const entry: LockPackage = { ecosystem: 'PyPI', name, version, path };
    if (typeof pkg.category === 'string') entry.dev = pkg.category === 'dev';
    else if (Array.isArray(pkg.groups)) entry.dev = !pkg.groups.includes('main');
    out.push(entry);
  }
  return { packages: dedupePackages(out), issues };
}
