// `aegis shield`: the Shield gateway alone, for deployments that run several gateway nodes beside
// the API. It shares the API's PostgreSQL server (and Redis, for one rate-limit budget across
// nodes); the embedded database belongs to the one `aegis serve` process, which runs a gateway itself.
//
// `--workers N` (default: one per core) runs N gateway processes on one port (node:cluster, see
// gateway/cluster/primary.ts); `--workers 1` is a single process, as before.
import { availableParallelism } from 'node:os';
import pino from 'pino';
import { loadConfig, type ConfigFlags } from '../api/config.ts';
import { startStandaloneGateway } from '../gateway/standalone.ts';
import { startMetricsServer } from '../platform/metrics/index.ts';
import { openDatabase } from '../platform/db/database.ts';
import { migrateToLatest } from '../platform/db/migrate.ts';

export interface ShieldOptions {
  shieldPort?: string | undefined;
  tlsPort?: string | undefined;
  dataDir?: string | undefined;
  host?: string | undefined;
  asnDb?: string | undefined;
  workers?: string | undefined;
}

const untilStopped = () =>
  new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });

export async function shieldCommand(values: ShieldOptions): Promise<number> {
  const flags: ConfigFlags = { shieldPort: values.shieldPort, shieldTlsPort: values.tlsPort, dataDir: values.dataDir, host: values.host, asnDb: values.asnDb, shieldWorkers: values.workers };
  let config;
  try {
    config = loadConfig(flags);
  } catch (err) {
    // loadConfig names `aegis serve`'s flag; this command's is --tls-port.
    if (err instanceof Error) err.message = err.message.replace(/^--shield-tls-port\b/, '--tls-port');
    throw err;
  }
  if (!config.databaseUrl) {
    process.stderr.write('aegis shield: set DATABASE_URL to the API\'s PostgreSQL server. On the embedded database, `aegis serve` runs the gateway itself.\n');
    return 2;
  }
  const workers = config.shieldWorkers ?? availableParallelism();
  if (workers === 1) {
    const gateway = await startStandaloneGateway(config, { collectMetrics: config.metricsPort !== undefined });
    const metricsServer = gateway.metrics && config.metricsPort !== undefined ? await startMetricsServer({ host: config.metricsHost, port: config.metricsPort, token: config.metricsToken, metrics: gateway.metrics }) : undefined;
    process.stdout.write(`Aegis Shield gateway listening on ${gateway.url}${gateway.tlsUrl ? ` and ${gateway.tlsUrl} (TLS)` : ''}\n`);
    await untilStopped();
    await metricsServer?.close();
    await gateway.close();
    return 0;
  }
  // Migrate once here, before any worker starts: the workers then only read.
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
  try {
    await migrateToLatest(database.db);
  } finally {
    await database.close();
  }
  const { startGatewayCluster } = await import('../gateway/cluster/primary.ts');
  const log = pino({ level: config.logLevel }, config.logStream);
  let started = false;
  const cluster = await startGatewayCluster(config, {
    workers,
    log,
    onWorkerReady: ({ slot, pid }) => {
      if (started) process.stdout.write(`Shield worker ${slot} restarted (pid ${pid})\n`);
    },
  });
  started = true;
  const list = cluster.workers().map((w) => `${w.slot}:${w.pid}`).join(' ');
  process.stdout.write(`Aegis Shield gateway listening on ${cluster.url}${cluster.tlsUrl ? ` and ${cluster.tlsUrl} (TLS)` : ''} (${workers} workers, pids ${list}; rate limits ${config.redisUrl ? 'in Redis' : 'held by this process'})\n`);
  if (cluster.metricsServer) process.stdout.write(`  metrics ${cluster.metricsServer.url}/metrics (all workers)\n`);
  await untilStopped();
  await cluster.close();
  return 0;
}
