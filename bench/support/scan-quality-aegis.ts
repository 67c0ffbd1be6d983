// Aegis's own scanners for bench/scan-quality.ts, called in-process the way a scan job calls them
// (scanSecrets / scanSast on a directory, built-in rules), their findings reduced for scoring.
import { scanSast } from '../../scanners/sast/scan.ts';
import { loadRuleSet, scanSecrets } from '../../scanners/secrets/index.ts';
import type { Finding } from '../../scanners/types.ts';
import type { ToolFinding } from './scan-quality-score.ts';

export interface AegisRun {
  findings: ToolFinding[];
  /** Files the scanner left out, by reason. */
  skipped: Map<string, number>;
  ms: number;
}

function reduce(findings: readonly Finding[]): ToolFinding[] {
  const out: ToolFinding[] = [];
  for (const f of findings) {
    if (f.location.kind !== 'file') continue;
    const { path, line, end_line } = f.location;
    out.push({ rule: f.rule_id, path, line, ...(end_line !== undefined ? { endLine: end_line } : {}) });
  }
  return out;
}

function skippedByReason(skipped: ReadonlyArray<{ reason: string }>): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of skipped) out.set(s.reason, (out.get(s.reason) ?? 0) + 1);
  return out;
}

/** The secrets scanner over `root` (working tree only); the time covers loading the rules and scanning. */
export async function runAegisSecrets(root: string): Promise<AegisRun> {
  const t0 = performance.now();
  const out = await scanSecrets({ root, signal: new AbortController().signal }, { rules: loadRuleSet() });
  const ms = performance.now() - t0;
  return { findings: reduce(out.findings), skipped: skippedByReason(out.coverage.skipped), ms };
}

/** The SAST scanner over `root`; the time covers loading the rules and scanning. */
export async function runAegisSast(root: string): Promise<AegisRun> {
  const t0 = performance.now();
  const out = await scanSast({ root, signal: new AbortController().signal });
  const ms = performance.now() - t0;
  return { findings: reduce(out.findings), skipped: skippedByReason(out.coverage.skipped), ms };
}
