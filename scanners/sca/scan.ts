// The SCA scanner: finds lockfiles under the scan root, reads the packages they pin, asks the
// advisory source about all of those packages at once, and reports one finding per
// (package@version, lockfile, advisory) that the OSV algorithm says is affected.
//
// Lockfile discovery walks the tree without following symlinks and skips directories that hold
// other projects' files rather than this project's declarations: node_modules (installed packages
// carry their own lockfiles), vendor (vendored copies), and version-control metadata (.git, .hg,
// .svn). Go's vendor/modules.txt is therefore not read; go.mod/go.sum say the same thing.
import { createHash } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { lstat, readdir, readFile, realpath } from 'node:fs/promises';
import { basename, dirname, join, posix, relative, resolve, sep } from 'node:path';
import type { Finding, ScanContext, ScanOutput, Severity, SkippedFile } from '../types.ts';
import type { AdvisorySource, PackageRef } from './advisory-source.ts';
import { lockfileKind, mergeGoModules, parseGoMod, parseGoSum, parseLockfile, type GoModResult, type LockfileKind } from './lockfiles/index.ts';
import { dedupePackages, type LockPackage, type ParseIssue, type ParseResult } from './lockfiles/types.ts';
import { packageKey } from './names.ts';
import { affectedEntries, fixedVersion, matchAffected, recordCwe, recordSeverity, type OsvRecord, type RecordSeverity } from './osv.ts';

export const SKIPPED_DIRS: ReadonlySet<string> = new Set(['node_modules', 'vendor', '.git', '.hg', '.svn']);

export interface ScaOptions {
  /** Largest lockfile read, in bytes (big monorepo package-locks reach tens of MB). */
  maxLockfileBytes?: number;
  /** Packages per advisory-source query. */
  batchSize?: number;
}

export interface ScannedLockfile {
  path: string;
  kind: LockfileKind;
  packages: number;
}

/** ScanOutput plus what the SCA scan saw, for display and debugging; assignable to ScanOutput. */
export interface ScaScanOutput extends ScanOutput {
  lockfiles: ScannedLockfile[];
  /** Every entry or file not turned into packages, with the reason in words. */
  issues: ParseIssue[];
  packages: number;
}

const DEFAULT_MAX_LOCKFILE = 64 * 1024 * 1024;
const DEFAULT_BATCH = 500;
const SEVERITY_RANK: Record<Severity, number> = { info: 0, low: 1, medium: 2, high: 3, critical: 4 };

