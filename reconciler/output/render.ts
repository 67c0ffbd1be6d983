// Plan output in three forms: a terminal diff (Terraform-like symbols, colour on a TTY), stable
// JSON for machines (format documented in docs/plan-json.md), and Markdown for pull-request comments.
import { kindEntry } from '../kinds/index.ts';
import type { Plan, PlannedChange } from '../plan/plan.ts';
import { summarise } from '../plan/plan.ts';

export interface RenderContext {
  warnings: string[];
  errors: string[];
  /** The environment the key works in; a plan against the sandbox says so. */
  environment: 'live' | 'test';
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
    out.push(paint(COLOUR[change.action], head), ...changeLines(change));
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
    })),
    unmanaged: plan.unmanaged,
    conflicts: plan.conflicts.map((c) => ({ kind: c.kind, name: c.name, message: c.message, location: c.location ?? null })),
    incomplete: plan.incomplete,
    warnings: context.warnings,
    errors: context.errors,
    reads: plan.reads,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

export function renderMarkdown(plan: Plan, context: RenderContext): string {
  const s = summarise(plan);
  const out = [`### Aegis plan — \`${plan.source}\` (${ENVIRONMENT_NAME[context.environment]})`, '', `**${s.create}** to create · **${s.update}** to update · **${s.replace}** to replace · **${s.delete}** to delete · ${plan.unchanged} unchanged`, ''];
  if (plan.changes.length > 0) {
    out.push('| | kind | name | details |', '|---|---|---|---|');
    for (const c of plan.changes) {
      const details = c.action === 'create' ? 'new' : c.action === 'delete' ? (c.withSite ? 'with its site' : 'removed') : c.diff.map((d) => `\`${d.field}\`: ${short(d.before)} → ${short(d.after)}`).join('<br>');
      out.push(`| \`${SYMBOL[c.action]}\` | ${c.kind} | \`${c.name}\` | ${details.replace(/\|/g, '\\|')} |`);
    }
    out.push('');
  } else out.push('No changes.', '');
  if (context.warnings.length > 0) out.push('<details><summary>Warnings</summary>', '', ...context.warnings.map((w) => `- ${w}`), '', '</details>', '');
  if (context.errors.length > 0) out.push('**Errors**', '', ...context.errors.map((e) => `- ${e}`), '');
  if (plan.unmanaged.length > 0) out.push(`${plan.unmanaged.length} unmanaged object(s) left alone.`, '');
  out.push(`Checksum: \`${plan.checksum}\``);
  return `${out.join('\n')}\n`;
}
