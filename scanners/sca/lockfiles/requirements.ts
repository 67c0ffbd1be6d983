// pip requirements files. Only exact pins (`name==1.2.3`, `name===1.2.3`) name one installed
// version; anything looser (`>=`, `~=`, wildcards, unpinned names, URLs, editable installs) cannot
// be matched against advisories without resolving it, so such lines are reported as unsupported
// rather than guessed. Environment markers are kept as written: the file is taken to describe the
// environment it was written for.
import { posix } from 'node:path';
import { dedupePackages, type LockPackage, type ParseIssue, type ParseResult } from './types.ts';

// PEP 508 distribution name.
const NAME = /^([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])$/;
// Options that take a value and say nothing about packages.
const IGNORED_OPTIONS = /^(-i|--index-url|--extra-index-url|-f|--find-links|--trusted-host|--no-binary|--only-binary|--prefer-binary|--pre|--no-index|--use-feature|--require-hashes|-Z|--always-unzip)\b/;

export function parseRequirements(text: string, path: string): ParseResult {
  const issues: ParseIssue[] = [];
  const out: LockPackage[] = [];
  const includes: string[] = [];
  for (const { line, number } of logicalLines(text)) {
    const content = stripComment(line).trim();
    if (content === '') continue;
    const include = /^(?:-r|--requirement)(?:\s*=\s*|\s+)(\S+)$/.exec(content) ?? /^-r(\S+)$/.exec(content);
    if (include) {
      const target = resolveInclude(path, include[1]!);
      if (typeof target === 'string') includes.push(target);
      else issues.push({ path, line: number, reason: target.reason, message: target.message });
      continue;
    }
    if (/^(-c|--constraint)\b/.test(content)) {
      // Constraints only cap versions of packages required elsewhere; they install nothing.
      issues.push({ path, line: number, reason: 'excluded', message: 'constraints file not followed' });
      continue;
    }
    if (/^(-e|--editable)\b/.test(content)) {
      issues.push({ path, line: number, reason: 'unsupported', message: 'editable install' });
      continue;
    }
    if (IGNORED_OPTIONS.test(content)) continue;
    if (content.startsWith('-')) {
      issues.push({ path, line: number, reason: 'unsupported', message: `option not understood: ${content.slice(0, 80)}` });
      continue;
    }
    const req = parseRequirement(content);
    if ('error' in req) issues.push({ path, line: number, reason: 'unsupported', message: req.error });
    else out.push({ ecosystem: 'PyPI', name: req.name, version: req.version, path, direct: true });
  }
  return { packages: dedupePackages(out), issues, includes };
}

/** Joins `\`-continued lines, remembering where each logical line started. */
function logicalLines(text: string): { line: string; number: number }[] {
  const physical = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const out: { line: string; number: number }[] = [];
  for (let i = 0; i < physical.length; i++) {
    const number = i + 1;
    let line = physical[i]!;
    while (line.endsWith('\\') && !stripComment(line).trim().startsWith('#') && i + 1 < physical.length) line = line.slice(0, -1) + ' ' + physical[++i]!;
    out.push({ line, number });
  }
  return out;
}

/** pip: `#` starts a comment at the start of a line or after whitespace (so URL fragments survive). */
function stripComment(line: string): string {
  const m = /(^|\s)#/.exec(line);
  return m ? line.slice(0, m.index) : line;
}

type Requirement = { name: string; version: string } | { error: string };

/** `name[extras] <specifiers> ; markers` with per-line `--hash` options removed. */
export function parseRequirement(content: string): Requirement {
  let text = content.replace(/\s--hash[=\s]\S+/g, '').trim();
  const semi = text.indexOf(';');
  if (semi >= 0) text = text.slice(0, semi).trim();
  const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$/.exec(text);
  if (!m || !NAME.test(m[1]!)) return { error: `not a requirement: ${content.slice(0, 80)}` };
  const name = m[1]!;
  const spec = m[3]!.trim();
  if (spec.startsWith('@')) return { error: `${name}: direct URL reference` };
  if (spec === '') return { error: `${name}: not pinned` };
  // Parenthesised specifiers are allowed by PEP 508: `name (==1.0)`.
  const specs = spec.replace(/^\((.*)\)$/, '$1').split(',').map((s) => s.trim()).filter((s) => s !== '');
  const pins: string[] = [];
  for (const s of specs) {
    const p = /^(===|==|!=|~=|<=|>=|<|>)\s*(\S+)$/.exec(s);
    if (!p) return { error: `${name}: cannot read specifier '${s.slice(0, 40)}'` };
    if ((p[1] === '==' || p[1] === '===') && !p[2]!.includes('*')) pins.push(p[2]!);
  }
  if (pins.length !== 1) return { error: `${name}: not pinned to one version (${spec.slice(0, 60)})` };
  return { name, version: pins[0]! };
}

/**
 * `-r other.txt` is relative to the including file. Returns the root-relative path, or a reason it
 * is not followed: URLs are never fetched and nothing outside the scan root is read.
 */
function resolveInclude(from: string, target: string): string | { reason: 'excluded' | 'unsupported'; message: string } {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) return { reason: 'unsupported', message: `remote include not followed: ${target.slice(0, 120)}` };
  if (target.includes('\0')) return { reason: 'excluded', message: 'invalid include path' };
  const rel = target.replace(/\\/g, '/');
  if (posix.isAbsolute(rel) || /^[A-Za-z]:/.test(rel)) return { reason: 'excluded', message: `include outside the scanned tree: ${target.slice(0, 120)}` };
  const joined = posix.normalize(posix.join(posix.dirname(from), rel));
  if (joined === '..' || joined.startsWith('../')) return { reason: 'excluded', message: `include outside the scanned tree: ${target.slice(0, 120)}` };
  return joined;
}
