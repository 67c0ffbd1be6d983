// What every live-bus transport shares: its local subscribers, parsing what another process sent,
// and quiet logging of a transport that keeps failing.
import type { BaseLogger } from 'pino';
import type { DecisionEvent } from '../decision.ts';

export type LiveListener = (event: DecisionEvent) => void;

/** The subscribers of one bus; a listener that throws is logged and does not stop the others. */
export class LiveListeners {
  private readonly listeners = new Set<LiveListener>();

  constructor(private readonly log?: BaseLogger) {}

  get size(): number {
    return this.listeners.size;
  }

  add(listener: LiveListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  deliver(events: readonly DecisionEvent[]): void {
    for (const event of events) {
      for (const listener of this.listeners) {
        try {
          listener(event);
        } catch (err) {
          this.log?.error({ err }, 'live bus listener failed');
        }
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}

/** The minimum a message from another process must have before subscribers see it. */
function isDecision(value: unknown): value is DecisionEvent {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.id === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(v.id) && typeof v.site_id === 'string' && typeof v.action === 'string';
}

/** A batch as another process published it (a JSON array); anything malformed is left out. */
export function parseBatch(text: string): DecisionEvent[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  return Array.isArray(parsed) ? parsed.filter(isDecision) : [];
}

/** Logs a recurring failure at most once a minute, not once per attempt. */
export function throttledLog(log: BaseLogger | undefined, intervalMs = 60_000): (err: unknown, message: string) => void {
  let last = 0;
  return (err, message) => {
    const now = Date.now();
    if (now - last < intervalMs) return;
    last = now;
    log?.warn({ err }, message);
  };
}
