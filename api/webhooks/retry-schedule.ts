// When a failed delivery is tried again. Like Stripe's and Svix's: quick retries for a blip, then
// hours apart, for about three days in all (DELAYS below add up to 71 h 36 min, 11 attempts).
// Each delay is jittered by ±20 %, so that endpoints that failed together do not retry together.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Delay after attempt n (DELAYS[n - 1]); the attempt after the last delay is the final one. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [1 * MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 12 * HOUR, 12 * HOUR, 12 * HOUR, 18 * HOUR];

export const JITTER = 0.2;

export interface RetrySchedule {
  /** Delay after attempt n is delaysMs[n - 1]. */
  delaysMs: readonly number[];
  random?: () => number;
}

/** Attempts a delivery gets in all (the first plus one per delay). */
export const maxAttempts = (schedule: RetrySchedule): number => schedule.delaysMs.length + 1;

/** Milliseconds to wait after failed attempt `attempt` (1-based), or undefined when it was the last. */
export function retryDelayMs(schedule: RetrySchedule, attempt: number): number | undefined {
  const base = schedule.delaysMs[attempt - 1];
  if (base === undefined) return undefined;
  const random = schedule.random ?? Math.random;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}
