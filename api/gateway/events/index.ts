// The decision pipeline's output side, assembled once per process: the recorder that stores
// decisions, the live bus that carries them to SSE subscribers, and the in-process platform events.
import type { BaseLogger } from 'pino';
import type { Db } from '../../db/database.ts';
import { InternalEvents } from '../../events/internal-events.ts';
import { createLiveBus, type LiveBus } from './live-bus.ts';
import { DecisionRecorder } from './recorder.ts';

export interface ShieldEventsOptions {
  db: Db;
  log: BaseLogger;
  redisUrl?: string | undefined;
  databaseUrl?: string | undefined;
  allowSampleRate?: number | undefined;
  flushMs?: number | undefined;
}

export interface ShieldEvents {
  recorder: DecisionRecorder;
  bus: LiveBus;
  internal: InternalEvents;
  /** Writes what is queued, then closes the bus. */
  close(): Promise<void>;
}

export function createShieldEvents(options: ShieldEventsOptions): ShieldEvents {
  const bus = createLiveBus({ redisUrl: options.redisUrl, databaseUrl: options.databaseUrl, log: options.log });
  const internal = new InternalEvents(options.log);
  const recorder = new DecisionRecorder({ db: options.db, bus, internal, log: options.log, allowSampleRate: options.allowSampleRate, flushMs: options.flushMs });
  return {
    recorder,
    bus,
    internal,
    async close() {
      await recorder.close();
      await bus.close();
    },
  };
}
