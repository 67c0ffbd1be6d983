// CVE-targeted scan: runs the bundled templates a request selects (by CVE id and/or tag) against
// one target and turns their matches into findings; `recheckCve` re-runs the template behind one
// finding for verify-fix. Knows nothing of jobs or the database; traffic goes through ctx.http.
import { createHash } from 'node:crypto';
import type { Recheck, WebFinding, WebScanContext, WebScanOutput } from '../web/types.ts';
import { runTemplate, type TemplateMatch, type TemplateRun } from './engine.ts';
import { knownTags, selectTemplates, templateById } from './library.ts';
import type { CveTemplate } from './template.ts';

export interface CveScanInput {
  target: string;
  cves?: string[];
  tags?: string[];
}

/** The selection names nothing, or names CVE ids or tags the library does not have. */
export class CveSelectionError extends Error {
  override name = 'CveSelectionError';
}

/** Templates in flight at once; ScanHttp still paces every request to the scan's rate. */
const CONCURRENCY = 4;
const MAX_NOTES = 50;

/**
 * Why a selection cannot run (for a 422 before the scan is queued), or null. Unknown CVE ids and
 * unknown tags are both refused, listed: a typo should not silently shrink the scan.
 */
export function checkCveSelection(input: { cves?: readonly string[]; tags?: readonly string[] }): string | null {
  if ((input.cves?.length ?? 0) === 0 && (input.tags?.length ?? 0) === 0) return 'name at least one CVE id (cves) or tag (tags)';
  const selection = selectTemplates(input);
  const problems: string[] = [];
  if (selection.unknownCves.length > 0) problems.push(`no bundled template covers ${selection.unknownCves.join(', ')}`);
  if (selection.unknownTags.length > 0) problems.push(`no bundled template is tagged ${selection.unknownTags.join(', ')} (known tags: ${knownTags().join(', ')})`);
  if (problems.length > 0) return problems.join('; ');
  return selection.templates.length === 0 ? 'the selection matches no bundled template' : null;
}

function fingerprint(templateId: string, method: string, stablePath: string): string {
  return createHash('sha256').update(`${templateId}\0${method}\0${stablePath}`).digest('hex');
}

function toFinding(template: CveTemplate, target: string, run: TemplateRun, match: TemplateMatch): WebFinding {
  return {
    rule_id: template.id,
    title: template.name,
    severity: template.severity,
    cwe: template.cweIds[0] ?? null,
    location: { kind: 'url', url: match.url, method: match.method },
    evidence: match.evidence,
    fingerprint: fingerprint(template.id, match.method, match.stablePath),
    details: {
      check: { template_id: template.id, target },
      cve_ids: [...template.cveIds],
      tags: [...template.tags],
      cvss_score: template.cvssScore,
      matched: match.matched,
      extracted: run.extracted,
      request: match.requestExcerpt,
      response: match.responseExcerpt,
      references: [...template.references],
      ...(match.attack ? { attack: match.attack } : {}),
    },
  };
}

export async function scanCve(input: CveScanInput, ctx: WebScanContext): Promise<WebScanOutput> {
  const problem = checkCveSelection(input);
  const selection = selectTemplates(input);
  // A scheduled scan may outlive a template (library changed): run what is left and say so; only an
  // empty selection is an error.
  if (selection.templates.length === 0) throw new CveSelectionError(problem ?? 'the selection matches no bundled template');
  const notes: string[] = [];
  if (selection.unknownCves.length > 0) notes.push(`no bundled template covers ${selection.unknownCves.join(', ')}`);
  if (selection.unknownTags.length > 0) notes.push(`no bundled template is tagged ${selection.unknownTags.join(', ')}`);

  const templates = selection.templates;
  const runs: (TemplateRun | undefined)[] = new Array(templates.length);
  const before = ctx.http.requests;
  let next = 0;
  let done = 0;
  let budgetOut = false;
  const worker = async () => {
    while (!budgetOut && next < templates.length) {
      ctx.signal.throwIfAborted();
      const i = next++;
      const run = await runTemplate(templates[i]!, input.target, ctx);
      runs[i] = run;
      if (run.budgetExhausted) budgetOut = true;
      ctx.onProgress?.(++done / templates.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, templates.length) }, worker));

  const findings: WebFinding[] = [];
  const runNotes: string[] = [];
  runs.forEach((run, i) => {
    if (!run) return;
    runNotes.push(...run.notes);
    for (const match of run.matches) findings.push(toFinding(templates[i]!, input.target, run, match));
  });
  const notRun = runs.filter((r) => r === undefined).length;
  if (budgetOut) notes.push(`request budget reached: ${notRun} of ${templates.length} template(s) not run`);
  notes.push(...runNotes.slice(0, MAX_NOTES));
  if (runNotes.length > MAX_NOTES) notes.push(`… and ${runNotes.length - MAX_NOTES} more request note(s)`);
  return { findings, coverage: { requests: ctx.http.requests - before, items: runs.filter((r) => r !== undefined).length, notes } };
}

/** Re-runs the template of a finding (details.check = {template_id, target}) against its target. */
export async function recheckCve(check: Record<string, unknown>, ctx: WebScanContext): Promise<Recheck> {
  const { template_id: id, target } = check;
  if (typeof id !== 'string' || typeof target !== 'string') throw new Error('a CVE check needs template_id and target');
  const template = templateById(id);
  if (!template) throw new Error(`template ${id} is no longer bundled; the finding cannot be rechecked`);
  const run = await runTemplate(template, target, ctx);
  const match = run.matches[0];
  if (match) return { reproduced: true, evidence: match.evidence };
  // "Fixed" must mean the target answered and did not match, not that it could not be asked.
  if (run.budgetExhausted) throw new Error(`${template.id}: the request budget ran out before the check finished`);
  if (run.exchanges.length === 0) throw new Error(`${template.id}: no request got a response (${run.notes.join('; ') || 'nothing sent'})`);
  const seen = run.exchanges.length > 0 ? run.exchanges.join('\n') : 'no request got a response';
  return { reproduced: false, evidence: [`${template.id} did not match`, seen, ...run.notes].join('\n').slice(0, 2000) };
}
