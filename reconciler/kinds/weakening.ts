// Shared by the kinds' `weakened`: a field whose new value ranks below its old one on a scale from
// weak to strong (a site going from `block` to `log`).
import type { FieldChange } from './kind.ts';

export type Rank = Readonly<Record<string, number>>;

/** `action block → log` when the field moved down the scale, else null. Values off the scale never count. */
export function lowered(diff: readonly FieldChange[], field: string, rank: Rank): string | null {
  const change = diff.find((d) => d.field === field);
  if (!change) return null;
  const before = rank[String(change.before)];
  const after = rank[String(change.after)];
  return before !== undefined && after !== undefined && after < before ? `${field} ${String(change.before)} → ${String(change.after)}` : null;
}

/** Every reason that is not null, in order. */
export const reasons = (...found: (string | null)[]): string[] => found.filter((r): r is string => r !== null);
