// A gateway-only process (`aegis shield`, or one worker of its cluster): its own pool on the shared
// PostgreSQL server, its own decision recorder and live-stream publisher, no API routes.
import pino from 'pino';
import type { LocalGatewaySettings } from './settings.ts';
import { loadServerKey } from '../platform/crypto/secret-box.ts';
import { openDatabase } from '../platform/db/database.ts';
import { migrateToLatest } from '../platform/db/migrate.ts';
import { createMetrics, type ServerMetrics } from '../platform/metrics/index.ts';
import type { MetricsOptions } from '../platform/metrics/metrics.ts';
import { createShieldEvents } from './events/index.ts';
import type { RunningGateway } from './gateway.ts';
import { launchGateway } from './launch.ts';
import type { RateState } from './state/rate-state.ts';

export interface StandaloneOptions {
  /** Rate-limit state other than Redis or memory: a cluster worker's (cluster/ipc-rate-state.ts). */
  rateState?: RateState | undefined;
  /** Migrate first (default true); a cluster's workers leave it to the primary, which already did. */
  migrate?: boolean | undefined;
  /** Count decisions and upstream latency into a registry of this process (returned as `metrics`). */
  collectMetrics?: boolean | undefined;
  /** PostgreSQL connections of this process (default 10); a cluster divides them among its workers. */
  poolSize?: number | undefined;
}

export interface StandaloneGateway extends RunningGateway {
  /** This process's metrics, when `collectMetrics`. */
  metrics: ServerMetrics | undefined;
}

export async function startStandaloneGateway(config: LocalGatewaySettings, options: StandaloneOptions = {}): Promise<StandaloneGateway> {
  const log = pino({ level: config.logLevel }, config.logStream);
  // Challenge clearances must verify on every node: with several nodes, give them one AEGIS_SECRET_KEY.
  const serverKey = await loadServerKey(config.dataDir, config.secretKey);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: options.poolSize });
  try {
    if (options.migrate !== false) await migrateToLatest(database.db);
    const metrics = options.collectMetrics ? gatewayMetrics(database) : undefined;
    const events = createShieldEvents({ db: database.db, redisUrl: config.redisUrl, databaseUrl: config.databaseUrl, log, allowSampleRate: config.shieldAllowSampleRate, flushMs: config.shieldFlushMs, alertWindowMs: config.shieldAlertWindowMs, traffic: config.shieldTrafficRecord ? { serverKey, valueSampleRate: config.shieldTrafficValueSampleRate } : undefined });
    const gateway = await launchGateway(config, { db: database.db, log, recorder: events.recorder, traffic: events.traffic, serverKey, metrics: metrics?.gateway, rateState: options.rateState });
    return {
      ...gateway,
      metrics,
      async close() {
        await gateway.close();
        await events.close();
        await database.close();
      },
    };
  } catch (err) {
    await options.rateState?.close();
    await database.close();
    throw err;
  }
}

/**
 * The server metrics minus the API's and the job queue's series: a gateway process serves no API
 * requests and runs no jobs, and the queue gauges (read from the database on every scrape) would
 * be counted once per worker when a cluster sums its workers' registries.
 */
function gatewayMetrics(database: MetricsOptions): ServerMetrics {
  const metrics = createMetrics({ db: database.db, pool: database.pool });
  for (const metric of metrics.registry.getMetricsAsArray()) {
    const { name } = metric as unknown as { name: string };
    if (/^aegis_(http_|jobs?_|scheduler_)/.test(name)) metrics.registry.removeSingleMetric(name);
  }
  return metrics;
}
