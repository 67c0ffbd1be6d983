// Secrets scanner: finds credentials in a source tree (and optionally its git history) with the
// data rules in rules/*.yaml. CPU-bound and self-contained — no state but the compiled built-in
// rules — so a job can run it in a worker thread. File reads are synchronous (cheaper than the
// thread-pool round trip per small file); the loop yields to the event loop every few milliseconds
// so cancellation and progress still get through.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import RE2 from 're2';
import type { Coverage, Finding, ScanContext, ScanOutput, SkippedByType, SkippedFile } from '../types.ts';
import { skippedByType } from '../common/coverage.ts';
import { countCommits, historyUnavailable, readHistory } from './history.ts';
import { findAllHits } from './decode.ts';
import { createScratch, renderFindings, type MatchScratch } from './match.ts';
import { loadRuleSet, type RuleSet } from './rules.ts';
import { isLockfile, isMinifiedAsset, walkTree } from './walk.ts';
import { errorMessage } from '../../schemas/json-value.ts';

export { loadRuleSet, RuleFileError, type RuleDefinition, type RuleSet } from './rules.ts';
export { IGNORE_MARKERS } from './match.ts';

export const DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024;
const BINARY_SNIFF_BYTES = 8192;
const YIELD_EVERY_MS = 20;
const PROGRESS_EVERY_MS = 250;

export interface SecretsScanOptions {
  /** Also scan the lines added by every commit of every ref (`git log -p --all`). */
  history?: boolean;
  /** At most this many commits (newest first) when `history` is on. */
  maxCommits?: number;
  /** A rule set from `loadRuleSet()` (default: the built-in rules). */
  rules?: RuleSet;
  /** RE2 patterns over relative paths (forward slashes): matching files are skipped as `allowlisted`. */
  allowPaths?: readonly string[];
  /** Larger files are skipped as `too_large` (default 5 MiB). */
  maxFileBytes?: number;
  /** Skip lockfiles (package-lock.json, yarn.lock, …) as `excluded`. Default false. */
  skipLockfiles?: boolean;
  /** Skip minified bundles and source maps (`*.min.js`, `*.js.map`, …) as `excluded`. Default false. */
  skipMinified?: boolean;
  /** Key for HMAC-SHA256 secret digests instead of plain SHA-256 (see redact.ts). */
  hashKey?: string | Buffer;
}

export interface SecretsCoverage extends Coverage {
  /** Why something was not covered (history unavailable, truncated commits, …). */
  notes: string[];
  commits_scanned: number;
  history_bytes_scanned: number;
  /** `skipped` counted by file type (extension or extension-less name) and reason, most files first. */
  skipped_by_type: SkippedByType[];
}

export interface SecretsScanOutput extends ScanOutput {
  coverage: SecretsCoverage;
}

const nextTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function compileAllowPaths(patterns: readonly string[]): RE2[] {
  return patterns.map((p) => {
    try {
      return new RE2(p, 'u');
    } catch (err) {
      throw new Error(`allowPaths: ${JSON.stringify(p)} is not a valid RE2 pattern: ${errorMessage(err)}`);
    }
  });
}

/** Grows one buffer for all reads of a scan instead of allocating per file. */
class ReadBuffer {
  private buf = Buffer.allocUnsafe(1 << 20);
  read(fd: number, size: number): Buffer {
    if (this.buf.length < size) this.buf = Buffer.allocUnsafe(Math.max(size, this.buf.length * 2));
    let off = 0;
    while (off < size) {
      const n = readSync(fd, this.buf, off, size - off, off);
      if (n === 0) break;
      off += n;
    }
    return this.buf.subarray(0, off);
  }
}