export async function scanSca(ctx: ScanContext, source: AdvisorySource, options: ScaOptions = {}): Promise<ScaScanOutput> {
  const maxBytes = options.maxLockfileBytes ?? DEFAULT_MAX_LOCKFILE;
  const batchSize = options.batchSize ?? DEFAULT_BATCH;
  const progress = throttledProgress(ctx.onProgress);
  const root = resolve(ctx.root);
  const realRoot = await realpath(root);
  ctx.signal.throwIfAborted();

  const found = await discover(root, ctx.signal);
  progress(0.1);

  const reader = new Reader(root, realRoot, maxBytes);
  const lockfiles: ScannedLockfile[] = [];
  const issues: ParseIssue[] = [];
  const packages: LockPackage[] = [];
  const parsed = new Set<string>();
  const record = (path: string, kind: LockfileKind, result: ParseResult): void => {
    lockfiles.push({ path, kind, packages: result.packages.length });
    packages.push(...result.packages);
    issues.push(...result.issues);
  };

  // go.mod and go.sum of one module are read together.
  const goSums = new Map(found.filter((f) => f.kind === 'go.sum').map((f) => [posix.dirname(f.path), f.path]));
  const goMods = new Set(found.filter((f) => f.kind === 'go.mod').map((f) => posix.dirname(f.path)));
  let done = 0;
  for (const file of found) {
    ctx.signal.throwIfAborted();
    progress(0.1 + 0.4 * (done++ / Math.max(1, found.length)));
    if (parsed.has(file.path)) continue;
    if (file.kind === 'go.sum' && goMods.has(posix.dirname(file.path))) continue;
    if (file.kind === 'go.mod') {
      parsed.add(file.path);
      const modText = await reader.read(file.path);
      const sumPath = goSums.get(posix.dirname(file.path));
      const sumText = sumPath ? await reader.read(sumPath) : null;
      const mod: GoModResult | null = typeof modText === 'string' ? parseGoMod(modText, file.path) : null;
      const sum = sumPath && typeof sumText === 'string' ? parseGoSum(sumText, sumPath) : null;
      if (sumPath) parsed.add(sumPath);
      const merged = mergeGoModules(mod, sum);
      if (mod) lockfiles.push({ path: file.path, kind: 'go.mod', packages: merged.packages.filter((p) => p.path === file.path).length });
      if (sum && sumPath) lockfiles.push({ path: sumPath, kind: 'go.sum', packages: merged.packages.filter((p) => p.path === sumPath).length });
      packages.push(...merged.packages);
      issues.push(...merged.issues);
      continue;
    }
    // Requirements files pull in others with `-r`; those are read as part of the same walk.
    const queue: { path: string; from?: string }[] = [{ path: file.path }];
    while (queue.length > 0) {
      const { path, from } = queue.shift()!;
      if (parsed.has(path)) continue;
      parsed.add(path);
      const text = await reader.read(path);
      if (typeof text !== 'string') {
        // The reader already lists the file as skipped; this keeps the words for why it was wanted.
        if (from) issues.push({ path, reason: 'excluded', message: `included by ${from}, not read (${text.reason})` });
        continue;
      }
      const result = parseLockfile(file.kind, text, path);
      record(path, file.kind, result);
      for (const inc of result.includes ?? []) if (!parsed.has(inc)) queue.push({ path: inc, from: path });
    }
  }
  progress(0.5);

  const unique = dedupePackages(packages);
  const refs = new Map<string, PackageRef>();
  for (const p of unique) refs.set(packageKey(p.ecosystem, p.name), { ecosystem: p.ecosystem, name: p.name });
  const byKey = new Map<string, OsvRecord[]>();
  const refList = [...refs.values()];
  for (let i = 0; i < refList.length; i += batchSize) {
    ctx.signal.throwIfAborted();
    const records = await source.forPackages(refList.slice(i, i + batchSize));
    for (const r of records) {
      for (const a of r.affected) {
        if (!a.package) continue;
        const key = packageKey(a.package.ecosystem, a.package.name);
        if (!refs.has(key)) continue;
        const list = byKey.get(key) ?? [];
        // A record naming packages of two batches comes back twice, possibly as two objects.
        if (!list.some((x) => x.id === r.id)) list.push(r);
        byKey.set(key, list);
      }
    }
    progress(0.5 + 0.2 * Math.min(1, (i + batchSize) / refList.length));
  }

  const findings: Finding[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < unique.length; i++) {
    if (i % 256 === 0) {
      ctx.signal.throwIfAborted();
      progress(0.7 + 0.3 * (i / unique.length));
    }
    const pkg = unique[i]!;
    for (const rec of byKey.get(packageKey(pkg.ecosystem, pkg.name)) ?? []) {
      const match = matchAffected(rec, pkg.ecosystem, pkg.name, pkg.version);
      if (!match) continue;
      const f = toFinding(rec, pkg, match.introduced, byKey.get(packageKey(pkg.ecosystem, pkg.name)) ?? []);
      if (seen.has(f.fingerprint)) continue;
      seen.add(f.fingerprint);
      findings.push(f);
    }
  }
  findings.sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || cmpStr(a.location.path, b.location.path) || cmpStr(a.evidence, b.evidence) || cmpStr(a.rule_id, b.rule_id));
  progress(1);

  // Coverage names files and, for entries inside a lockfile, `path:line` (or the lockfile's path
  // when the format has no useful line); the words for each are in `issues`.
  const skipped: SkippedFile[] = [...reader.skipped];
  const refused = new Set(skipped.map((s) => s.path));
  const listed = new Set<string>();
  for (const issue of issues) {
    // Files the reader refused are listed already, with the reader's reason.
    if (refused.has(issue.path)) continue;
    const path = issue.line ? `${issue.path}:${issue.line}` : issue.path;
    const key = `${path}\0${issue.reason}`;
    if (listed.has(key)) continue;
    listed.add(key);
    skipped.push({ path, reason: issue.reason });
  }
  return {
    findings,
    coverage: { files_scanned: reader.files, bytes_scanned: reader.bytes, skipped },
    lockfiles,
    issues,
    packages: unique.length,
  };
}

