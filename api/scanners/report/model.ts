// What every report format (text, JSON, SARIF, JUnit) is made from: the findings of one code scan
// after baseline and diff-base suppression, plus what the scan covered. Pure data, no I/O.
import type { CodeScanType, Coverage, Finding, Severity } from '../types.ts';

export const SEVERITY_ORDER: readonly Severity[] = ['critical', 'high', 'medium', 'low', 'info'];
export const SEVERITY_RANK: Readonly<Record<Severity, number>> = { info: 0, low: 1, medium: 2, high: 3, critical: 4 };

export interface ToolInfo {
  name: string;
  version: string;
  informationUri: string;
}

export interface ScanReport {
  scanType: CodeScanType;
  tool: ToolInfo;
  /** What was scanned, as the user named it (display only). */
  target: string;
  /** Findings to report, most severe first. */
  findings: Finding[];
  /** Findings left out: known in the --baseline file, or already present at --diff-base. */
  suppressed: { baseline: number; diff_base: number };
  coverage?: Coverage | undefined;
  /** ISO time the report was made. */
  generatedAt: string;
}

export type SeverityCounts = Record<Severity, number> & { total: number };

export function countBySeverity(findings: readonly Finding[]): SeverityCounts {
  const counts: SeverityCounts = { critical: 0, high: 0, medium: 0, low: 0, info: 0, total: findings.length };
  for (const f of findings) counts[f.severity]++;
  return counts;
}

/** Most severe first, then by path, line and rule: a stable order for every format. */
export function sortFindings(findings: readonly Finding[]): Finding[] {
  const line = (f: Finding): number => (f.location.kind === 'file' ? f.location.line : 0);
  return [...findings].sort(
    (a, b) =>
      SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] ||
      cmp(a.location.path, b.location.path) ||
      line(a) - line(b) ||
      cmp(a.rule_id, b.rule_id) ||
      cmp(a.fingerprint, b.fingerprint),
  );
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `src/db.ts:12:5`, or `package-lock.json (lodash@4.17.20)` for a package finding. */
export function locationText(f: Finding): string {
  const loc = f.location;
  if (loc.kind === 'package') return `${loc.path} (${loc.name}@${loc.version})`;
  return `${loc.path}:${loc.line}${loc.column !== undefined ? `:${loc.column}` : ''}`;
}

/** A finding's explanation, when its rule gives one (SAST `details.message`), else its title. */
export function messageOf(f: Finding): string {
  const message = f.details.message;
  return typeof message === 'string' && message.trim() !== '' ? message.trim() : f.title;
}

/** Forward slashes, no leading `./` or `/`: a URI relative to the scanned root. */
export function relativeUri(path: string): string {
  return path.replace(/\\/g, '/').replace(/^(\.\/)+/, '').replace(/^\/+/, '');
}
