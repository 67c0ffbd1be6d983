// The live bus carries stored decisions from the process that recorded them to every process that
// serves live streams. Three transports, chosen by what the deployment has:
//   REDIS_URL     → Redis pub/sub (gateway/events/redis-live-bus.ts)
//   DATABASE_URL  → PostgreSQL LISTEN/NOTIFY (gateway/events/pg-live-bus.ts)
//   neither       → in process: the embedded database is single-process, so the gateway runs in
//                   the API process and nothing has to cross a process boundary.
// Delivery is best effort (a subscriber that is disconnected misses what is published meanwhile);
// a remote bus delivers to local subscribers through the transport only, so exactly once.
import type { BaseLogger } from 'pino';
import type { DecisionEvent } from '../decision.ts';
import { LiveListeners, type LiveListener } from './live-listeners.ts';
import { PgLiveBus } from './pg-live-bus.ts';
import { RedisLiveBus } from './redis-live-bus.ts';

export type { LiveListener };

export interface LiveBus {
  /** Never blocks and never throws: a failed publish is logged and dropped. */
  publish(events: DecisionEvent[]): void;
  /** Returns the function that unsubscribes. */
  subscribe(listener: LiveListener): () => void;
  close(): Promise<void>;
}

export interface LiveBusOptions {
  redisUrl?: string | undefined;
  databaseUrl?: string | undefined;
  log?: BaseLogger | undefined;
}

export function createLiveBus(options: LiveBusOptions): LiveBus {
  if (options.redisUrl) return new RedisLiveBus(options.redisUrl, options.log);
  if (options.databaseUrl) return new PgLiveBus(options.databaseUrl, options.log);
  return new InProcessLiveBus(options.log);
}

export class InProcessLiveBus implements LiveBus {
  private readonly listeners: LiveListeners;

  constructor(log?: BaseLogger) {
    this.listeners = new LiveListeners(log);
  }

  publish(events: DecisionEvent[]): void {
    this.listeners.deliver(events);
  }

  subscribe(listener: LiveListener): () => void {
    return this.listeners.add(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