function cmpStr(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function findingFingerprint(advisoryId: string, pkg: Pick<LockPackage, 'ecosystem' | 'name' | 'version' | 'path'>): string {
  return createHash('sha256').update([advisoryId, pkg.ecosystem, pkg.name, pkg.version, pkg.path].join('\0')).digest('hex');
}

/**
 * A record's severity; when it states none (Go's advisories never do), the severity of another
 * record of the same package that names the same vulnerability (shared id or alias: the GHSA or CVE
 * record imported beside it), rather than a flat `medium`.
 */
function severityOf(rec: OsvRecord, pkg: LockPackage, related: readonly OsvRecord[]): RecordSeverity {
  const own = recordSeverity(rec, affectedEntries(rec, pkg.ecosystem, pkg.name)[0]);
  if (own.source !== 'default') return own;
  const names = new Set([rec.id, ...rec.aliases]);
  for (const other of related) {
    if (other.id === rec.id || !(names.has(other.id) || other.aliases.some((a) => names.has(a)))) continue;
    const theirs = recordSeverity(other, affectedEntries(other, pkg.ecosystem, pkg.name)[0]);
    if (theirs.source !== 'default') return { ...theirs, source: 'alias', from: other.id };
  }
  return own;
}

function toFinding(rec: OsvRecord, pkg: LockPackage, introduced: string | undefined, related: readonly OsvRecord[]): Finding {
  const sev = severityOf(rec, pkg, related);
  let fixed = fixedVersion(rec, pkg.ecosystem, pkg.name, pkg.version);
  // OSV writes Go versions without the `v` that go.mod uses; show the fix the way go.mod would spell it.
  if (fixed && pkg.ecosystem === 'Go' && !fixed.startsWith('v')) fixed = `v${fixed}`;
  const details: Record<string, unknown> = {
    aliases: rec.aliases,
    fixed_version: fixed,
    advisory_ids: [rec.id, ...rec.aliases.filter((a) => a !== rec.id)],
    severity_source: sev.source,
    ...(sev.from ? { severity_from: sev.from } : {}),
  };
  if (sev.score !== null) details.cvss_score = sev.score;
  if (introduced !== undefined) details.introduced = introduced;
  if (pkg.direct !== undefined) details.direct = pkg.direct;
  if (pkg.dev !== undefined) details.dev = pkg.dev;
  const title = (rec.summary ?? rec.details?.split('\n')[0] ?? `${rec.id} in ${pkg.name}`).trim().slice(0, 300);
  return {
    rule_id: rec.id,
    title: title || `${rec.id} in ${pkg.name}`,
    severity: sev.severity,
    cwe: recordCwe(rec),
    location: { kind: 'package', path: pkg.path, ecosystem: pkg.ecosystem, name: pkg.name, version: pkg.version },
    evidence: `${pkg.name}@${pkg.version} in ${pkg.path}`,
    fingerprint: findingFingerprint(rec.id, pkg),
    details,
  };
}

interface FoundLockfile {
  path: string;
  kind: LockfileKind;
}

/** Lockfiles under root, root-relative with `/`, sorted. Symlinks are neither followed nor read. */
async function discover(root: string, signal: AbortSignal): Promise<FoundLockfile[]> {
  const out: FoundLockfile[] = [];
  const stack = [root];
  while (stack.length > 0) {
    signal.throwIfAborted();
    const dir = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const ent of entries) {
      if (ent.isSymbolicLink()) continue;
      const full = join(dir, ent.name);
      if (ent.isDirectory()) {
        if (!SKIPPED_DIRS.has(ent.name)) stack.push(full);
      } else if (ent.isFile()) {
        const kind = lockfileKind(ent.name, basename(dir));
        if (kind) out.push({ path: relative(root, full).split(sep).join('/'), kind });
      }
    }
  }
  return out.sort((a, b) => cmpStr(a.path, b.path));
}

type ReadRefusal = { reason: SkippedFile['reason'] };

/** Reads files by root-relative path, refusing anything that is (or passes through) a symlink or lies outside root. */
class Reader {
  files = 0;
  bytes = 0;
  readonly skipped: SkippedFile[] = [];

  constructor(
    private readonly root: string,
    private readonly realRoot: string,
    private readonly maxBytes: number,
  ) {}

  async read(rel: string): Promise<string | ReadRefusal> {
    const refuse = (reason: SkippedFile['reason']): ReadRefusal => {
      this.skipped.push({ path: rel, reason });
      return { reason };
    };
    const full = resolve(this.root, rel);
    const back = relative(this.root, full);
    if (back === '' || back === '..' || back.startsWith(`..${sep}`)) return refuse('excluded');
    try {
      const st = await lstat(full);
      if (st.isSymbolicLink()) return refuse('excluded');
      if (!st.isFile()) return refuse('unreadable');
      // A directory on the way may be a symlink (discovery never enters one, but `-r` paths can).
      const realDir = await realpath(dirname(full));
      if (realDir !== this.realRoot && !realDir.startsWith(this.realRoot + sep)) return refuse('excluded');
      if (st.size > this.maxBytes) return refuse('too_large');
      const text = await readFile(full, 'utf8');
      this.files++;
      this.bytes += st.size;
      return text;
    } catch {
      return refuse('unreadable');
    }
  }
}

function throttledProgress(cb: ((fraction: number) => void) | undefined): (fraction: number) => void {
  let last = 0;
  return (fraction) => {
    if (!cb) return;
    const now = Date.now();
    // At most a few calls a second; the final 1 always goes through.
    if (fraction < 1 && now - last < 250) return;
    last = now;
    cb(Math.min(1, Math.max(0, fraction)));
  };
}
