// The impact preview's window as people write it — `30m`, `6h`, `24h`, `7d`, `1d12h` — read the same
// by the reconciler's --impact-window, a config repository's `impact_window` (checked by the API),
// `aegis serve --config-dir` and the Terraform provider's `impact_window`.

/** What a preview replays when nobody says. */
export const DEFAULT_IMPACT_WINDOW = '24h';

export const IMPACT_WINDOW_UNITS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;
export type ImpactWindowUnit = keyof typeof IMPACT_WINDOW_UNITS;
/** Longer than any traffic record is kept (7 days by default): a larger number is a typo. */
export const MAX_IMPACT_WINDOW_MS = 90 * IMPACT_WINDOW_UNITS.d;

/** Days, hours and minutes, each at most once and in that order. */
const GRAMMAR = /^(?:(\d{1,6})d)?(?:(\d{1,6})h)?(?:(\d{1,6})m)?$/;

export interface ImpactWindowValue {
  /** The amounts written, largest unit first, zeros left out: `[[1, 'd'], [12, 'h']]`. */
  parts: readonly (readonly [amount: number, unit: ImpactWindowUnit])[];
  ms: number;
}

/** Whole days, hours and minutes adding up to more than nothing, at most 90 days; null when it is not that. */
export function readImpactWindow(value: string): ImpactWindowValue | null {
  const parsed = parse(value);
  return parsed && parsed.ms <= MAX_IMPACT_WINDOW_MS ? parsed : null;
}

function parse(value: string): ImpactWindowValue | null {
  const match = GRAMMAR.exec(value.trim());
  if (!match) return null;
  const units = Object.keys(IMPACT_WINDOW_UNITS) as ImpactWindowUnit[];
  const parts = units.flatMap((unit, i) => (match[i + 1] === undefined || Number(match[i + 1]) === 0 ? [] : [[Number(match[i + 1]), unit] as const]));
  const ms = parts.reduce((sum, [amount, unit]) => sum + amount * IMPACT_WINDOW_UNITS[unit], 0);
  return ms > 0 ? { parts, ms } : null;
}

/** Why a window is not one (for a 422 naming the field), or null when it is. */
export function impactWindowProblem(value: string): string | null {
  if (readImpactWindow(value)) return null;
  return parse(value) ? 'must be at most 90d (longer than any traffic record is kept)' : 'must be whole days, hours or minutes: 30m, 6h, 24h, 7d, 1d12h';
}
