// `aegis worker`: runs jobs (and the scheduler) beside an API on the same PostgreSQL server. Start
// as many as the work needs; they share the queue. The embedded database belongs to the one
// `aegis serve` process, which runs a worker itself.
import pino from 'pino';
import { loadConfig } from '../api/config.ts';
import { createSecretBox, loadServerKey } from '../platform/crypto/secret-box.ts';
import { openCommandDatabase } from './open-database.ts';
import { migrateToLatest } from '../platform/db/migrate.ts';
import { loadJobsConfig } from '../platform/jobs/config.ts';
import { startJobs } from '../platform/jobs/index.ts';
import { createMetrics, jobObserver, startMetricsServer, startTracing, type Observability, type RunningMetricsServer } from '../platform/metrics/index.ts';
import { scheduledScanStarter } from '../api/scans/index.ts';
import { processJobHandlers, processPeriodicWork } from '../api/process-jobs.ts';
import { installEventSubscribers } from '../api/event-subscribers.ts';
import { ConfigRepoPoller } from '../api/config-repos/index.ts';
import { syncConfigDirectory } from '../reconciler/sync/config-repo-sync.ts';

/** `aegis worker`'s flags as cli/program.ts parses them (`scheduler` is false with --no-scheduler). */
export interface WorkerOptions {
  concurrency?: string | undefined;
  kinds?: string | undefined;
  scheduler?: boolean | undefined;
  dataDir?: string | undefined;
}

export async function workerCommand(values: WorkerOptions): Promise<number> {
  const config = loadConfig({ dataDir: values.dataDir });
  if (!config.databaseUrl) {
    process.stderr.write("aegis worker: set DATABASE_URL to the API's PostgreSQL server. On the embedded database, `aegis serve` runs the worker itself.\n");
    return 2;
  }
  const jobsConfig = loadJobsConfig(process.env, { concurrency: values.concurrency, kinds: values.kinds });
  if (values.scheduler === false) jobsConfig.scheduler = false;
  const log = pino({ level: config.logLevel, name: 'worker' });
  // The API's key: clone URLs with credentials are sealed with it (set AEGIS_SECRET_KEY on every host).
  const secretBox = createSecretBox(await loadServerKey(config.dataDir, config.secretKey));
  const database = await openCommandDatabase(config, 'worker');
  // The same observability as `aegis serve`: job runs, queue depth and age, scheduler lag, pool.
  const observability: Observability = {
    metrics: config.metricsPort !== undefined ? createMetrics({ db: database.db, pool: database.pool }) : undefined,
    tracing: await startTracing({ serviceName: 'aegis-worker' }),
  };
  let metricsServer: RunningMetricsServer | undefined;
  try {
    await migrateToLatest(database.db);
    installEventSubscribers();
    // The same kinds and schedule runner as `aegis serve` (api/server.ts). Config-repo syncs act
    // through the API, so they run here only when AEGIS_API_URL says where it is.
    const apiUrl = process.env.AEGIS_API_URL;
    const jobs = await startJobs({
      db: database.db,
      log,
      databaseUrl: config.databaseUrl,
      config: jobsConfig,
      role: 'worker',
      observe: jobObserver(observability),
      periodic: processPeriodicWork(config),
      handlers: processJobHandlers({ db: database.db, secretBox, config, publicUrl: () => config.publicUrl ?? apiUrl ?? `http://localhost:${config.port}`, configRepos: apiUrl ? { apiUrl, configSync: syncConfigDirectory } : undefined, certificateMetrics: observability.metrics?.certificates }),
      startScheduledScan: scheduledScanStarter({ allowLocalSources: config.allowLocalSources, allowPrivateTargets: config.allowPrivateTargets, secretBox, publicUrl: () => config.publicUrl ?? apiUrl ?? `http://localhost:${config.port}` }),
    });
    if (observability.metrics && config.metricsPort !== undefined) {
      metricsServer = await startMetricsServer({ host: config.metricsHost, port: config.metricsPort, token: config.metricsToken, metrics: observability.metrics, onError: (err) => log.error({ err }, 'metrics: scrape failed') });
    }
    const poller = jobs.scheduler ? new ConfigRepoPoller({ db: database.db, log }).start() : undefined;
    const worker = jobs.worker!;
    const unknown = (jobsConfig.kinds ?? []).filter((k) => !worker.kinds.includes(k));
    const lines = [
      `Aegis worker ${worker.id} on PostgreSQL server ${database.location}`,
      `  kinds      ${worker.kinds.length > 0 ? worker.kinds.join(', ') : '(none)'}; ${jobsConfig.concurrency} at once`,
      `  scheduler  ${jobs.scheduler ? 'on (scan schedules, config-repo polls)' : 'off'}`,
    ];
    if (metricsServer) lines.push(`  metrics    ${metricsServer.url}/metrics`);
    if (!apiUrl) lines.push('  note       config-repo syncs run elsewhere: set AEGIS_API_URL to run them here');
    if (unknown.length > 0) lines.push(`  warning    --kinds names kinds nothing registered: ${unknown.join(', ')}`);
    process.stdout.write(`${lines.join('\n')}\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await poller?.stop();
    await jobs.close();
    return 0;
  } finally {
    await metricsServer?.close();
    await observability.tracing?.close();
    await database.close();
  }
}
