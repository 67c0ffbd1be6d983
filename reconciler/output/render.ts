// Plan output in three forms: a terminal diff (Terraform-like symbols, colour on a TTY), stable
// JSON for machines (format documented in docs/plan-json.md), and Markdown for pull-request comments.
import { kindEntry } from '../kinds/index.ts';
import type { PlanImpact } from '../plan/impact.ts';
import type { Plan, PlannedChange } from '../plan/plan.ts';
import { summarise } from '../plan/plan.ts';
import { impactLinesFor, siteImpactSection } from './impact-text.ts';

export interface RenderContext {
  warnings: string[];
  errors: string[];
  /** The environment the key works in; a plan against the sandbox says so. */
  environment: 'live' | 'test';
  /** What the changes would have done to recorded traffic; absent with --no-impact. */
  impact?: PlanImpact | undefined;
}

const ENVIRONMENT_NAME = { live: 'live environment', test: 'test environment (sandbox)' } as const;

const SYMBOL = { create: '+', update: '~', replace: '-/+', delete: '-' } as const;
const COLOUR = { create: 32, update: 33, replace: 35, delete: 31 } as const;

function short(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value) : JSON.stringify(value);
  return text ?? 'null';
}

/**
 * A change's fields as output shows them: a write-only field given as its value (Terraform JSON)
 * is hidden; one given as a reference (`{ env }`, `{ file }`) says where the value comes from.
 */
function shownFields(change: PlannedChange): Record<string, unknown> | null {
  if (!change.fields) return null;
  const shown = { ...change.fields };
  for (const field of kindEntry(change.kind).definition.meta.sensitive) if (typeof shown[field] === 'string') shown[field] = '(sensitive)';
  return shown;
}

function changeLines(change: PlannedChange): string[] {
  if (change.action === 'create') {
    return Object.entries(shownFields(change) ?? {})
      .filter(([field]) => field !== 'labels')
      .map(([field, value]) => `      ${field}: ${field === 'document' ? `(${String(value).length} characters)` : short(value)}`);
  }
  if (change.action === 'delete') return change.withSite ? ['      (deleted with its site)'] : [];
  return change.diff.map((d) => `      ~ ${d.field}: ${short(d.before)} → ${short(d.after)}`);
}

function summaryLine(plan: Plan): string {
  const s = summarise(plan);
  return `Plan: ${s.create} to create, ${s.update} to update, ${s.replace} to replace, ${s.delete} to delete; ${plan.unchanged} unchanged.`;
}

export function renderText(plan: Plan, context: RenderContext, colour: boolean): string {
  const paint = (code: number, text: string) => (colour ? `\u001b[${code}m${text}\u001b[0m` : text);
  const out: string[] = [`Aegis plan for source "${plan.source}" in the ${ENVIRONMENT_NAME[context.environment]} (${plan.reads} reads)`, ''];
  if (plan.changes.length === 0) out.push('  No changes. Live state matches the configuration.');
  for (const change of plan.changes) {
    const head = `${SYMBOL[change.action].padStart(3)} ${change.kind} ${change.name}${change.id ? ` (${change.id})` : ''}${change.adopted ? ' [adopt]' : ''}`;
    out.push(paint(COLOUR[change.action], head), ...changeLines(change), ...impactLinesFor(change, context.impact).map((line) => `      ${line}`));
  }
  if (context.impact) {
    const section = siteImpactSection(context.impact);
    const notes = context.impact.notes.map((note) => paint(33, `note: ${note}`));
    if (section.length + notes.length > 0) out.push('', ...section, ...notes);
  }
  if (plan.unmanaged.length > 0) {
    out.push('', `Unmanaged (not in this source; left alone): ${plan.unmanaged.length}`);
    for (const u of plan.unmanaged.slice(0, 20)) out.push(`      ${u.kind} ${u.id}: ${u.description}`);
    if (plan.unmanaged.length > 20) out.push(`      … and ${plan.unmanaged.length - 20} more`);
  }
  for (const w of context.warnings) out.push(paint(33, `warning: ${w}`));
  for (const e of context.errors) out.push(paint(31, `error: ${e}`));
  out.push('', summaryLine(plan), `Checksum: ${plan.checksum}`);
  return `${out.join('\n')}\n`;
}

