// SARIF 2.1.0 for code-scanning dashboards (GitHub code scanning, GitLab, Azure DevOps): one run,
// the rules that produced findings, one result per finding. See docs/scan-cli.md.
//
// Identity: `partialFingerprints.primaryLocationLineHash` is the scanner's fingerprint, which does
// not contain the line number (secrets: rule, path, secret digest; SAST: rule, path, sink text,
// enclosing function, occurrence; SCA: advisory, package, version, lockfile), so a finding keeps
// its identity when code above it moves.
import type { Finding, Severity } from '../types.ts';
import { messageOf, relativeUri, type ScanReport } from './model.ts';

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

function ruleFor(f: Finding, scanType: string): SarifRule {
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

/** A source → sink path when the finding carries one (SAST taint: `details.source`, `details.sink`). */
function codeFlowOf(f: Finding): SarifResult['codeFlows'] | undefined {
  if (f.location.kind !== 'file') return undefined;
  const { source, sink } = f.details;
  if (!isStep(source) || !isStep(sink)) return undefined;
  const step = (s: { line: number; expression?: unknown }, what: string): { location: SarifLocation } => ({
    location: {
      physicalLocation: physical(f.location.path, s.line),
      message: { text: typeof s.expression === 'string' && s.expression ? `${what}: ${s.expression}` : what },
    },
  });
  return [{ threadFlows: [{ locations: [step(source, 'source'), step(sink, 'sink')] }] }];
}

function resultFor(f: Finding, ruleIndex: number): SarifResult {
  const loc = f.location;
  const physicalLocation = loc.kind === 'file' ? physical(loc.path, loc.line, loc.column, loc.end_line) : physical(loc.path);
  const text = loc.kind === 'package' ? `${f.title}: ${loc.name}@${loc.version} (${loc.ecosystem})` : `${f.title}: ${messageOf(f) === f.title ? f.evidence : messageOf(f)}`;
  const result: SarifResult = {
    ruleId: f.rule_id,
    ruleIndex,
    level: LEVEL[f.severity],
    message: { text: text.trim() || f.title },
    locations: [{ physicalLocation }],
    partialFingerprints: { primaryLocationLineHash: f.fingerprint, 'aegis/v1': f.fingerprint },
    properties: { severity: f.severity, ...(f.cwe ? { cwe: f.cwe } : {}) },
  };
  const flows = codeFlowOf(f);
  if (flows) result.codeFlows = flows;
  return result;
}

export interface SarifOptions {
  /** Extra properties per result (the server adds the vulnerability id). */
  resultProperties?: (f: Finding, index: number) => Record<string, unknown> | undefined;
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
  return {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: report.tool.name, version: report.tool.version, semanticVersion: report.tool.version, informationUri: report.tool.informationUri, rules } },
        originalUriBaseIds: { '%SRCROOT%': { description: { text: 'The scanned directory' } } },
        results,
        properties: { scan_type: report.scanType, suppressed: report.suppressed },
      },
    ],
  };
}

export function renderSarif(report: ScanReport, options: SarifOptions = {}): string {
  return `${JSON.stringify(toSarif(report, options), null, 2)}\n`;
}
