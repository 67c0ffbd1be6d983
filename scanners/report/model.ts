// What every report format (text, JSON, SARIF, JUnit) is made from: the findings of one scan after
// baseline and diff-base suppression, plus what the scan covered. Code scans (secrets, SAST, SCA)
// locate findings in files and lockfiles; URL scans (DAST, API, CVE) by the request that shows them.
// Pure data, no I/O.
import type { CodeScanType, Coverage, Finding, FindingLocation, Severity, UrlLocation } from '../types.ts';
import type { WebCoverage, WebScanType } from '../web/types.ts';

export const SEVERITY_ORDER: readonly Severity[] = ['critical', 'high', 'medium', 'low', 'info'];
export const SEVERITY_RANK: Readonly<Record<Severity, number>> = { info: 0, low: 1, medium: 2, high: 3, critical: 4 };

/** Every scan type a report is made for: the code scans and the URL scans. */
export type ReportScanType = CodeScanType | WebScanType;
export const URL_REPORT_SCAN_TYPES: readonly WebScanType[] = ['dast', 'api', 'cve'];
export const isUrlScanType = (scanType: string): scanType is WebScanType => (URL_REPORT_SCAN_TYPES as readonly string[]).includes(scanType);

/** Where a reported finding is: a file, a lockfile's package, or a URL (with method and parameter). */
export type ReportLocation = FindingLocation | UrlLocation;
export type ReportFinding = Finding<ReportLocation>;

export interface ToolInfo {
  name: string;
  version: string;
  informationUri: string;
}

export interface ScanReport {
  scanType: ReportScanType;
  tool: ToolInfo;
  /** What was scanned, as the user named it (display only): a directory, or a URL. */
  target: string;
  /** Findings to report, most severe first. */
  findings: ReportFinding[];
  /** Findings left out: known in the --baseline file, or already present at --diff-base. */
  suppressed: { baseline: number; diff_base: number };
  /** Files scanned (code scans), or requests sent and items covered (URL scans). */
  coverage?: Coverage | WebCoverage | undefined;
  /** ISO time the report was made. */
  generatedAt: string;
}

export type SeverityCounts = Record<Severity, number> & { total: number };

export function countBySeverity(findings: readonly Pick<ReportFinding, 'severity'>[]): SeverityCounts {
  const counts: SeverityCounts = { critical: 0, high: 0, medium: 0, low: 0, info: 0, total: findings.length };
  for (const f of findings) counts[f.severity]++;
  return counts;
}

/** The file (code findings) or the absolute URL (URL findings) a finding is in. */
export function locationUri(f: ReportFinding): string {
  return f.location.kind === 'url' ? f.location.url : f.location.path;
}

/**
 * Most severe first, then by path (or URL), line, method, parameter and rule: a stable order for
 * every format.
 */
export function sortFindings<F extends ReportFinding>(findings: readonly F[]): F[] {
  const line = (f: F): number => (f.location.kind === 'file' ? f.location.line : 0);
  const method = (f: F): string => (f.location.kind === 'url' ? f.location.method : '');
  const parameter = (f: F): string => (f.location.kind === 'url' ? (f.location.parameter ?? '') : '');
  return [...findings].sort(
    (a, b) =>
      SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] ||
      cmp(locationUri(a), locationUri(b)) ||
      line(a) - line(b) ||
      cmp(method(a), method(b)) ||
      cmp(parameter(a), parameter(b)) ||
      cmp(a.rule_id, b.rule_id) ||
      cmp(a.fingerprint, b.fingerprint),
  );
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * `src/db.ts:12:5`, `package-lock.json (lodash@4.17.20)` for a package finding, or
 * `GET https://shop.example.com/search?q=x (q)` for a URL finding (the parameter in brackets).
 */
export function locationText(f: ReportFinding): string {
  const loc = f.location;
  if (loc.kind === 'url') return `${loc.method} ${loc.url}${loc.parameter ? ` (${loc.parameter})` : ''}`;
  if (loc.kind === 'package') return `${loc.path} (${loc.name}@${loc.version})`;
  return `${loc.path}:${loc.line}${loc.column !== undefined ? `:${loc.column}` : ''}`;
}

/**
 * A finding's explanation, when its rule gives one (SAST `details.message`; URL findings
 * `details.description`), else its title.
 */
export function messageOf(f: ReportFinding): string {
  const message = f.details.message;
  if (typeof message === 'string' && message.trim() !== '') return message.trim();
  const description = f.location.kind === 'url' ? f.details.description : undefined;
  return typeof description === 'string' && description.trim() !== '' ? description.trim() : f.title;
}

/** Forward slashes, no leading `./` or `/`: a URI relative to the scanned root. */
export function relativeUri(path: string): string {
  return path.replace(/\\/g, '/').replace(/^(\.\/)+/, '').replace(/^\/+/, '');
}

/** What a URL scan's coverage counts as items, by scan type. */
export const URL_COVERAGE_ITEMS: Readonly<Record<WebScanType, string>> = { dast: 'pages crawled', api: 'operations exercised', cve: 'templates run' };

/** URL-scan coverage (requests, items), as opposed to a code scan's files. */
export const isWebCoverage = (coverage: Coverage | WebCoverage | undefined): coverage is WebCoverage =>
  coverage !== undefined && typeof (coverage as Partial<WebCoverage>).requests === 'number';
