// One reconciliation pass — validate, read live state, plan, and apply when allowed — with every
// guard rail of `aegis apply`: invalid config or an incomplete read changes nothing, ownership
// decides what may be pruned, and the change thresholds and (optionally) weakening rules refuse a
// plan until a person forces it; asked for (`aegis watch`), an impact preview of the plan goes with
// the outcome and --max-new-blocks refuses it the same way. `aegis watch`, `aegis serve --config-dir` and the config-repo sync
// jobs of the API all reconcile through here, so an automatic sync is exactly as careful as a manual
// apply.
import { applyPlan, type ApplyResult } from '../apply/apply.ts';
import type { ResourceApi } from '../live/resources.ts';
import { preparePlan } from './session.ts';
import { newBlockViolations, previewPlanImpact, reuseImpact, type ImpactOptions, type PlanImpact } from '../plan/impact.ts';
import { summarise, type ChangeAction, type Plan, type PlannedChange } from '../plan/plan.ts';
import { DEFAULT_THRESHOLDS, thresholdViolation, weakeningWarnings, type Thresholds } from '../plan/safety.ts';

/**
 * - `applied`: the plan had changes and all were applied.
 * - `unchanged`: live state already matched.
 * - `planned`: changes found and left alone (applying was not allowed: plan-only, drift without self-heal).
 * - `refused`: changes found, held back by a threshold or a weakening rule until forced.
 * - `invalid`: the config has errors; nothing was changed.
 * - `failed`: the plan could not be made safely (conflicts, unreadable collections) or a step failed.
 */
export type ReconcileResult = 'applied' | 'unchanged' | 'planned' | 'refused' | 'invalid' | 'failed';

export interface ReconcileOptions {
  api: ResourceApi;
  /** A config directory (or a Terraform JSON file). */
  path: string;
  /** The ownership source id (reconciler/plan/ownership.ts). */
  source: string;
  prune: boolean;
  adopt?: boolean;
  /** False: plan only, report the changes. */
  apply: boolean;
  /** Apply even past the thresholds and weakening rules (a person reviewed the plan). */
  force?: boolean;
  thresholds?: Thresholds;
  /** Refuse plans that weaken protection (deleted rules, block → log, …) unless forced. */
  denyWeakening?: boolean;
  /** Preview what the changes would have done to recorded traffic (absent: no preview). */
  impact?: ReconcileImpact;
}

export interface ReconcileImpact extends ImpactOptions {
  /** Refuse, unless forced, a plan whose preview has a site newly blocking more requests than this (or no preview). */
  maxNewBlocks?: number;
  /** The last pass's preview: reused while the plan is the same (a watcher's drift checks find the same plan again and again). */
  previous?: { plan: Plan; impact: PlanImpact; at: number };
}

export interface PlanSummary extends Record<ChangeAction, number> {
  unchanged: number;
  /** The plan's checksum (same config + same live state → same checksum); null without a plan. */
  checksum: string | null;
}

export interface ReconcileOutcome {
  result: ReconcileResult;
  summary: PlanSummary;
  /** One line per planned change: `update VirtualPatch shop/sqli (action, match_regex)`. */
  changes: string[];
  errors: string[];
  warnings: string[];
  /** Steps applied / failed, when the plan was applied. */
  applied?: { steps: number; failed: number };
  plan: Plan | null;
  /** The plan's impact preview, when asked for and the plan had changes. */
  impact?: PlanImpact;
}

const EMPTY_SUMMARY: PlanSummary = { create: 0, update: 0, replace: 0, delete: 0, unchanged: 0, checksum: null };

export function describeChange(change: PlannedChange): string {
  const fields = change.action === 'update' || change.action === 'replace' ? ` (${change.diff.map((d) => d.field).join(', ')})` : '';
  return `${change.action} ${change.kind} ${change.name}${fields}`;
}

function applyFailures(result: ApplyResult): string[] {
  return result.failed.map((f) => `${f.step} ${f.change.kind} ${f.change.name}: ${f.error}`);
}

export async function reconcile(options: ReconcileOptions): Promise<ReconcileOutcome> {
  const prepared = await preparePlan(options.api, {
    path: options.path,
    source: options.source,
    adopt: options.adopt ?? false,
    prune: options.prune,
    denyWeakening: false,
  });
  if ('configErrors' in prepared) {
    return { result: 'invalid', summary: EMPTY_SUMMARY, changes: [], errors: prepared.configErrors, warnings: prepared.warnings, plan: null };
  }
  const { plan, warnings } = prepared;
  const summary: PlanSummary = { ...summarise(plan), unchanged: plan.unchanged, checksum: plan.checksum };
  const impact = options.impact && plan.changes.length > 0 ? (reuseImpact(options.impact.previous, plan) ?? (await previewPlanImpact(plan, options.impact))) : undefined;
  const base = { summary, changes: plan.changes.map(describeChange), warnings, plan, ...(impact ? { impact } : {}) };
  if (prepared.errors.length > 0) return { ...base, result: 'failed', errors: prepared.errors };
  if (plan.changes.length === 0) return { ...base, result: 'unchanged', errors: [] };
  if (!options.apply) return { ...base, result: 'planned', errors: [] };
  if (!options.force) {
    const weakening = options.denyWeakening ? weakeningWarnings(plan) : [];
    const threshold = thresholdViolation(plan, options.thresholds ?? DEFAULT_THRESHOLDS);
    const blocks = impact && options.impact?.maxNewBlocks !== undefined ? newBlockViolations(impact, options.impact.maxNewBlocks) : [];
    const reasons = [...(threshold ? [threshold] : []), ...weakening.map((w) => `refusing to apply a weakening change: ${w}`), ...blocks.map((b) => `refusing to apply: ${b}`)];
    // A weakening that refuses the plan is said once, as the reason, not again as a warning.
    if (reasons.length > 0) return { ...base, result: 'refused', errors: reasons, warnings: warnings.filter((w) => !weakening.includes(w)) };
  }
  const result = await applyPlan(plan, options.api);
  const applied = { steps: result.applied.length, failed: result.failed.length };
  if (result.failed.length > 0) return { ...base, result: 'failed', errors: applyFailures(result), applied };
  return { ...base, result: 'applied', errors: [], applied };
}
