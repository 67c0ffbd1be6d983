// SAST scanner for JavaScript and TypeScript: lists the tree's source files, analyses each one
// (analyze.ts) and reports findings with coverage. No state beyond the cached default rules, no
// process-wide side effects: it runs the same in a worker thread.
import { readFileSync } from 'node:fs';
import { skippedByType } from '../common/coverage.ts';
import type { Finding, ScanContext, ScanOutput, SkippedFile } from '../types.ts';
import { analyzeSource, type FileAnalysis } from './analyze.ts';
import { listSourceFiles, looksBinary, looksMinified, type SourceEntry } from './files.ts';
import { Project } from './project.ts';
import { defaultRules, type RuleSet } from './rules.ts';
import { COMPONENT_FILE, componentScript, templateFindings } from './templates.ts';

export interface SastScanOptions {
  /** Compiled rules (`loadRules`/`compileRules`); the shipped rules by default. */
  rules?: RuleSet;
  /** Directory names skipped wherever they appear; default `.git` and `node_modules`. */
  excludeDirs?: readonly string[];
  /** Larger files are skipped as too_large; default 1 MiB. */
  maxFileBytes?: number;
}

export const DEFAULT_EXCLUDE_DIRS: readonly string[] = ['.git', 'node_modules'];
export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;
const PROGRESS_INTERVAL_MS = 250;
const YIELD_INTERVAL_MS = 20;

export type FileResult = { findings: Finding[]; bytes: number; parsed: boolean } | { skipped: SkippedFile['reason'] };

/**
 * Reads and analyses one listed file. Synchronous on purpose: an async read per file costs more
 * than the read itself; scanSast yields to the event loop between files instead.
 */
export function scanFile(file: SourceEntry, rules: RuleSet, project?: Project): FileResult {
  let data: Buffer;
  try {
    data = readFileSync(file.absolute);
  } catch {
    return { skipped: 'unreadable' };
  }
  if (looksBinary(data)) return { skipped: 'binary' };
  const text = data.toString('utf8');
  if (looksMinified(text)) return { skipped: 'unsupported' };
  try {
    const { findings, parsed } = COMPONENT_FILE.test(file.path) ? analyzeComponent(file.path, text, rules, project) : analyzeSource(file.path, text, rules, project);
    return { findings, bytes: data.length, parsed };
  } catch {
    // The parser recovers from syntax errors; this would be a bug of ours on odd input: skip the file.
    return { skipped: 'parse_error' };
  }
}

/** A Vue or Svelte single-file component: its markup's raw-HTML sinks, and its scripts as code. */
function analyzeComponent(path: string, text: string, rules: RuleSet, project?: Project): FileAnalysis {
  const findings = templateFindings(path, text);
  const script = componentScript(text);
  if (script === undefined) return { findings, parsed: true };
  const code = analyzeSource(path, script, rules, project);
  return { findings: [...findings, ...code.findings], parsed: true };
}

export async function scanSast(ctx: ScanContext, options: SastScanOptions = {}): Promise<ScanOutput> {
  const { signal } = ctx;
  signal.throwIfAborted();
  const rules = options.rules ?? defaultRules();
  const listing = await listSourceFiles(ctx.root, {
    excludeDirs: options.excludeDirs ?? DEFAULT_EXCLUDE_DIRS,
    maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    signal,
  });
  const findings: Finding[] = [];
  // Calls into the project's own modules are followed; its files are parsed when first needed.
  // Components are not modules the resolver can read (their code sits inside markup).
  const modules = listing.files.filter((f) => !COMPONENT_FILE.test(f.path));
  const project = new Project(new Map(modules.map((f) => [f.path.split('\\').join('/'), f.absolute])));
  // A sink inside a shared helper, reached from several files, is one finding.
  const reported = new Set<string>();
  const skipped: SkippedFile[] = [...listing.skipped];
  let filesScanned = 0;
  let bytesScanned = 0;
  let lastProgress = 0;
  let lastYield = Date.now();
  const total = listing.files.length;
  for (let i = 0; i < total; i++) {
    if (Date.now() - lastYield >= YIELD_INTERVAL_MS) {
      // Let timers and abort() callbacks run; the signal is only set from the event loop.
      await new Promise<void>((r) => setImmediate(r));
      lastYield = Date.now();
    }
    signal.throwIfAborted();
    const file = listing.files[i]!;
    const result = scanFile(file, rules, project);
    if ('skipped' in result) skipped.push({ path: file.path, reason: result.skipped });
    else {
      for (const f of result.findings) {
        const line = f.location.kind === 'file' ? f.location.line : 0;
        const key = `${f.fingerprint}:${line}`;
        if (reported.has(key)) continue;
        reported.add(key);
        findings.push(f);
      }
      filesScanned++;
      bytesScanned += result.bytes;
    }
    const now = Date.now();
    if (ctx.onProgress && now - lastProgress >= PROGRESS_INTERVAL_MS) {
      lastProgress = now;
      ctx.onProgress((i + 1) / total);
    }
  }
  ctx.onProgress?.(1);
  skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { findings, coverage: { files_scanned: filesScanned, bytes_scanned: bytesScanned, skipped, skipped_by_type: skippedByType(skipped) } };
}
