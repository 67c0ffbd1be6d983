// The guard rails of apply (octoDNS-style): refuse a plan that would delete or change more than a
// floor *and* a share of what this source owns, and call out every change that weakens protection.
import type { Plan, PlannedChange } from './plan.ts';

export interface Thresholds {
  /** Changes (updates + replacements + deletions) allowed regardless of size. */
  floor: number;
  /** …and as a share of the objects this source owns, in percent. */
  percent: number;
}

export const DEFAULT_THRESHOLDS: Thresholds = { floor: 5, percent: 25 };

/** Why the plan is too large to apply without --force, or null. */
export function thresholdViolation(plan: Plan, thresholds: Thresholds = DEFAULT_THRESHOLDS): string | null {
  const risky = plan.changes.filter((c) => c.action !== 'create');
  const deletions = risky.filter((c) => c.action === 'delete').length;
  const limit = Math.max(thresholds.floor, (plan.ownedCount * thresholds.percent) / 100);
  if (risky.length <= limit) return null;
  return (
    `refusing to apply: ${risky.length} updates/replacements/deletions (${deletions} deletions) exceed both the floor of ${thresholds.floor} ` +
    `and ${thresholds.percent}% of the ${plan.ownedCount} objects this source owns. Review the plan, then re-run with --force ` +
    `(or raise --max-changes / --max-change-percent).`
  );
}

const MODE_RANK: Record<string, number> = { log: 0, challenge: 1, block: 2 };
const PATCH_ACTION_RANK: Record<string, number> = { log: 0, challenge: 1, block: 2 };
const IP_ACTION_RANK: Record<string, number> = { allow: 0, challenge: 1, deny: 2 };
const LIMIT_ACTION_RANK: Record<string, number> = { log: 0, challenge: 1, block: 2 };
const STRICTNESS_RANK: Record<string, number> = { lenient: 0, standard: 1, strict: 2 };

function lowered(change: PlannedChange, field: string, rank: Record<string, number>): string | null {
  const diff = change.diff.find((d) => d.field === field);
  if (!diff) return null;
  const before = rank[String(diff.before)];
  const after = rank[String(diff.after)];
  return before !== undefined && after !== undefined && after < before ? `${field} ${String(diff.before)} → ${String(diff.after)}` : null;
}

/** Human-readable warnings for changes that make protection weaker. */
export function weakeningWarnings(plan: Plan): string[] {
  const warnings: string[] = [];
  for (const change of plan.changes) {
    const what = `${change.kind}/${change.name}`;
    if (change.action === 'delete') {
      if (change.kind !== 'ScanSchedule' && change.kind !== 'Webhook' && !change.withSite) warnings.push(`${what}: deleted (protection removed)`);
      continue;
    }
    const reasons = [
      change.kind === 'ShieldSite' ? lowered(change, 'mode', MODE_RANK) : null,
      change.kind === 'VirtualPatch' ? lowered(change, 'action', PATCH_ACTION_RANK) : null,
      change.kind === 'IpAccessRule' ? lowered(change, 'action', IP_ACTION_RANK) : null,
      change.kind === 'RateLimitRule' ? lowered(change, 'action', LIMIT_ACTION_RANK) : null,
      change.kind === 'ShieldSchema' ? lowered(change, 'strictness', STRICTNESS_RANK) : null,
    ].filter((r): r is string => r !== null);
    const budget = change.kind === 'RateLimitRule' ? change.diff.find((d) => d.field === 'budget') : undefined;
    if (budget && Number(budget.after) > Number(budget.before)) reasons.push(`budget ${String(budget.before)} → ${String(budget.after)}`);
    for (const reason of reasons) warnings.push(`${what}: weakened (${reason})`);
  }
  return warnings;
}
