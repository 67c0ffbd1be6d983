// The impact preview's window as people write it — `30m`, `6h`, `24h`, `7d` — read the same by the
// reconciler's --impact-window, a config repository's `impact_window` (checked by the API) and
// `aegis serve --config-dir`.

/** What a preview replays when nobody says. */
export const DEFAULT_IMPACT_WINDOW = '24h';

export const IMPACT_WINDOW_UNITS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
export type ImpactWindowUnit = keyof typeof IMPACT_WINDOW_UNITS;
/** Longer than any traffic record is kept (7 days by default): a larger number is a typo. */
export const MAX_IMPACT_WINDOW_MS = 90 * IMPACT_WINDOW_UNITS.d;

/** A whole number of minutes, hours or days, at most 90 days; null when it is not one. */
export function readImpactWindow(value: string): { amount: number; unit: ImpactWindowUnit; ms: number } | null {
  const match = /^([1-9]\d{0,5})([mhd])$/.exec(value.trim());
  if (!match) return null;
  const amount = Number(match[1]);
  const unit = match[2] as ImpactWindowUnit;
  const ms = amount * IMPACT_WINDOW_UNITS[unit];
  return ms > MAX_IMPACT_WINDOW_MS ? null : { amount, unit, ms };
}

/** Why a window is not one (for a 422 naming the field), or null when it is. */
export function impactWindowProblem(value: string): string | null {
  if (readImpactWindow(value)) return null;
  return /^([1-9]\d{0,5})([mhd])$/.test(value.trim()) ? 'must be at most 90d (longer than any traffic record is kept)' : 'must be a whole number of minutes, hours or days: 30m, 6h, 24h, 7d';
}
