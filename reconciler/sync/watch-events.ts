// What a config watcher reports, and how a reconcile outcome becomes a report. Drift checks run
// every interval and mostly find nothing, or the same thing again: each is compared with the state
// the previous pass left (its "signature") and reported only when that state changes, so a drift
// left alone is reported once, not once a minute — and again when it goes away.
import type { PlanSummary, ReconcileOutcome } from './reconcile.ts';
import { impactLinesFor, siteImpactSection } from '../output/impact-text.ts';
import type { PlanImpact } from '../plan/impact.ts';
import type { Plan } from '../plan/plan.ts';

/**
 * Why a pass ran: the watcher started, files changed, or the drift timer fired — which retries the
 * last file pass instead when that one failed (the API was down, a step failed), so that an edit
 * is applied once the API is back without waiting for the next save.
 */
export type PassTrigger = 'start' | 'files' | 'retry' | 'drift';

/**
 * - `applied`: files changed (or at start) and the plan was applied.
 * - `unchanged`: files changed, and live state already matched them.
 * - `invalid`: the config has errors; nothing live was touched.
 * - `refused`: a threshold or a weakening rule held the plan back (the watcher never forces).
 * - `failed`: the plan could not be made safely, or a step of applying it failed.
 * - `drift`: live state differs from the unchanged config, reported only (self-heal off).
 * - `healed`: drift found and restored (self-heal on).
 * - `in-sync`: a drift check found live state matching the config again after a reported problem.
 */
export type PassEventKind = 'applied' | 'unchanged' | 'invalid' | 'refused' | 'failed' | 'drift' | 'healed' | 'in-sync';

export interface PassEvent {
  kind: PassEventKind;
  trigger: PassTrigger;
  /** ISO time the pass ended. */
  at: string;
  durationMs: number;
  summary: PlanSummary;
  /** One line per planned change (`update VirtualPatch shop/sqli (match_regex)`). */
  changes: string[];
  /** Config errors, refusal reasons, failed steps. */
  errors: string[];
  warnings: string[];
  /** Steps applied / failed, when the pass applied. */
  steps?: { applied: number; failed: number };
  /** The plan's impact on recorded traffic, when previewed: lines per change (aligned with `changes`), per site, and why any is missing. */
  impact?: ImpactReport;
}

export interface ImpactReport {
  /** `24h`. */
  window: string;
  /** For each change, its impact lines (none when not previewed). */
  changes: string[][];
  /** The per-site section: a heading, then a line per site previewed (a watcher's log leaves out sites without traffic). */
  sites: string[];
  notes: string[];
}

/** An exception: the API unreachable, the directory gone, the file watcher failing. The watcher keeps going. */
export interface ErrorEvent {
  kind: 'error';
  trigger: PassTrigger | 'watcher';
  at: string;
  message: string;
}

export interface WatchingEvent {
  kind: 'watching';
  at: string;
  path: string;
  source: string;
  selfHeal: boolean;
  /** 0: no drift checks. */
  driftIntervalMs: number;
  debounceMs: number;
}

export type WatchEvent = WatchingEvent | PassEvent | ErrorEvent;

/** The state a pass leaves, compared by the next drift check. */
export type Signature = string;
export const IN_SYNC: Signature = 'in-sync';

function passKind(trigger: PassTrigger, outcome: ReconcileOutcome): PassEventKind {
  switch (outcome.result) {
    case 'applied':
      return trigger === 'drift' ? 'healed' : 'applied';
    case 'unchanged':
      return trigger === 'drift' ? 'in-sync' : 'unchanged';
    case 'planned':
      return 'drift';
    default:
      return outcome.result;
  }
}

function outcomeSignature(outcome: ReconcileOutcome): Signature {
  switch (outcome.result) {
    case 'applied':
    case 'unchanged':
      return IN_SYNC;
    // Pending changes are the same whether held back by a threshold or by self-heal being off:
    // a refused file pass followed by a drift check that finds that very plan is no news.
    case 'planned':
    case 'refused':
      return `pending:${outcome.summary.checksum}`;
    // Sorted: live collections are read concurrently, so the same failures come in any order.
    default:
      return `${outcome.result}:${[...outcome.errors].sort().join('\n')}`;
  }
}

