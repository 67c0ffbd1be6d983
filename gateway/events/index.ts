// The decision pipeline's output side, assembled once per process: the recorder that stores
// decisions (and counts blocks and challenges into alert windows), and the live bus that carries
// them to SSE subscribers.
import type { BaseLogger } from 'pino';
import type { Db } from '../../platform/db/database.ts';
import { createLiveBus, type LiveBus } from './live-bus.ts';
import { DecisionRecorder } from './recorder.ts';

export interface ShieldEventsOptions {
  db: Db;
  log: BaseLogger;
  redisUrl?: string | undefined;
  databaseUrl?: string | undefined;
  allowSampleRate?: number | undefined;
  flushMs?: number | undefined;
  /** shield.block / shield.challenge window (config `shieldAlertWindowMs`). */
  alertWindowMs?: number | undefined;
}

export interface ShieldEvents {
  recorder: DecisionRecorder;
  bus: LiveBus;
  /** Writes what is queued, then closes the bus. */
  close(): Promise<void>;
}

export function createShieldEvents(options: ShieldEventsOptions): ShieldEvents {
  const bus = createLiveBus({ redisUrl: options.redisUrl, databaseUrl: options.databaseUrl, log: options.log });
  const recorder = new DecisionRecorder({ db: options.db, bus, log: options.log, allowSampleRate: options.allowSampleRate, flushMs: options.flushMs, alertWindowMs: options.alertWindowMs });
  return {
    recorder,
    bus,
    async close() {
      await recorder.close();
      await bus.close();
    },
  };
}
