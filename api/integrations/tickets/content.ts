// What a ticket says about a finding: a title trackers accept, a Markdown description with what a
// developer needs to act (where, what, the evidence as stored — secrets are redacted when a scan
// stores them) and a link back to the finding, the labels, and the comment that closes it.
import type { VulnerabilityRow } from '../../findings/store.ts';
import type { TicketRequest } from './store.ts';

/** GitHub caps issue titles at 256 characters, Jira summaries at 255. */
const MAX_TITLE = 250;
const MAX_EVIDENCE = 3_000;

export const findingUrl = (publicUrl: string, vulnerabilityId: string): string => `${publicUrl.replace(/\/+$/, '')}/api/v1/vulnerabilities/${vulnerabilityId}`;

export function ticketTitle(finding: Pick<VulnerabilityRow, 'severity' | 'title'>): string {
  const title = `[Aegis] ${finding.severity} ${finding.title}`.replace(/\s+/g, ' ').trim();
  return title.length <= MAX_TITLE ? title : `${title.slice(0, MAX_TITLE - 1)}…`;
}

/** `path:line`, a package at a version, or a method and URL with its parameter. */
export function locationText(location: unknown): string | null {
  if (!location || typeof location !== 'object') return null;
  const l = location as Record<string, unknown>;
  const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
  const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  if (l.kind === 'url' && str(l.url)) {
    const method = str(l.method);
    const parameter = str(l.parameter);
    return `${method ? `${method} ` : ''}${str(l.url)}${parameter ? ` (parameter \`${parameter}\`)` : ''}`;
  }
  if (l.kind === 'package' && str(l.name)) {
    const version = str(l.version);
    const path = str(l.path);
    return `${str(l.name)}${version ? `@${version}` : ''}${path ? ` in ${path}` : ''}`;
  }
  const path = str(l.path);
  if (!path) return null;
  const line = num(l.line);
  return line !== null ? `${path}:${line}` : path;
}

/** A code fence longer than any run of backticks in `text`, so the evidence cannot close it early. */
function fenced(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}\n${text}\n${fence}`;
}

export function ticketDescription(finding: VulnerabilityRow, link: string): string {
  const location = locationText(finding.location);
  const rows: [string, string | null][] = [
    ['Severity', finding.severity],
    ['Rule', `\`${finding.rule_id}\``],
    ['CWE', finding.cwe],
    ['Target', finding.target],
    ['Location', location],
    ['First seen', finding.first_seen_at.toISOString()],
  ];
  const lines = [`**${finding.title}**`, '', ...rows.filter((r): r is [string, string] => r[1] !== null).map(([k, v]) => `- **${k}:** ${v}`)];
  const evidence = finding.evidence.trim();
  if (evidence) {
    const clipped = evidence.length > MAX_EVIDENCE ? `${evidence.slice(0, MAX_EVIDENCE)}\n…` : evidence;
    lines.push('', '**Evidence**', '', fenced(clipped));
  }
  lines.push('', `Finding in Aegis: ${link}`, '', `_Created by Aegis for finding \`${finding.id}\`. Closing this ticket resolves the finding in Aegis; resolving the finding closes this ticket._`);
  return lines.join('\n');
}

/** The caller's labels, then `aegis` and the severity, without repeats. */
export function ticketLabels(request: Pick<TicketRequest, 'labels'>, finding: Pick<VulnerabilityRow, 'severity'>): string[] {
  return [...new Set([...(request.labels ?? []), 'aegis', `severity:${finding.severity}`])];
}

export function closingComment(finding: Pick<VulnerabilityRow, 'resolution'>, link: string): string {
  const why =
    finding.resolution === 'fixed'
      ? 'a later scan no longer found it'
      : finding.resolution === 'verified'
        ? 'a verify-fix re-run no longer reproduced it'
        : 'it was marked resolved';
  return `Resolved in Aegis: ${why}. ${link}`;
}
