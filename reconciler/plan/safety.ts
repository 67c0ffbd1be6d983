// The guard rails of apply (octoDNS-style): refuse a plan that would delete or change more than a
// floor *and* a share of what this source owns, and call out every change that weakens protection.
import { kindEntry } from '../kinds/index.ts';
import type { Plan } from './plan.ts';

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

/** Human-readable warnings for changes that make protection weaker (each kind's entry says how its changes weaken). */
export function weakeningWarnings(plan: Plan): string[] {
  const warnings: string[] = [];
  for (const change of plan.changes) {
    const what = `${change.kind}/${change.name}`;
    const entry = kindEntry(change.kind);
    if (change.action === 'delete') {
      if (entry.protective && !change.withSite) warnings.push(`${what}: deleted (protection removed)`);
      continue;
    }
    for (const reason of entry.weakened?.(change.diff) ?? []) warnings.push(`${what}: weakened (${reason})`);
  }
  return warnings;
}
