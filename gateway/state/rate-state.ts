// Where rate-limit counters and escalation denies live. In process by default; in Redis when
// several gateway processes must enforce one budget together. Both implement the same contract.
//
// Counting is a sliding-window counter (the approach Cloudflare describes): a count for the
// current fixed window and the previous one, the previous weighted by how much of it still
// overlaps the sliding window. Two numbers per key, and no 2× burst at window boundaries.

export interface WindowCounts {
  current: number;
  previous: number;
}

/** A temporary deny from rate-limit escalation: until when, and which rule imposed it. */
export interface StandingDeny {
  until: number;
  ruleId: string;
}

export interface RateState {
  /** Counts one request for `key` and returns the counts of its current and previous window. */
  hit(key: string, windowMs: number, now: number): WindowCounts | Promise<WindowCounts>;
  /** The standing deny among `keys` that lasts longest, or null when none is denied. */
  deniedUntil(keys: readonly string[], now: number): StandingDeny | null | Promise<StandingDeny | null>;
  /** Denies `key` until `until` (epoch ms), on behalf of rule `ruleId`. */
  deny(key: string, deny: StandingDeny): void | Promise<void>;
  close(): Promise<void>;
}

/** The sliding-window estimate of requests in the last `windowMs`, this request included. */
export function slidingCount(counts: WindowCounts, windowMs: number, now: number): number {
  const elapsed = (now % windowMs) / windowMs;
  return counts.previous * (1 - elapsed) + counts.current;
}

/** Index of the fixed window `now` falls in; counters are keyed by it. */
export const windowIndex = (windowMs: number, now: number): number => Math.floor(now / windowMs);
