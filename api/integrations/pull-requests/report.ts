// What a pull request's check says: the head's findings that the base does not have (compared by
// fingerprint, which does not depend on line numbers, so code moved by the change is not "new"),
// as annotations, a check title and summary, and the summary comment. Pure functions of the two
// scans and the connection's settings.
import { countBySeverity, locationText, messageOf, SEVERITY_ORDER, SEVERITY_RANK, sortFindings } from '../../../scanners/report/index.ts';
import type { Finding, Severity } from '../../../scanners/types.ts';
import type { AnnotationInput, CheckInput } from '../providers/types.ts';
import type { PullRequestSettingsValue } from './events.ts';

export const CHECK_NAME = 'Aegis';
/** Marks the comment as Aegis's (for people reading the thread; the stored comment id is what is edited). */
export const COMMENT_MARKER = '<!-- aegis:pull-request-check -->';
/** Rows of the findings tables; the counts above them cover every finding. */
const TABLE_ROWS = 50;
const EVIDENCE_CHARS = 200;
/** Annotations per check: GitHub takes 50 per request, so a pull request full of findings costs at most 10 requests; the most severe are kept. */
export const MAX_ANNOTATIONS = 500;

export type FailOn = PullRequestSettingsValue['fail_on'];

export interface Comparison {
  /** In the head, not in the base; most severe first. */
  added: Finding[];
  /** In the base, not in the head. */
  fixed: Finding[];
  /** In both. */
  unchanged: number;
}

export function compareFindings(head: readonly Finding[], base: readonly Finding[]): Comparison {
  const inBase = new Set(base.map((f) => f.fingerprint));
  const inHead = new Set(head.map((f) => f.fingerprint));
  const added = sortFindings(head.filter((f) => !inBase.has(f.fingerprint)));
  const fixed = sortFindings(base.filter((f) => !inHead.has(f.fingerprint)));
  return { added, fixed, unchanged: head.length - added.length };
}

export function fails(severity: Severity, failOn: FailOn): boolean {
  return failOn !== 'none' && SEVERITY_RANK[severity] >= SEVERITY_RANK[failOn];
}

export function conclusionOf(c: Comparison, failOn: FailOn): 'success' | 'failure' {
  return c.added.some((f) => fails(f.severity, failOn)) ? 'failure' : 'success';
}

/** `2 new findings (1 critical, 1 high)`, or `No new findings`. */
export function titleOf(c: Comparison): string {
  if (c.added.length === 0) return 'No new findings';
  const counts = countBySeverity(c.added);
  const parts = SEVERITY_ORDER.filter((s) => counts[s] > 0).map((s) => `${counts[s]} ${s}`);
  return `${c.added.length} new finding${c.added.length === 1 ? '' : 's'} (${parts.join(', ')})`;
}

function lineOf(f: Finding): { start: number; end: number } {
  if (f.location.kind !== 'file') return { start: 1, end: 1 };
  const start = Math.max(1, f.location.line);
  return { start, end: Math.max(start, f.location.end_line ?? start) };
}

/** One line, bounded: evidence is already safe to show (scanners never keep a whole secret). */
function shortEvidence(f: Finding): string {
  const text = f.evidence.replace(/\s+/g, ' ').trim();
  return text.length > EVIDENCE_CHARS ? `${text.slice(0, EVIDENCE_CHARS - 1)}…` : text;
}

export function annotationsOf(c: Comparison, failOn: FailOn): AnnotationInput[] {
  return c.added.slice(0, MAX_ANNOTATIONS).map((f) => {
    const { start, end } = lineOf(f);
    const evidence = shortEvidence(f);
    const explained = messageOf(f);
    const message = [...(explained !== f.title ? [explained] : []), `Severity: ${f.severity}${f.cwe ? ` · ${f.cwe}` : ''}`, ...(evidence ? [`Evidence: ${evidence}`] : [])].join('\n');
    return { path: f.location.path, startLine: start, endLine: end, level: fails(f.severity, failOn) ? 'failure' : 'warning', title: `${f.rule_id}: ${f.title}`, message };
  });
}

/** Markdown table cells: no pipes or line breaks from the finding's text. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

function findingsTable(findings: readonly Finding[]): string {
  const rows = findings.slice(0, TABLE_ROWS).map((f) => `| ${f.severity} | \`${cell(f.rule_id)}\` | ${cell(f.title)}${f.cwe ? ` (${f.cwe})` : ''} | \`${cell(locationText(f))}\` |`);
  const more = findings.length > TABLE_ROWS ? `\n\n…and ${findings.length - TABLE_ROWS} more.` : '';
  return ['| Severity | Rule | Finding | Location |', '| --- | --- | --- | --- |', ...rows].join('\n') + more;
}

function countsLine(c: Comparison): string {
  const counts = countBySeverity(c.added);
  return SEVERITY_ORDER.map((s) => `${s}: ${counts[s]}`).join(' · ');
}

function failOnText(failOn: FailOn): string {
  return failOn === 'none' ? 'New findings never fail this check.' : `New findings of severity ${failOn} or above fail this check.`;
}

/** The check run's summary (markdown). */
export function checkSummaryOf(c: Comparison, failOn: FailOn, scanTypes: readonly string[]): string {
  const lines = [`Scanned with ${scanTypes.join(', ')}. ${failOnText(failOn)}`, '', countsLine(c)];
  if (c.added.length > 0) lines.push('', findingsTable(c.added));
  if (c.added.length > MAX_ANNOTATIONS) lines.push('', `Annotations show the ${MAX_ANNOTATIONS} most severe new findings.`);
  lines.push('', `${c.fixed.length} fixed in this pull request; ${c.unchanged} already present in the base.`);
  return lines.join('\n');
}

export function checkOf(c: Comparison, settings: PullRequestSettingsValue): CheckInput {
  return {
    name: CHECK_NAME,
    status: 'completed',
    conclusion: conclusionOf(c, settings.fail_on),
    title: titleOf(c),
    summary: checkSummaryOf(c, settings.fail_on, settings.scan_types),
    annotations: annotationsOf(c, settings.fail_on),
  };
}

export const IN_PROGRESS_CHECK: CheckInput = { name: CHECK_NAME, status: 'in_progress', title: 'Aegis: scanning', summary: 'Aegis is scanning this pull request.', annotations: [] };

/** The summary comment: edited in place on every push, so it always describes the latest head. */
export function commentOf(c: Comparison, settings: PullRequestSettingsValue, headSha: string): string {
  const verdict = conclusionOf(c, settings.fail_on) === 'failure' ? '❌' : '✅';
  const lines = [COMMENT_MARKER, `### ${verdict} Aegis: ${titleOf(c)}`, '', `Head \`${headSha.slice(0, 12)}\` · ${countsLine(c)} · ${c.fixed.length} fixed in this pull request`];
  if (c.added.length > 0) lines.push('', findingsTable(c.added));
  lines.push('', `_${failOnText(settings.fail_on)}_`);
  return lines.join('\n');
}

/** What the row keeps of the outcome (the API's `summary`). */
export function summaryOf(c: Comparison) {
  const counts = countBySeverity(c.added);
  return {
    new: c.added.length,
    fixed: c.fixed.length,
    unchanged: c.unchanged,
    new_by_severity: { critical: counts.critical, high: counts.high, medium: counts.medium, low: counts.low, info: counts.info },
  };
}
