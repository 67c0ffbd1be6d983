// What every code scanner (secrets, SCA, SAST) takes and gives back (URL scanners: ./web/types.ts). The job that runs a scan
// prepares a directory (a git checkout or an unpacked archive), calls the scanner, and stores the
// findings; scanners know nothing of jobs, the database or HTTP.

export type Severity = 'critical' | 'high' | 'medium' | 'low' | 'info';
export type CodeScanType = 'sast' | 'sca' | 'secrets';

/** Where a finding is: a place in a file, or a package of a lockfile. */
export type FindingLocation =
  | { kind: 'file'; path: string; line: number; column?: number; end_line?: number; commit?: string }
  | { kind: 'package'; path: string; ecosystem: string; name: string; version: string };

/** Where a URL scan's finding is (DAST, API, CVE templates): the request that shows it. */
export type UrlLocation = { kind: 'url'; url: string; method: string; parameter?: string };

export interface Finding<Location = FindingLocation> {
  /** Rule or advisory that produced it (`aws-access-key-id`, `js-sql-injection`, `GHSA-…`). */
  rule_id: string;
  title: string;
  severity: Severity;
  /** `CWE-89`; null when the rule names none. */
  cwe: string | null;
  location: Location;
  /** Short, safe to store and show: code around the problem, never a full secret. */
  evidence: string;
  /**
   * Stable across scans of the same target while the problem is the same one: built from the rule,
   * the path and what was found (not the line number alone, which moves when code above changes).
   */
  fingerprint: string;
  /** Anything rule-specific worth showing (advisory aliases, fixed version, secret hash, taint path). */
  details: Record<string, unknown>;
}

export interface SkippedFile {
  path: string;
  reason: 'too_large' | 'binary' | 'excluded' | 'unreadable' | 'unsupported' | 'parse_error' | 'allowlisted';
}

/** Skipped files counted by file type (extension, or the name of an extension-less file) and reason. */
export interface SkippedByType {
  /** `.png`, `.min.js` is `.js`; a file without an extension is its lower-cased name (`makefile`, `.ds_store`). */
  type: string;
  reason: SkippedFile['reason'];
  files: number;
}

export interface Coverage {
  files_scanned: number;
  bytes_scanned: number;
  skipped: SkippedFile[];
  /** `skipped` summarised by file type and reason, most files first (secrets and SAST scans). */
  skipped_by_type?: SkippedByType[];
  /** What else limited the scan (history unavailable, truncated commits, …). */
  notes?: string[];
}

export interface ScanContext {
  /** Directory holding the source to scan. Scanners never read outside it (symlinks not followed). */
  root: string;
  /** Aborted when the scan is canceled: scanners check it often and stop promptly. */
  signal: AbortSignal;
  /** Fraction done, 0–1; called at most a few times a second. */
  onProgress?: (fraction: number) => void;
}

export interface ScanOutput {
  findings: Finding[];
  coverage: Coverage;
}
