// SARIF 2.1.0 for code-scanning dashboards (GitHub code scanning, GitLab, Azure DevOps): one run,
// the rules that produced findings, one result per finding. See docs/scan-cli.md.
//
// Identity: `partialFingerprints.primaryLocationLineHash` is the scanner's fingerprint, which does
// not contain the line number (secrets: rule, path, secret digest; SAST: rule, path, sink text,
// enclosing function, occurrence; SCA: advisory, package, version, lockfile), so a finding keeps
// its identity when code above it moves. URL findings (DAST: rule, method, URL path, parameter, …)
// keep the fingerprint their scanner gave them in the same place, and are located at their absolute
// URL (no `%SRCROOT%` base, no region), with the method and parameter in the result's properties.
import type { Severity } from '../types.ts';
import { isUrlScanType, locationText, messageOf, relativeUri, type ReportFinding, type ScanReport } from './model.ts';

export const SARIF_SCHEMA = 'https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json';

/** GitHub's bands: ≥ 9.0 critical, 7.0–8.9 high, 4.0–6.9 medium, 0.1–3.9 low. */
export const SECURITY_SEVERITY: Readonly<Record<Severity, string>> = { critical: '9.5', high: '8.0', medium: '5.5', low: '2.0', info: '0.0' };
const LEVEL: Readonly<Record<Severity, SarifLevel>> = { critical: 'error', high: 'error', medium: 'warning', low: 'note', info: 'note' };

export type SarifLevel = 'error' | 'warning' | 'note' | 'none';

export interface SarifMessage {
  text: string;
  markdown?: string;
}
export interface SarifRegion {
  startLine: number;
  startColumn?: number;
  endLine?: number;
}
export interface SarifPhysicalLocation {
  artifactLocation: { uri: string; uriBaseId?: string };
  region?: SarifRegion;
}
export interface SarifLocation {
  physicalLocation: SarifPhysicalLocation;
  message?: SarifMessage;
}
export interface SarifRule {
  id: string;
  name?: string;
  shortDescription: SarifMessage;
  fullDescription: SarifMessage;
  help: SarifMessage;
  helpUri?: string;
  defaultConfiguration: { level: SarifLevel };
  properties: { tags: string[]; 'security-severity': string; precision?: string };
}
export interface SarifResult {
  ruleId: string;
  ruleIndex: number;
  level: SarifLevel;
  message: SarifMessage;
  locations: SarifLocation[];
  partialFingerprints: Record<string, string>;
  codeFlows?: { threadFlows: { locations: { location: SarifLocation }[] }[] }[];
  properties?: Record<string, unknown>;
}
export interface SarifLog {
  $schema: string;
  version: '2.1.0';
  runs: {
    tool: { driver: { name: string; version: string; semanticVersion?: string; informationUri: string; rules: SarifRule[] } };
    originalUriBaseIds?: Record<string, { uri?: string; description?: SarifMessage }>;
    results: SarifResult[];
    properties?: Record<string, unknown>;
  }[];
}

/** `CWE-89` → `external/cwe/cwe-89` (GitHub's tag form). */
export function cweTag(cwe: string): string | undefined {
  const m = /^CWE-(\d+)$/i.exec(cwe.trim());
  return m ? `external/cwe/cwe-${m[1]}` : undefined;
}

function cweUrl(cwe: string): string | undefined {
  const m = /^CWE-(\d+)$/i.exec(cwe.trim());
  return m ? `https://cwe.mitre.org/data/definitions/${m[1]}.html` : undefined;
}

function ruleFor(f: ReportFinding, scanType: string): SarifRule {
  const message = messageOf(f);
  const tags = ['security', scanType];
  const tag = f.cwe ? cweTag(f.cwe) : undefined;
  if (tag) tags.push(tag);
  const url = f.cwe ? cweUrl(f.cwe) : undefined;
  const help = [message, f.cwe ? `Weakness: ${f.cwe}${url ? ` (${url})` : ''}.` : ''].filter(Boolean).join('\n\n');
  return {
    id: f.rule_id,
    name: f.rule_id,
    shortDescription: { text: f.title },
    fullDescription: { text: message },
    help: { text: help, markdown: help },
    ...(url ? { helpUri: url } : {}),
    defaultConfiguration: { level: LEVEL[f.severity] },
    properties: { tags, 'security-severity': SECURITY_SEVERITY[f.severity] },
  };
}

function physical(path: string, line?: number, column?: number, endLine?: number): SarifPhysicalLocation {
  const loc: SarifPhysicalLocation = { artifactLocation: { uri: relativeUri(path), uriBaseId: '%SRCROOT%' } };
  if (line !== undefined && Number.isInteger(line) && line >= 1) {
    const region: SarifRegion = { startLine: line };
    if (column !== undefined && Number.isInteger(column) && column >= 1) region.startColumn = column;
    if (endLine !== undefined && Number.isInteger(endLine) && endLine >= line) region.endLine = endLine;
    loc.region = region;
  }
  return loc;
}

const isStep = (v: unknown): v is { line: number; expression?: unknown } =>
  typeof v === 'object' && v !== null && typeof (v as { line?: unknown }).line === 'number';

