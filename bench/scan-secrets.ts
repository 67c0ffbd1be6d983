// Throughput of the secrets scanner on one core over a large real tree — by default the project's
// own node_modules (≈ 20 000 files of JavaScript, maps, JSON, docs and native binaries). Reports
// MB/s and files/s of text actually scanned (binary and oversized files are skipped, not counted),
// the CPU used (one thread: CPU ≈ wall), and what was found, by rule.
//
// Target (issue): ≥ 20 MB/s on one core.
//   node bin/run-ts.mjs bench/scan-secrets.ts [DIR]     BENCH_ROUNDS=3 (the first run also loads
//   and compiles the rules and may read from a cold page cache; the best round is the figure)
import { resolve } from 'node:path';
import { scanSecrets, type SecretsScanOutput } from '../scanners/secrets/index.ts';
import { loadRuleSet } from '../scanners/secrets/rules.ts';

const TARGET_MB_S = 20;
const dir = resolve(process.argv[2] ?? 'node_modules');
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));

interface Round {
  seconds: number;
  cpuSeconds: number;
  out: SecretsScanOutput;
}

async function round(): Promise<Round> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const out = await scanSecrets({ root: dir, signal: new AbortController().signal }, { rules: loadRuleSet() });
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, out };
}

const mb = (bytes: number): number => bytes / 1e6;
const results: Round[] = [];
console.log(`secrets scan of ${dir}, ${rounds} round(s), ${loadRuleSet().rules.length} rules`);
for (let i = 0; i < rounds; i++) {
  const r = await round();
  results.push(r);
  const c = r.out.coverage;
  console.log(
    `  round ${i + 1}: ${r.seconds.toFixed(2)} s wall, ${r.cpuSeconds.toFixed(2)} s CPU — ` +
      `${mb(c.bytes_scanned).toFixed(1)} MB in ${c.files_scanned} files → ` +
      `${(mb(c.bytes_scanned) / r.seconds).toFixed(1)} MB/s, ${Math.round(c.files_scanned / r.seconds)} files/s, ${r.out.findings.length} findings`,
  );
}
const best = results.reduce((a, b) => (b.seconds < a.seconds ? b : a));
const { coverage, findings } = best.out;
const skipped = new Map<string, number>();
for (const s of coverage.skipped) skipped.set(s.reason, (skipped.get(s.reason) ?? 0) + 1);
const byRule = new Map<string, number>();
for (const f of findings) byRule.set(f.rule_id, (byRule.get(f.rule_id) ?? 0) + 1);
const mbs = mb(coverage.bytes_scanned) / best.seconds;
console.log(`skipped: ${[...skipped].map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`);
console.log(`findings by rule: ${[...byRule].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`);
console.log(`best: ${mbs.toFixed(1)} MB/s, ${Math.round(coverage.files_scanned / best.seconds)} files/s (target ≥ ${TARGET_MB_S} MB/s: ${mbs >= TARGET_MB_S ? 'met' : 'NOT met'})`);
if (process.env.BENCH_SHOW_FINDINGS) for (const f of findings) console.log(`  ${f.rule_id}\t${f.location.path}:${f.location.kind === 'file' ? f.location.line : ''}\t${f.evidence.slice(0, 140)}`);
