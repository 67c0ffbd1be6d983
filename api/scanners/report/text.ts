// A readable terminal report: one block per finding, most severe first, then a summary line.
import { countBySeverity, locationText, SEVERITY_ORDER, type ScanReport } from './model.ts';

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
  }
  if (options.quiet) return lines.length > 0 ? `${lines.join('\n')}\n` : '';
  const counts = countBySeverity(report.findings);
  const parts = SEVERITY_ORDER.filter((s) => counts[s] > 0).map((s) => `${counts[s]} ${s}`);
  const suppressed = [
    report.suppressed.baseline > 0 ? `${report.suppressed.baseline} in baseline` : '',
    report.suppressed.diff_base > 0 ? `${report.suppressed.diff_base} already at diff base` : '',
  ].filter(Boolean);
  const files = report.coverage ? `, ${report.coverage.files_scanned} files scanned` : '';
  const summary =
    counts.total === 0
      ? `aegis scan ${report.scanType}: no findings in ${report.target}${files}`
      : `aegis scan ${report.scanType}: ${counts.total} finding${counts.total === 1 ? '' : 's'} (${parts.join(', ')}) in ${report.target}${files}`;
  if (lines.length > 0) lines.push('');
  lines.push(`${summary}${suppressed.length > 0 ? `; not reported: ${suppressed.join(', ')}` : ''}`);
  return `${lines.join('\n')}\n`;
}