/** One step of a taint path (SAST: `details.path`), possibly in another file than the finding. */
const isPathStep = (v: unknown): v is { path: string; line: number; note?: unknown } =>
  isStep(v) && typeof (v as { path?: unknown }).path === 'string';

/**
 * A source → sink path when the finding carries one: every step of `details.path` (taint through
 * functions and modules; file and URL findings), else `details.source` and `details.sink` (file
 * findings).
 */
function codeFlowOf(f: ReportFinding): SarifResult['codeFlows'] | undefined {
  const { source, sink, path } = f.details;
  if (f.location.kind !== 'package' && Array.isArray(path) && path.length >= 2 && path.every(isPathStep)) {
    const locations = path.map((s) => ({
      location: { physicalLocation: physical(s.path, s.line), message: { text: typeof s.note === 'string' && s.note ? s.note : 'step' } },
    }));
    return [{ threadFlows: [{ locations }] }];
  }
  if (f.location.kind !== 'file' || !isStep(source) || !isStep(sink)) return undefined;
  const file = f.location.path;
  const step = (s: { line: number; expression?: unknown }, what: string): { location: SarifLocation } => ({
    location: {
      physicalLocation: physical(file, s.line),
      message: { text: typeof s.expression === 'string' && s.expression ? `${what}: ${s.expression}` : what },
    },
  });
  return [{ threadFlows: [{ locations: [step(source, 'source'), step(sink, 'sink')] }] }];
}

/** A URL finding's location: its absolute URL, described by method, URL and parameter. */
function urlLocation(f: ReportFinding & { location: { kind: 'url' } }): SarifLocation {
  return { physicalLocation: { artifactLocation: { uri: f.location.url } }, message: { text: locationText(f) } };
}

function resultFor(f: ReportFinding, ruleIndex: number): SarifResult {
  const loc = f.location;
  let location: SarifLocation;
  let text: string;
  const properties: Record<string, unknown> = { severity: f.severity, ...(f.cwe ? { cwe: f.cwe } : {}) };
  if (loc.kind === 'url') {
    location = urlLocation(f as ReportFinding & { location: typeof loc });
    // The evidence (request and response excerpt) is what this occurrence showed.
    text = `${f.title}: ${f.evidence}`;
    const affected = f.details.affected_urls;
    Object.assign(properties, {
      'aegis/method': loc.method,
      ...(loc.parameter !== undefined ? { 'aegis/parameter': loc.parameter } : {}),
      ...(Array.isArray(affected) ? { 'aegis/affected_urls': affected } : {}),
    });
  } else {
    location = { physicalLocation: loc.kind === 'file' ? physical(loc.path, loc.line, loc.column, loc.end_line) : physical(loc.path) };
    text = loc.kind === 'package' ? `${f.title}: ${loc.name}@${loc.version} (${loc.ecosystem})` : `${f.title}: ${messageOf(f) === f.title ? f.evidence : messageOf(f)}`;
  }
  const result: SarifResult = {
    ruleId: f.rule_id,
    ruleIndex,
    level: LEVEL[f.severity],
    message: { text: text.trim() || f.title },
    locations: [location],
    partialFingerprints: { primaryLocationLineHash: f.fingerprint, 'aegis/v1': f.fingerprint },
    properties,
  };
  const flows = codeFlowOf(f);
  if (flows) result.codeFlows = flows;
  return result;
}

export interface SarifOptions {
  /** Extra properties per result (the server adds the vulnerability id). */
  resultProperties?: (f: ReportFinding, index: number) => Record<string, unknown> | undefined;
}

export function toSarif(report: ScanReport, options: SarifOptions = {}): SarifLog {
  const rules: SarifRule[] = [];
  const index = new Map<string, number>();
  const results = report.findings.map((f, i) => {
    let ri = index.get(f.rule_id);
    if (ri === undefined) {
      ri = rules.length;
      index.set(f.rule_id, ri);
      rules.push(ruleFor(f, report.scanType));
    }
    const result = resultFor(f, ri);
    const extra = options.resultProperties?.(f, i);
    if (extra) result.properties = { ...result.properties, ...extra };
    return result;
  });
  // URL scans: results carry absolute URLs, and name the scanned directory only for a code flow.
  const url = isUrlScanType(report.scanType);
  const srcRoot = !url || report.findings.some((f) => f.location.kind !== 'url') || results.some((r) => r.codeFlows !== undefined);
  return {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: report.tool.name, version: report.tool.version, semanticVersion: report.tool.version, informationUri: report.tool.informationUri, rules } },
        ...(srcRoot ? { originalUriBaseIds: { '%SRCROOT%': { description: { text: 'The scanned directory' } } } } : {}),
        results,
        properties: {
          scan_type: report.scanType,
          suppressed: report.suppressed,
          ...(url ? { target: report.target, ...(report.coverage ? { coverage: report.coverage } : {}) } : {}),
        },
      },
    ],
  };
}

export function renderSarif(report: ScanReport, options: SarifOptions = {}): string {
  return `${JSON.stringify(toSarif(report, options), null, 2)}\n`;
}