/** The stable machine format (docs/plan-json.md); bump format_version on any incompatible change. */
export function renderJson(plan: Plan, context: RenderContext): string {
  const document = {
    format_version: 1,
    source: plan.source,
    environment: context.environment,
    checksum: plan.checksum,
    summary: { ...summarise(plan), unchanged: plan.unchanged },
    changes: plan.changes.map((c) => ({
      action: c.action,
      kind: c.kind,
      name: c.name,
      id: c.id ?? null,
      site: c.siteName ?? null,
      adopted: c.adopted ?? false,
      with_site: c.withSite ?? false,
      diff: c.diff,
      fields: c.action === 'delete' ? null : shownFields(c),
      impact: changeImpactJson(c, context.impact),
    })),
    impact: planImpactJson(context.impact),
    unmanaged: plan.unmanaged,
    conflicts: plan.conflicts.map((c) => ({ kind: c.kind, name: c.name, message: c.message, location: c.location ?? null })),
    incomplete: plan.incomplete,
    warnings: context.warnings,
    errors: context.errors,
    reads: plan.reads,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

/** A change's impact in the JSON plan: its site, the summed counts, and the objects they come from; null when not previewed. */
function changeImpactJson(change: PlannedChange, impact: PlanImpact | undefined): Record<string, unknown> | null {
  const found = impact?.byChange.get(change);
  if (!found) return null;
  return { site_id: found.siteId, ...found.group, objects: found.objects };
}

/** The plan's impact in the JSON plan: the window, each site's whole answer (totals included), and why any is missing; null with --no-impact. */
function planImpactJson(impact: PlanImpact | undefined): Record<string, unknown> | null {
  if (!impact) return null;
  return {
    window: impact.window.flag,
    since: impact.since,
    sites: impact.sites.map((site) => ({
      site: site.site,
      site_id: site.siteId,
      status: site.status === 'no-traffic' ? 'no_traffic' : site.status,
      note: site.note ?? null,
      ...(site.answer ? { window: site.answer.window, covered: site.answer.covered, mode: site.answer.mode, totals: site.answer.totals, objects: site.answer.objects, differs_from_recorded: site.answer.differs_from_recorded, warnings: site.answer.warnings } : {}),
    })),
    notes: impact.notes,
  };
}

export function renderMarkdown(plan: Plan, context: RenderContext): string {
  const s = summarise(plan);
  const out = [`### Aegis plan — \`${plan.source}\` (${ENVIRONMENT_NAME[context.environment]})`, '', `**${s.create}** to create · **${s.update}** to update · **${s.replace}** to replace · **${s.delete}** to delete · ${plan.unchanged} unchanged`, ''];
  if (plan.changes.length > 0) {
    out.push('| | kind | name | details |', '|---|---|---|---|');
    for (const c of plan.changes) {
      const what = c.action === 'create' ? 'new' : c.action === 'delete' ? (c.withSite ? 'with its site' : 'removed') : c.diff.map((d) => `\`${d.field}\`: ${short(d.before)} → ${short(d.after)}`).join('<br>');
      const details = [what, ...impactLinesFor(c, context.impact)].join('<br>');
      out.push(`| \`${SYMBOL[c.action]}\` | ${c.kind} | \`${c.name}\` | ${details.replace(/\|/g, '\\|')} |`);
    }
    out.push('');
  } else out.push('No changes.', '');
  if (context.impact) {
    const [heading, ...sites] = siteImpactSection(context.impact);
    if (heading) out.push(`**${heading}**`, '', ...sites.map((line) => `- ${line.trim()}`), '');
    for (const note of context.impact.notes) out.push(`> ${note}`, '');
  }
  if (context.warnings.length > 0) out.push('<details><summary>Warnings</summary>', '', ...context.warnings.map((w) => `- ${w}`), '', '</details>', '');
  if (context.errors.length > 0) out.push('**Errors**', '', ...context.errors.map((e) => `- ${e}`), '');
  if (plan.unmanaged.length > 0) out.push(`${plan.unmanaged.length} unmanaged object(s) left alone.`, '');
  out.push(`Checksum: \`${plan.checksum}\``);
  return `${out.join('\n')}\n`;
}