export async function scanSecrets(ctx: ScanContext, options: SecretsScanOptions = {}): Promise<SecretsScanOutput> {
  const { signal } = ctx;
  signal.throwIfAborted();
  const rules = options.rules ?? loadRuleSet();
  const allowPaths = compileAllowPaths(options.allowPaths ?? []);
  const maxBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const scratch: MatchScratch = createScratch(rules);
  const coverage: SecretsCoverage = { files_scanned: 0, bytes_scanned: 0, skipped: [], notes: [], commits_scanned: 0, history_bytes_scanned: 0, skipped_by_type: [] };
  const findings: Finding[] = [];
  const historyShare = options.history ? 0.2 : 0;

  let lastProgress = 0;
  const progress = (fraction: number, force = false): void => {
    if (!ctx.onProgress) return;
    const now = performance.now();
    if (!force && now - lastProgress < PROGRESS_EVERY_MS) return;
    lastProgress = now;
    ctx.onProgress(Math.min(1, Math.max(0, fraction)));
  };

  /** Why a path is not scanned, or undefined. */
  const exclusion = (path: string): SkippedFile['reason'] | undefined => {
    if (allowPaths.some((re) => re.test(path))) return 'allowlisted';
    if (options.skipLockfiles && isLockfile(path)) return 'excluded';
    if (options.skipMinified && isMinifiedAsset(path)) return 'excluded';
    return undefined;
  };

  const { files, unreadable } = walkTree(ctx.root, () => signal.throwIfAborted());
  for (const dir of unreadable) coverage.skipped.push({ path: dir, reason: 'unreadable' });
  const reader = new ReadBuffer();
  let lastYield = performance.now();
  for (let i = 0; i < files.length; i++) {
    signal.throwIfAborted();
    const now = performance.now();
    if (now - lastYield > YIELD_EVERY_MS) {
      await nextTick();
      signal.throwIfAborted();
      lastYield = performance.now();
      progress((i / files.length) * (1 - historyShare));
    }
    const file = files[i]!;
    const reason = exclusion(file.path);
    if (reason !== undefined) {
      coverage.skipped.push({ path: file.path, reason });
      continue;
    }
    let buf: Buffer;
    let fd: number | undefined;
    try {
      fd = openSync(file.absolute, constants.O_RDONLY | constants.O_NOFOLLOW);
      const size = fstatSync(fd).size;
      if (size > maxBytes) {
        coverage.skipped.push({ path: file.path, reason: 'too_large' });
        continue;
      }
      buf = reader.read(fd, size);
    } catch {
      coverage.skipped.push({ path: file.path, reason: 'unreadable' });
      continue;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    if (buf.subarray(0, BINARY_SNIFF_BYTES).indexOf(0) !== -1) {
      coverage.skipped.push({ path: file.path, reason: 'binary' });
      continue;
    }
    coverage.files_scanned++;
    coverage.bytes_scanned += buf.length;
    const { hits, redact } = findAllHits(buf, rules, file.path, scratch);
    if (hits.length > 0) findings.push(...renderFindings(buf, hits, redact, { path: file.path, hashKey: options.hashKey }));
  }

  if (options.history) {
    const why = await historyUnavailable(ctx.root, signal);
    if (why !== undefined) coverage.notes.push(why);
    else await scanHistory(ctx, options, rules, scratch, exclusion, findings, coverage, (f) => progress(1 - historyShare + f * historyShare));
  }
  coverage.skipped_by_type = skippedByType(coverage.skipped);
  progress(1, true);
  return { findings, coverage };
}

async function scanHistory(
  ctx: ScanContext,
  options: SecretsScanOptions,
  rules: RuleSet,
  scratch: MatchScratch,
  exclusion: (path: string) => SkippedFile['reason'] | undefined,
  findings: Finding[],
  coverage: SecretsCoverage,
  progress: (fraction: number) => void,
): Promise<void> {
  const { signal } = ctx;
  const total = await countCommits(ctx.root, signal, options.maxCommits);
  // Same fingerprint as a working-tree finding: the same secret in the same file, already reported.
  const current = new Set(findings.map((f) => f.fingerprint));
  const past = new Map<string, Finding>();
  const truncated = new Set<string>();
  const stats = await readHistory(ctx.root, signal, {
    maxCommits: options.maxCommits,
    maxBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    onCommit: (n) => progress(total > 0 ? n / total : 1),
    onChunk: (chunk) => {
      if (exclusion(chunk.path) !== undefined) return;
      if (chunk.truncated) truncated.add(`${chunk.commit.slice(0, 12)}:${chunk.path}`);
      const buf = Buffer.from(chunk.text, 'utf8');
      if (buf.indexOf(0) !== -1) return; // binary content that git still diffed as text
      const { hits, redact } = findAllHits(buf, rules, chunk.path, scratch);
      if (hits.length === 0) return;
      const found = renderFindings(buf, hits, redact, {
        path: chunk.path,
        commit: chunk.commit,
        lineMap: chunk.lines,
        hashKey: options.hashKey,
        details: { committed_at: chunk.committedAt },
      });
      // git log lists newer commits first: a later sighting is an older commit, closer to where
      // the secret was introduced, so it replaces the earlier one.
      for (const f of found) if (!current.has(f.fingerprint)) past.set(f.fingerprint, f);
    },
  });
  coverage.commits_scanned = stats.commits;
  coverage.history_bytes_scanned = stats.bytes;
  if (truncated.size > 0) coverage.notes.push(`history: added text over the size limit was cut in ${truncated.size} file change(s), e.g. ${[...truncated][0]}`);
  findings.push(...past.values());
}
