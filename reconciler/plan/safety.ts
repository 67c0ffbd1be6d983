// The guard rails of apply (octoDNS-style): refuse a plan that would delete or change more than a
// floor *and* a share of what this source owns, and call out every change that weakens protection.
import { canonicalJson } from './compare.ts';
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
const PATH_CASE_RANK: Record<string, number> = { sensitive: 0, insensitive: 1 };

function lowered(change: PlannedChange, field: string, rank: Record<string, number>): string | null {
  const diff = change.diff.find((d) => d.field === field);
  if (!diff) return null;
  const before = rank[String(diff.before)];
  const after = rank[String(diff.after)];
  return before !== undefined && after !== undefined && after < before ? `${field} ${String(diff.before)} → ${String(diff.after)}` : null;
}

/** `managed_rules` as the diff carries it (the API's whole object, or what config gives with defaults filled in). */
interface ManagedRules {
  enabled?: boolean;
  paranoia_level?: number;
  exclusions?: unknown[];
}

const asManagedRules = (value: unknown): ManagedRules | null => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as ManagedRules) : null);

/**
 * Managed rules weaken when they are turned off, their paranoia level goes down, or exclusions are
 * added (an exclusion that was not there before switches rules off for some requests).
 */
function managedRulesWeakened(change: PlannedChange): string[] {
  const diff = change.kind === 'ShieldSite' ? change.diff.find((d) => d.field === 'managed_rules') : undefined;
  const before = asManagedRules(diff?.before);
  const after = asManagedRules(diff?.after);
  if (!before || !after) return [];
  if (before.enabled !== false && after.enabled === false) return ['managed_rules turned off'];
  const reasons: string[] = [];
  if (typeof before.paranoia_level === 'number' && typeof after.paranoia_level === 'number' && after.paranoia_level < before.paranoia_level) {
    reasons.push(`managed_rules.paranoia_level ${before.paranoia_level} → ${after.paranoia_level}`);
  }
  const existing = new Set((before.exclusions ?? []).map((e) => canonicalJson(e)));
  const added = (after.exclusions ?? []).filter((e) => !existing.has(canonicalJson(e))).length;
  if (added > 0) reasons.push(`${added} managed_rules exclusion(s) added`);
  return reasons;
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
      // Rules written for /admin stop matching /Admin.
      change.kind === 'ShieldSite' ? lowered(change, 'path_case', PATH_CASE_RANK) : null,
    ].filter((r): r is string => r !== null);
    reasons.push(...managedRulesWeakened(change));
    const budget = change.kind === 'RateLimitRule' ? change.diff.find((d) => d.field === 'budget') : undefined;
    if (budget && Number(budget.after) > Number(budget.before)) reasons.push(`budget ${String(budget.before)} → ${String(budget.after)}`);
    for (const reason of reasons) warnings.push(`${what}: weakened (${reason})`);
  }
  return warnings;
}
