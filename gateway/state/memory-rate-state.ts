// Rate-limit state in this process's memory: one gateway process, or tests. A periodic sweep drops
// counters and denies that can no longer matter, so memory follows the active clients, not history.
import { windowIndex, type RateState, type StandingDeny, type WindowCounts } from './rate-state.ts';

interface Counter {
  index: number;
  current: number;
  previous: number;
  windowMs: number;
}

export class MemoryRateState implements RateState {
  readonly #counters = new Map<string, Counter>();
  readonly #denies = new Map<string, StandingDeny>();
  readonly #timer: NodeJS.Timeout;

  constructor(sweepMs = 10_000) {
    this.#timer = setInterval(() => this.#sweep(Date.now()), sweepMs);
    this.#timer.unref();
  }

  hit(key: string, windowMs: number, now: number): WindowCounts {
    const index = windowIndex(windowMs, now);
    let counter = this.#counters.get(key);
    if (!counter || counter.windowMs !== windowMs) {
      counter = { index, current: 0, previous: 0, windowMs };
      this.#counters.set(key, counter);
    } else if (counter.index !== index) {
      counter.previous = counter.index === index - 1 ? counter.current : 0;
      counter.current = 0;
      counter.index = index;
    }
    counter.current++;
    return { current: counter.current, previous: counter.previous };
  }

  deniedUntil(keys: readonly string[], now: number): StandingDeny | null {
    let longest: StandingDeny | null = null;
    for (const key of keys) {
      const deny = this.#denies.get(key);
      if (deny && deny.until > now && (!longest || deny.until > longest.until)) longest = deny;
    }
    return longest;
  }

  deny(key: string, deny: StandingDeny): void {
    const existing = this.#denies.get(key);
    if (!existing || deny.until > existing.until) this.#denies.set(key, deny);
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
  }

  #sweep(now: number): void {
    for (const [key, counter] of this.#counters) {
      if (windowIndex(counter.windowMs, now) > counter.index + 1) this.#counters.delete(key);
    }
    for (const [key, deny] of this.#denies) if (deny.until <= now) this.#denies.delete(key);
  }
}
