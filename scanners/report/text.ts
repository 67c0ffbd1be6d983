// A readable terminal report: one block per finding, most severe first, then a summary line (URL
// scans: with what the scan covered and what limited it).
import { countBySeverity, isUrlScanType, isWebCoverage, locationText, SEVERITY_ORDER, URL_COVERAGE_ITEMS, type ScanReport } from './model.ts';

export interface TextOptions {
  /** Only the findings, no header or summary. */
  quiet?: boolean;
  /** ANSI colours (callers decide: a terminal, NO_COLOR unset). */
  colour?: boolean;
}

const COLOURS: Record<string, string> = { critical: '\u001b[1;31m', high: '\u001b[31m', medium: '\u001b[33m', low: '\u001b[36m', info: '\u001b[2m' };

export function renderText(report: ScanReport, options: TextOptions = {}): string {
  const paint = (severity: string, text: string): string => (options.colour ? `${COLOURS[severity] ?? ''}${text}\u001b[0m` : text);
  const lines: string[] = [];
  for (const f of report.findings) {
    lines.push(`${paint(f.severity, f.severity.toUpperCase().padEnd(8))} ${f.rule_id}  ${locationText(f)}`);
    lines.push(`         ${f.title}${f.cwe ? ` (${f.cwe})` : ''}`);
    if (f.evidence) lines.push(`         ${f.evidence.split('\n')[0]}`);
    const path = f.details?.path;
    if (Array.isArray(path) && path.length > 0) {
      lines.push('         path:');
      for (const step of path as Array<{ path?: unknown; line?: unknown; note?: unknown }>) {
        if (typeof step !== 'object' || step === null) continue;
        lines.push(`           ${String(step.path)}:${String(step.line)}${typeof step.note === 'string' && step.note ? `  ${step.note}` : ''}`);
      }
    }
    // URL findings grouped by cause (DAST): the other URLs that showed it.
    const count = f.details?.affected_count;
    const urls = Array.isArray(f.details?.affected_urls) ? (f.details.affected_urls as unknown[]).map(String) : [];
    if (f.location.kind === 'url' && typeof count === 'number' && count > 1) lines.push(`         same cause at ${count} URLs: ${urls.join(', ')}${count > urls.length ? ', …' : ''}`);
  }
  if (options.quiet) return lines.length > 0 ? `${lines.join('\n')}\n` : '';
  const counts = countBySeverity(report.findings);
  const parts = SEVERITY_ORDER.filter((s) => counts[s] > 0).map((s) => `${counts[s]} ${s}`);
  const suppressed = [
    report.suppressed.baseline > 0 ? `${report.suppressed.baseline} in baseline` : '',
    report.suppressed.diff_base > 0 ? `${report.suppressed.diff_base} already at diff base` : '',
  ].filter(Boolean);
  const coverage = report.coverage;
  // Code scans: `in DIR, N files scanned`; URL scans: `at URL (N requests, M pages crawled)`.
  const url = isUrlScanType(report.scanType);
  const where = url ? `at ${report.target}` : `in ${report.target}`;
  const covered = isWebCoverage(coverage)
    ? ` (${coverage.requests} requests, ${coverage.items} ${url ? URL_COVERAGE_ITEMS[report.scanType as keyof typeof URL_COVERAGE_ITEMS] : 'items'})`
    : coverage
      ? `, ${coverage.files_scanned} files scanned`
      : '';
  const summary =
    counts.total === 0
      ? `aegis scan ${report.scanType}: no findings ${where}${covered}`
      : `aegis scan ${report.scanType}: ${counts.total} finding${counts.total === 1 ? '' : 's'} (${parts.join(', ')}) ${where}${covered}`;
  if (lines.length > 0) lines.push('');
  lines.push(`${summary}${suppressed.length > 0 ? `; not reported: ${suppressed.join(', ')}` : ''}`);
  if (isWebCoverage(coverage)) for (const note of coverage.notes) lines.push(`  note: ${note}`);
  return `${lines.join('\n')}\n`;
}
