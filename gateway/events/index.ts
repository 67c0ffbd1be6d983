// The decision pipeline's output side, assembled once per process: the recorder that stores
// decisions (and counts blocks and challenges into alert windows), and the live bus that carries
// them to SSE subscribers, and the traffic record impact previews replay (traffic/).
import type { BaseLogger } from 'pino';
import type { Db } from '../../platform/db/database.ts';
import { createLiveBus, type LiveBus } from './live-bus.ts';
import { DecisionRecorder } from './recorder.ts';
import { TrafficWriter } from '../traffic/traffic-writer.ts';

export interface ShieldEventsOptions {
  db: Db;
  log: BaseLogger;
  redisUrl?: string | undefined;
  databaseUrl?: string | undefined;
  allowSampleRate?: number | undefined;
  flushMs?: number | undefined;
  /** shield.block / shield.challenge window (config `shieldAlertWindowMs`). */
  alertWindowMs?: number | undefined;
  /** The traffic record (docs/impact-preview.md): on when given, sealing values with `serverKey`. */
  traffic?: { serverKey: Buffer; valueSampleRate: number } | undefined;
}

export interface ShieldEvents {
  recorder: DecisionRecorder;
  bus: LiveBus;
  traffic: TrafficWriter | undefined;
  /** Writes what is queued, then closes the bus. */
  close(): Promise<void>;
}

export function createShieldEvents(options: ShieldEventsOptions): ShieldEvents {
  const bus = createLiveBus({ redisUrl: options.redisUrl, databaseUrl: options.databaseUrl, log: options.log });
  const recorder = new DecisionRecorder({ db: options.db, bus, log: options.log, allowSampleRate: options.allowSampleRate, flushMs: options.flushMs, alertWindowMs: options.alertWindowMs });
  const traffic = options.traffic ? new TrafficWriter({ db: options.db, log: options.log, serverKey: options.traffic.serverKey, sampleRate: options.traffic.valueSampleRate }) : undefined;
  return {
    recorder,
    bus,
    traffic,
    async close() {
      await recorder.close();
      await traffic?.close();
      await bus.close();
    },
  };
}
