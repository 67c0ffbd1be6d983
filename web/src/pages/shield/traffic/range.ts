// The analytics date range: presets relative to now ("last hour"), sent as `start` instants and
// evaluated when the query runs, or a custom range of whole UTC days sent as the spec's `from`/`to`.
import type { QueryOf } from '../../../api/types.ts';

export type AnalyticsQuery = QueryOf<'/api/v1/shield/sites/{id}/analytics'>;

export const PRESETS = [
  { id: '1h', label: 'Last hour', ms: 3_600_000 },
  { id: '24h', label: 'Last 24 hours', ms: 86_400_000 },
  { id: '7d', label: 'Last 7 days', ms: 7 * 86_400_000 },
  { id: '30d', label: 'Last 30 days', ms: 30 * 86_400_000 },
] as const;

export type PresetId = (typeof PRESETS)[number]['id'];

export type Range = { kind: 'preset'; preset: PresetId } | { kind: 'custom'; from: string; to: string };

export const DEFAULT_RANGE: Range = { kind: 'preset', preset: '24h' };

/** The API's limit on a range, in days (inclusive). */
export const MAX_DAYS = 90;

/** The query parameters of a range, as of `now`. */
export function queryOf(range: Range, now: number = Date.now()): AnalyticsQuery {
  if (range.kind === 'custom') return { from: range.from, to: range.to };
  const preset = PRESETS.find((p) => p.id === range.preset) ?? PRESETS[1];
  return { start: new Date(now - preset.ms).toISOString() };
}

export function labelOf(range: Range): string {
  if (range.kind === 'custom') return range.from === range.to ? `${range.from} (UTC)` : `${range.from} to ${range.to} (UTC)`;
  return PRESETS.find((p) => p.id === range.preset)?.label ?? range.preset;
}

/** YYYY-MM-DD of a time, in UTC (the API's days are UTC days). */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** Why a custom range cannot be asked for, or null. */
export function customRangeProblem(from: string, to: string): string | null {
  if (!from || !to) return 'Choose both a first and a last day.';
  if (from > to) return 'The first day must not be after the last day.';
  const days = Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000) + 1;
  if (days > MAX_DAYS) return `A range may cover at most ${MAX_DAYS} days.`;
  return null;
}
