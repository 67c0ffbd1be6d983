// What a gateway cluster's primary and its workers say to each other over the IPC channel, besides
// the rate-limit requests of ./ipc-rate-state.ts. Every message carries an `aegis` tag, so other
// users of the channel (node:cluster's own internal messages) pass by untouched.
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { GatewaySettings } from '../settings.ts';

/** Handed to a worker in its environment (WORKER_ENV) when it is forked. */
export interface WorkerSetup {
  /** The gateway's settings, as the primary loaded them: every worker runs with the same. */
  settings: GatewaySettings;
  /** 1-based slot; a restarted worker keeps its predecessor's. */
  slot: number;
  /** Rate limits through the primary (no Redis configured). */
  ipcRateState: boolean;
  collectMetrics: boolean;
  poolSize: number;
}

export const WORKER_ENV = 'AEGIS_SHIELD_WORKER_SETUP';

export type WorkerMetrics = MetricObjectWithValues<MetricValue<string>>[];

export type WorkerMessage = { aegis: 'ready'; port: number; tlsPort?: number | undefined } | { aegis: 'metrics'; id: number; metrics: WorkerMetrics } | { aegis: 'metrics'; id: number; error: string };

export type PrimaryMessage = { aegis: 'shutdown' } | { aegis: 'metrics-request'; id: number };

const tagged = (message: unknown): message is { aegis: string } => typeof message === 'object' && message !== null && typeof (message as { aegis?: unknown }).aegis === 'string';

export const isWorkerMessage = (message: unknown): message is WorkerMessage => tagged(message) && (message.aegis === 'ready' || message.aegis === 'metrics');

export const isPrimaryMessage = (message: unknown): message is PrimaryMessage => tagged(message) && (message.aegis === 'shutdown' || message.aegis === 'metrics-request');