export const errorSignature = (message: string): Signature => `error:${message}`;

/**
 * The event for a pass, or null when it is a timed pass (drift check, retry) that found nothing
 * new, and the signature to compare the next one with. File passes are always reported: someone
 * just saved.
 */
export function passReport(
  trigger: PassTrigger,
  outcome: ReconcileOutcome,
  previous: Signature | null,
  timing: { at: Date; durationMs: number },
): { event: PassEvent | null; signature: Signature } {
  const kind = passKind(trigger, outcome);
  const signature = outcomeSignature(outcome);
  const event: PassEvent = {
    kind,
    trigger,
    at: timing.at.toISOString(),
    durationMs: Math.round(timing.durationMs),
    summary: outcome.summary,
    changes: outcome.changes,
    errors: outcome.errors,
    warnings: outcome.warnings,
    ...(outcome.applied ? { steps: { applied: outcome.applied.steps, failed: outcome.applied.failed } } : {}),
    ...(outcome.impact && outcome.plan ? { impact: impactReport(outcome.plan, outcome.impact) } : {}),
  };
  const timed = trigger === 'drift' || trigger === 'retry';
  const news = !timed || kind === 'healed' || signature !== previous;
  return { event: news ? event : null, signature };
}

function impactReport(plan: Plan, impact: PlanImpact): ImpactReport {
  return { window: impact.window.flag, changes: plan.changes.map((change) => impactLinesFor(change, impact)), sites: siteImpactSection(impact, { withoutTraffic: false }), notes: impact.notes };
}

const TRIGGER_TEXT: Record<PassTrigger | 'watcher', string> = { start: 'initial pass', files: 'files changed', retry: 'retry of the failed pass', drift: 'drift check', watcher: 'file watcher' };
const count = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

function headline(event: WatchEvent): string {
  if (event.kind === 'watching') {
    const drift = event.driftIntervalMs > 0 ? `drift check every ${event.driftIntervalMs / 1000} s, self-heal ${event.selfHeal ? 'on' : 'off'}` : 'no drift checks';
    return `watching ${event.path} as source ${event.source} (${drift})`;
  }
  if (event.kind === 'error') return `error (${TRIGGER_TEXT[event.trigger]}): ${event.message}; still watching`;
  const why = `(${TRIGGER_TEXT[event.trigger]}, ${event.durationMs} ms)`;
  const changes = count(event.changes.length, 'change');
  switch (event.kind) {
    case 'applied':
      return `applied ${changes} ${why}`;
    case 'unchanged':
      return `no changes ${why}`;
    case 'invalid':
      return `invalid config, ${count(event.errors.length, 'error')}; nothing changed ${why}`;
    case 'refused':
      return `refused ${changes}; nothing changed ${why}`;
    case 'failed':
      return `failed: ${count(event.errors.length, 'error')} ${why}`;
    case 'drift':
      return `drift: live state differs from the config by ${changes}; left alone (self-heal off) ${why}`;
    case 'healed':
      return `drift healed: restored ${changes} ${why}`;
    case 'in-sync':
      return `in sync: live state matches the config again ${why}`;
  }
}

/** A headline and indented detail lines (changes, errors, warnings), for terminals and logs. */
export function describeEvent(event: WatchEvent): { headline: string; details: string[] } {
  if (event.kind !== 'watching' && event.kind !== 'error') {
    const impact = event.impact;
    const changes = event.changes.flatMap((c, i) => [`  ${c}`, ...(impact?.changes[i] ?? []).map((line) => `      ${line}`)]);
    const sites = impact ? [...impact.sites.map((line) => `  ${line}`), ...impact.notes.map((note) => `  note: ${note}`)] : [];
    const details = [...changes, ...sites, ...event.errors.map((e) => `  error: ${e}`), ...event.warnings.map((w) => `  warning: ${w}`)];
    return { headline: headline(event), details };
  }
  return { headline: headline(event), details: [] };
}
