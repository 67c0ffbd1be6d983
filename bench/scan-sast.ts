// SAST throughput, single-threaded, over a large real tree (node_modules by default): the same
// per-file step scanSast runs (read, binary/minified checks, prefilter, parse, taint + patterns),
// stopped at a byte or time budget, whichever comes first.
//
//   node bin/run-ts.mjs bench/scan-sast.ts [DIR]      BENCH_MAX_MB=200 BENCH_MAX_SECONDS=30
//   BENCH_BASELINE=1 also times ts.createSourceFile alone over the same files, for comparison.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import ts from 'typescript';
import { analyzeSource, scriptKind } from '../scanners/sast/analyze.ts';
import { listSourceFiles } from '../scanners/sast/files.ts';
import { defaultRules } from '../scanners/sast/rules.ts';
import { DEFAULT_MAX_FILE_BYTES, scanFile } from '../scanners/sast/scan.ts';

const dir = resolve(process.argv[2] ?? 'node_modules');
const MAX_BYTES = Number(process.env.BENCH_MAX_MB ?? 200) * 1e6;
const MAX_MS = Number(process.env.BENCH_MAX_SECONDS ?? 30) * 1000;

const rules = defaultRules();
let t0 = performance.now();
const listing = await listSourceFiles(dir, { excludeDirs: [], maxFileBytes: DEFAULT_MAX_FILE_BYTES });
const listMs = performance.now() - t0;
const skippedAtListing = new Map<string, number>();
for (const s of listing.skipped) skippedAtListing.set(s.reason, (skippedAtListing.get(s.reason) ?? 0) + 1);

let bytes = 0;
let files = 0;
let parsed = 0;
const skipped = new Map<string, number>();
const byRule = new Map<string, number>();
const failed: string[] = [];
const scannedFiles: Array<{ path: string; absolute: string }> = [];
t0 = performance.now();
for (const file of listing.files) {
  if (bytes >= MAX_BYTES || performance.now() - t0 >= MAX_MS) break;
  const r = scanFile(file, rules);
  if ('skipped' in r) {
    skipped.set(r.skipped, (skipped.get(r.skipped) ?? 0) + 1);
    if (r.skipped === 'parse_error') failed.push(file.absolute);
    continue;
  }
  files++;
  bytes += r.bytes;
  if (r.parsed) parsed++;
  scannedFiles.push(file);
  for (const f of r.findings) byRule.set(f.rule_id, (byRule.get(f.rule_id) ?? 0) + 1);
}
const seconds = (performance.now() - t0) / 1000;
const findings = [...byRule.values()].reduce((a, b) => a + b, 0);

console.log(`SAST bench over ${dir}`);
console.log(`  listing: ${listing.files.length} candidate files in ${(listMs / 1000).toFixed(2)} s; skipped at listing: ${JSON.stringify(Object.fromEntries(skippedAtListing))}`);
console.log(`  scanned: ${files} files, ${(bytes / 1e6).toFixed(1)} MB in ${seconds.toFixed(2)} s (${parsed} parsed, ${files - parsed} ruled out by the prefilter)`);
console.log(`  skipped while scanning: ${JSON.stringify(Object.fromEntries(skipped))}`);
console.log(`  throughput: ${(bytes / 1e6 / seconds).toFixed(2)} MB/s, ${(files / seconds).toFixed(0)} files/s (single thread)`);
console.log(`  findings: ${findings}`);
for (const [rule, n] of [...byRule].sort((a, b) => b[1] - a[1])) console.log(`    ${rule.padEnd(36)} ${n}`);

for (const path of failed.slice(0, 5)) {
  try {
    analyzeSource(path, await readFile(path, 'utf8'), rules);
  } catch (err) {
    console.log(`  analysis error in ${path}: ${(err as Error).stack?.split('\n').slice(0, 4).join(' | ')}`);
  }
}

if (process.env.BENCH_BASELINE) {
  let baseBytes = 0;
  const b0 = performance.now();
  for (const f of scannedFiles) {
    const text = await readFile(f.absolute, 'utf8');
    baseBytes += Buffer.byteLength(text);
    ts.createSourceFile(f.path, text, ts.ScriptTarget.Latest, true, scriptKind(f.path));
  }
  const bs = (performance.now() - b0) / 1000;
  console.log(`  baseline (read + parse every file, no prefilter, no rules): ${(baseBytes / 1e6 / bs).toFixed(2)} MB/s, ${(scannedFiles.length / bs).toFixed(0)} files/s`);
}
