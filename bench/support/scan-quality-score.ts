// Scoring for bench/scan-quality.ts: secrets the way the Leaky Repo's benchmark.py scores them, SAST
// by labelled lines covered. Findings from every tool are reduced to one shape first.
import type { LineLabel, SecretsLabel } from './scan-quality-labels.ts';

/** A finding of any tool, reduced to what scoring needs. */
export interface ToolFinding {
  /** Rule that reported it (`aws-access-key-id`, `security/detect-object-injection`, …). */
  rule: string;
  /** Relative to the scanned root, `/`-separated. */
  path: string;
  /** 1-based. */
  line: number;
  /** Last line of the reported range, when the tool gives one. */
  endLine?: number;
}

// --- secrets -----------------------------------------------------------------------------------

export interface SecretsFileScore {
  path: string;
  expected: number;
  found: number;
  falsePositives: number;
}

export interface SecretsScore {
  files: number;
  /** Labelled files with at least one finding. */
  filesCovered: number;
  expected: number;
  /** Findings in labelled files, up to each file's expected count (benchmark.py's "total finds"). */
  trueFinds: number;
  /** Findings beyond a labelled file's expected count. */
  labelledFalsePositives: number;
  /** Findings in files the labels do not list at all (beyond benchmark.py, which ignores them). */
  unlabelledFalsePositives: number;
  findings: number;
  perFile: SecretsFileScore[];
  /** Unlabelled files with findings, and how many. */
  unlabelled: Array<{ path: string; found: number }>;
}

export function countByPath(findings: readonly ToolFinding[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const f of findings) counts.set(f.path, (counts.get(f.path) ?? 0) + 1);
  return counts;
}

/** benchmark.py's build_markdown_rows/build_md_table: expected = risk + informative, FP = max(found − expected, 0). */
export function scoreSecrets(labels: readonly SecretsLabel[], findings: readonly ToolFinding[]): SecretsScore {
  const counts = countByPath(findings);
  const labelled = new Set(labels.map((l) => l.path));
  const perFile: SecretsFileScore[] = labels.map((l) => {
    const expected = l.risk + l.informative;
    const found = counts.get(l.path) ?? 0;
    return { path: l.path, expected, found, falsePositives: Math.max(found - expected, 0) };
  });
  const unlabelled = [...counts].filter(([path]) => !labelled.has(path)).map(([path, found]) => ({ path, found }));
  const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
  return {
    files: perFile.length,
    filesCovered: perFile.filter((f) => f.found > 0).length,
    expected: sum(perFile.map((f) => f.expected)),
    trueFinds: sum(perFile.map((f) => f.found - f.falsePositives)),
    labelledFalsePositives: sum(perFile.map((f) => f.falsePositives)),
    unlabelledFalsePositives: sum(unlabelled.map((u) => u.found)),
    findings: findings.length,
    perFile,
    unlabelled,
  };
}

// --- SAST --------------------------------------------------------------------------------------

export const labelKey = (l: { path: string; line: number }): string => `${l.path}:${l.line}`;

/** Whether a finding's reported range covers the labelled line (its own line when it has no end). */
export function covers(f: ToolFinding, label: LineLabel): boolean {
  if (f.path !== label.path) return false;
  const end = f.endLine ?? f.line;
  return f.line <= label.line && label.line <= Math.max(end, f.line);
}

/** For each label, the findings that cover it (empty when missed). */
export function hitsByLabel(labels: readonly LineLabel[], findings: readonly ToolFinding[]): Map<string, ToolFinding[]> {
  const byPath = new Map<string, ToolFinding[]>();
  for (const f of findings) {
    const list = byPath.get(f.path);
    if (list) list.push(f);
    else byPath.set(f.path, [f]);
  }
  const out = new Map<string, ToolFinding[]>();
  for (const label of labels) out.set(labelKey(label), (byPath.get(label.path) ?? []).filter((f) => covers(f, label)));
  return out;
}

export const hitCount = (hits: ReadonlyMap<string, readonly ToolFinding[]>): number => [...hits.values()].filter((h) => h.length > 0).length;
