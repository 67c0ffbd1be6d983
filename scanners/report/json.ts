// The stable JSON report (`aegis scan --format json`), and the reader `--baseline` uses.
// Format: docs/scan-cli.md. Additive changes keep `version: 1`; anything else bumps it.
import { countBySeverity, type ReportFinding, type ScanReport, type SeverityCounts } from './model.ts';
import { errorMessage, isObject } from '../../schemas/json-value.ts';

export const JSON_REPORT_FORMAT = 'aegis-scan-report';
export const JSON_REPORT_VERSION = 1;

export interface JsonReport {
  format: typeof JSON_REPORT_FORMAT;
  version: typeof JSON_REPORT_VERSION;
  tool: { name: string; version: string };
  scan_type: string;
  target: string;
  generated_at: string;
  summary: SeverityCounts;
  suppressed: { baseline: number; diff_base: number };
  /** Code findings (location `file` or `package`) or URL findings (location `url`). */
  findings: ReportFinding[];
}

export function toJsonReport(report: ScanReport): JsonReport {
  return {
    format: JSON_REPORT_FORMAT,
    version: JSON_REPORT_VERSION,
    tool: { name: report.tool.name, version: report.tool.version },
    scan_type: report.scanType,
    target: report.target,
    generated_at: report.generatedAt,
    summary: countBySeverity(report.findings),
    suppressed: { ...report.suppressed },
    findings: report.findings,
  };
}

export function renderJson(report: ScanReport): string {
  return `${JSON.stringify(toJsonReport(report), null, 2)}\n`;
}

export class BaselineError extends Error {
  override name = 'BaselineError';
}


/**
 * The fingerprints a baseline file holds: a JSON report of this format (`findings[].fingerprint`)
 * or, as a convenience, a SARIF log written by `aegis scan --format sarif`
 * (`runs[].results[].partialFingerprints.primaryLocationLineHash`).
 */
export function baselineFingerprints(text: string): Set<string> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new BaselineError(`not JSON: ${errorMessage(err)}`);
  }
  const out = new Set<string>();
  if (isObject(doc) && doc.format === JSON_REPORT_FORMAT && Array.isArray(doc.findings)) {
    if (typeof doc.version !== 'number' || doc.version > JSON_REPORT_VERSION) throw new BaselineError(`unsupported report version ${String(doc.version)}`);
    for (const f of doc.findings) if (isObject(f) && typeof f.fingerprint === 'string') out.add(f.fingerprint);
    return out;
  }
  if (isObject(doc) && Array.isArray(doc.runs)) {
    for (const run of doc.runs) {
      if (!isObject(run) || !Array.isArray(run.results)) continue;
      for (const r of run.results) {
        const fp = isObject(r) && isObject(r.partialFingerprints) ? r.partialFingerprints.primaryLocationLineHash : undefined;
        if (typeof fp === 'string') out.add(fp);
      }
    }
    return out;
  }
  throw new BaselineError(`not an aegis scan report (expected "format": "${JSON_REPORT_FORMAT}" from --format json, or a SARIF log)`);
}
