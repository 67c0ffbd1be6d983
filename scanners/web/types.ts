// What every URL scanner (DAST, API, CVE templates) takes and gives back. The job prepares a
// ScanHttp (scope, budget, rate, authentication, address policy) and calls the scanner; scanners
// know nothing of jobs, the database or the API, and send traffic only through ctx.http.
import type { Finding, UrlLocation } from '../types.ts';
import type { ScanHttp } from './http.ts';

export type WebScanType = 'dast' | 'api' | 'cve';

export interface WebScanContext {
  http: ScanHttp;
  /** Aborted when the scan is canceled: stop promptly. */
  signal: AbortSignal;
  onProgress?: (fraction: number) => void;
}

/** Attack classes a virtual patch can be derived for (api/vulnerabilities virtual-patch route). */
export type AttackClass = 'sqli' | 'xss' | 'traversal' | 'open_redirect' | 'cmdi' | 'ssti';

/**
 * In every URL finding's `details`:
 * - `check`: everything needed to run exactly this check again (verify-fix), as plain JSON; the
 *   scanner that made it reads it back in its `recheck`.
 * - `attack` (injection findings): where the attack goes in, for deriving a virtual patch.
 * - `request` / `response`: short excerpts that prove the finding.
 */
export interface WebFindingDetails {
  [key: string]: unknown;
  check: Record<string, unknown>;
  attack?: { class: AttackClass; method: string; path: string; parameter: string; in: 'query' | 'body' | 'path' | 'header' };
  request?: string;
  response?: string;
}

export interface WebCoverage {
  /** Requests sent (the budget's count). */
  requests: number;
  /** Pages crawled (DAST), operations exercised (API), templates run (CVE). */
  items: number;
  /** What limited the scan: budget reached, out-of-scope links skipped, operations without a schema… */
  notes: string[];
}

/** A URL scanner's finding: located by request, with WebFindingDetails in `details`. */
export type WebFinding = Finding<UrlLocation>;

export interface WebScanOutput {
  findings: WebFinding[];
  coverage: WebCoverage;
}

/** The outcome of re-running one finding's check. */
export interface Recheck {
  reproduced: boolean;
  /** What the re-run saw (request/response excerpt), stored as the finding's fresh evidence. */
  evidence: string;
}
