// A typed reading of a stored finding. TriageFinding keeps `location` and `details` as plain JSON
// (they come from the database and from several scanners), so every field the rules use is read
// here once, checked for its type, and is undefined when absent or malformed.
import type { TriageFinding } from '../types.ts';

export interface SourceWindow {
  start_line: number;
  end_line: number;
  text: string;
}

export interface TaintStep {
  path: string;
  line: number;
  note: string;
}

export type LocationView =
  | { kind: 'file'; path: string; line: number; commit: string | undefined }
  | { kind: 'package'; path: string; ecosystem: string; name: string; version: string }
  | { kind: 'url'; url: string; method: string; parameter: string | undefined }
  | { kind: 'unknown' };

export interface FindingView {
  scanType: string;
  ruleId: string;
  title: string;
  severity: string;
  /** `CWE-89` → 89; null when absent or not a CWE id. */
  cwe: number | null;
  location: LocationView;
  evidence: string;
  /** SAST taint: where the data came from (`req.query`) and the callee it reached (`db.query`). */
  taint: { source: string; sink: string; sourceLine: number | undefined; steps: TaintStep[] } | undefined;
  /** Secrets: `ghp_…(40)`, entropy in bits per character, the provider's answer when one was asked. */
  secret: { preview: string; entropy: number | undefined; verified: boolean | undefined } | undefined;
  /** SCA: the first release without the advisory; null when there is none. */
  fixedVersion: string | null | undefined;
  aliases: string[];
  /** SCA: a development-only dependency. */
  dev: boolean | undefined;
  /** URL findings: the scanner's reason (API) and response excerpt. */
  reason: string | undefined;
  response: string | undefined;
  cveIds: string[];
  sourceWindow: SourceWindow | undefined;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const obj = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

export function parseCwe(cwe: string | null): number | null {
  const m = typeof cwe === 'string' ? /^CWE-(\d{1,5})$/i.exec(cwe.trim()) : null;
  return m ? Number(m[1]) : null;
}

function location(raw: Record<string, unknown>): LocationView {
  const kind = str(raw.kind);
  if (kind === 'file') {
    const path = str(raw.path);
    const line = num(raw.line);
    if (path !== undefined && line !== undefined) return { kind, path, line, commit: str(raw.commit) };
  } else if (kind === 'package') {
    const [path, ecosystem, name, version] = [str(raw.path), str(raw.ecosystem), str(raw.name), str(raw.version)];
    if (path !== undefined && ecosystem !== undefined && name !== undefined && version !== undefined) return { kind, path, ecosystem, name, version };
  } else if (kind === 'url') {
    const [url, method] = [str(raw.url), str(raw.method)];
    if (url !== undefined && method !== undefined) return { kind, url, method, parameter: str(raw.parameter) };
  }
  return { kind: 'unknown' };
}

function taint(details: Record<string, unknown>): FindingView['taint'] {
  const source = obj(details.source);
  const sink = obj(details.sink);
  const sourceExpr = str(source?.expression);
  if (sourceExpr === undefined || sink === undefined) return undefined;
  const steps: TaintStep[] = [];
  if (Array.isArray(details.path)) {
    for (const s of details.path) {
      const step = obj(s);
      const [path, line, note] = [str(step?.path), num(step?.line), str(step?.note)];
      if (path !== undefined && line !== undefined && note !== undefined) steps.push({ path, line, note });
    }
  }
  return { source: sourceExpr, sink: str(sink.callee) ?? str(sink.expression) ?? 'the sink', sourceLine: num(source?.line), steps };
}

function sourceWindow(v: unknown): SourceWindow | undefined {
  const w = obj(v);
  const [start, end, text] = [num(w?.start_line), num(w?.end_line), str(w?.text)];
  if (start === undefined || end === undefined || text === undefined) return undefined;
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 1 || end < start) return undefined;
  return { start_line: start, end_line: end, text };
}

export function viewOf(f: TriageFinding): FindingView {
  const d = f.details ?? {};
  const preview = str(d.preview);
  const verified = typeof d.verified === 'boolean' ? d.verified : undefined;
  const fixed = d.fixed_version === null ? null : str(d.fixed_version);
  return {
    scanType: f.scan_type,
    ruleId: f.rule_id,
    title: f.title,
    severity: f.severity,
    cwe: parseCwe(f.cwe),
    location: location(f.location ?? {}),
    evidence: f.evidence ?? '',
    taint: taint(d),
    secret: f.scan_type === 'secrets' || preview !== undefined ? { preview: preview ?? '', entropy: num(d.entropy), verified } : undefined,
    fixedVersion: fixed,
    aliases: strings(d.aliases),
    dev: typeof d.dev === 'boolean' ? d.dev : undefined,
    reason: str(d.reason),
    response: str(d.response),
    cveIds: strings(d.cve_ids),
    sourceWindow: sourceWindow(d.source_window),
  };
}

/** `src/app.js:12`, `GET https://…/search (q)`, `lodash@4.17.20 (package-lock.json)`. */
export function describeLocation(l: LocationView): string {
  switch (l.kind) {
    case 'file':
      return `${l.path}:${l.line}${l.commit ? ` (commit ${l.commit.slice(0, 12)})` : ''}`;
    case 'package':
      return `${l.name}@${l.version} (${l.path})`;
    case 'url':
      return `${l.method} ${l.url}${l.parameter ? ` (parameter ${l.parameter})` : ''}`;
    default:
      return 'the reported location';
  }
}
