// Starts the API on a database: open, migrate, bootstrap the first key, listen. `aegis serve`
// and the tests both start servers through here, so the tests exercise what users run.
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import pino from 'pino';
import { buildApp } from './app.ts';
import { Authenticator } from './accounts/keys/authenticator.ts';
import { AuthChanges } from './accounts/auth/auth-changes.ts';
import { createMailer } from '../platform/mail/mailer.ts';
import { SessionAuthenticator } from './accounts/sessions/session-authenticator.ts';
import { SessionTokens } from './accounts/sessions/session-token.ts';
import type { ServerConfig } from './config.ts';
import { openDatabase, type DatabaseHandle } from '../platform/db/database.ts';
import { migrateToLatest } from '../platform/db/migrate.ts';
import { createSecretBox, loadServerKey } from '../platform/crypto/secret-box.ts';
import { startHousekeeping } from './housekeeping.ts';
import { txtLookup } from '../platform/net/txt-records.ts';
import { DiscoveryScheduler } from './attack-surface/index.ts';
import { bootstrapKey, type BootstrapResult } from './accounts/keys/bootstrap.ts';
import { announceOwnerLink, ownerLinkUrl, settleFirstOwner, type FirstRun } from './accounts/first-owner/first-run.ts';
import { createShieldEvents, type ShieldEvents } from '../gateway/events/index.ts';
import type { RunningGateway } from '../gateway/gateway.ts';
import { launchGateway } from '../gateway/launch.ts';
import { startJobs } from '../platform/jobs/index.ts';
import { scheduledScanStarter } from './scans/index.ts';
import { processJobHandlers, processPeriodicWork } from './process-jobs.ts';
import { installEventSubscribers } from './event-subscribers.ts';
import { ConfigRepoPoller, type ConfigSync } from './config-repos/index.ts';
import { createMetrics, jobObserver, startMetricsServer, startTracing, type Observability, type RunningMetricsServer } from '../platform/metrics/index.ts';

export interface RunningServer {
  app: FastifyInstance;
  database: DatabaseHandle;
  /** Base URL of the API, e.g. http://localhost:3000 */
  url: string;
  bootstrap: BootstrapResult;
  /** How `default` stands for its first owner at this start (a link's token is only ever printed). */
  firstOwner: FirstRun['kind'];
  /** Decision recording, the live bus and platform events (present whether or not the gateway runs). */
  shieldEvents: ShieldEvents;
  /** The Shield gateway, when `shieldEnabled`. */
  gateway: RunningGateway | undefined;
  /** The sandbox's gateway (test-mode sites), when `sandboxShieldPort` is set. */
  sandboxGateway: RunningGateway | undefined;
  /** The Prometheus endpoint, when `metricsPort` is set; and the metrics and traces of this server. */
  metricsServer: RunningMetricsServer | undefined;
  observability: Observability;
  /** Where mail (sign-in links, invites) goes: an SMTP server, or the log and the outbox file. */
  mailDestination: string;
  close(): Promise<void>;
}

/** What the starting process plugs in from outside the API. */
export interface ServerServices {
  /**
   * Reconciles a config repository's checkout (the reconciler's syncConfigDirectory). Without it
   * this server runs no config-repo syncs; a worker given one does.
   */
  configSync?: ConfigSync;
}

export async function startServer(config: ServerConfig, services: ServerServices = {}): Promise<RunningServer> {
  // Before the database opens: a malformed AEGIS_SECRET_KEY stops start-up with nothing to undo.
  const serverKey = await loadServerKey(config.dataDir, config.secretKey);
  const secretBox = createSecretBox(serverKey);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true }) : undefined;
  let shieldEvents: ShieldEvents | undefined;
  // Metrics only when they are served; traces only when an OTLP endpoint is configured (lazy import).
  const observability: Observability = {
    metrics: config.metricsPort !== undefined ? createMetrics({ db: database.db, pool: database.pool }) : undefined,
    tracing: await startTracing({ serviceName: 'aegis' }),
  };
  let metricsServer: RunningMetricsServer | undefined;
  let authChanges: AuthChanges | undefined;
  try {
    await migrateToLatest(database.db);
    installEventSubscribers();
    const bootstrap = await bootstrapKey(database.db, { envKey: config.bootstrapApiKey, dataDir: config.dataDir });
    const authLog = pino({ level: config.logLevel, name: 'auth' }, config.logStream);
    authChanges = new AuthChanges({ databaseUrl: config.databaseUrl, log: authLog });
    // Before listening: AEGIS_OWNER_EMAIL is the owner from the first request on.
    const firstRun = await settleFirstOwner(database.db, authChanges, { ownerEmail: config.ownerEmail });
    if (firstRun.kind === 'owner-set') authLog.info({ email: firstRun.email }, 'first run: AEGIS_OWNER_EMAIL is now the owner of organisation default');
    const authenticator = new Authenticator(database.db, { cacheTtlMs: config.keyCacheTtlMs, usageFlushMs: config.keyUsageFlushMs, changes: authChanges });
    const sessions = new SessionAuthenticator(database.db, new SessionTokens(serverKey), authChanges, { usageFlushMs: config.keyUsageFlushMs });
    const mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, dataDir: config.dataDir, log: authLog });
    // Known once the server listens, unless configured.
    let publicUrl = config.publicUrl;
    // The data plane logs apart from the API's request log; its events exist before the app,
    // whose live-stream routes subscribe to the bus.
    const shieldLog = pino({ level: config.logLevel, name: 'shield' }, config.logStream);
    shieldEvents = createShieldEvents({
      db: database.db,
      log: shieldLog,
      redisUrl: config.redisUrl,
      databaseUrl: config.databaseUrl,
      allowSampleRate: config.shieldAllowSampleRate,
      flushMs: config.shieldFlushMs,
      alertWindowMs: config.shieldAlertWindowMs,
      traffic: config.shieldTrafficRecord ? { serverKey, valueSampleRate: config.shieldTrafficValueSampleRate } : undefined,
    });
    const events = shieldEvents;
    const domainProofs = txtLookup(config.verificationDnsServers);
    const app = await buildApp({
      db: database.db,
      authenticator,
      sessions,
      authChanges,
      mailer,
      publicUrl: () => publicUrl ?? `http://localhost:${config.port}`,
      redis,
      secretBox,
      config,
      shieldEvents: events,
      observability,
      txt: domainProofs,
    });
    const stopHousekeeping = startHousekeeping(database.db, app.log, {
      intervalMs: config.sweepIntervalMs,
      shieldEventRetentionDays: config.shieldEventRetentionDays,
      trafficRetention: { days: config.shieldTrafficRetentionDays, valueHours: config.shieldTrafficValueHours },
      txt: domainProofs,
      domainRecheckIntervalMs: config.domainRecheckIntervalMs,
    });
    await app.listen({ host: config.host, port: config.port });
    let gateway: RunningGateway | undefined;
    let sandboxGateway: RunningGateway | undefined;
    try {
      const gatewayDeps = { db: database.db, log: shieldLog, recorder: events.recorder, traffic: events.traffic, serverKey, metrics: observability.metrics?.gateway };
      if (config.shieldEnabled) gateway = await launchGateway(config, gatewayDeps);
      // In this process even when the live gateway runs as a cluster: the sandbox carries test traffic only.
      if (config.sandboxShieldPort !== undefined) sandboxGateway = await launchGateway(config, gatewayDeps, 'test');
      if (observability.metrics && config.metricsPort !== undefined) {
        metricsServer = await startMetricsServer({ host: config.metricsHost, port: config.metricsPort, token: config.metricsToken, metrics: observability.metrics, onError: (err) => app.log.error({ err }, 'metrics: scrape failed') });
      }
    } catch (err) {
      stopHousekeeping();
      await gateway?.close();
      await sandboxGateway?.close();
      await app.close();
      throw err;
    }
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = `http://localhost:${port}`;
    publicUrl ??= url;
    // Printed once the public URL is known (the port may have been 0), with it, as magic links are.
    if (firstRun.kind === 'link-issued') {
      // The outbox logs the link before it writes the file: a full disk costs the file, not the link.
      await announceOwnerLink(ownerLinkUrl(publicUrl, firstRun.token), { log: authLog, outbox: config.smtpUrl ? undefined : mailer }).catch((err: unknown) => authLog.error({ err }, 'first run: the owner link could not be written to the outbox'));
    }
    // Last to start, first to stop: a worker and the scheduler in process (AEGIS_WORKER=false: none).
    // Config-repo syncs act through this server's own API.
    const jobs = await startJobs({
      db: database.db,
      log: app.log,
      databaseUrl: config.databaseUrl,
      handlers: processJobHandlers({ db: database.db, secretBox, config, publicUrl: () => publicUrl ?? url, configRepos: services.configSync ? { apiUrl: url, configSync: services.configSync } : undefined, certificateMetrics: observability.metrics?.certificates }),
      observe: jobObserver(observability),
      periodic: processPeriodicWork(config),
      startScheduledScan: scheduledScanStarter({ allowLocalSources: config.allowLocalSources, allowPrivateTargets: config.allowPrivateTargets, secretBox, publicUrl: () => publicUrl ?? url }),
    });
    const poller = jobs.scheduler ? new ConfigRepoPoller({ db: database.db, log: app.log }).start() : undefined;
    const discoveries = jobs.scheduler ? new DiscoveryScheduler({ db: database.db, log: app.log }).start() : undefined;
    return {
      app,
      database,
      url,
      bootstrap,
      firstOwner: firstRun.kind,
      shieldEvents: events,
      gateway,
      sandboxGateway,
      metricsServer,
      observability,
      mailDestination: mailer.destination,
      async close() {
        await poller?.stop();
        await discoveries?.stop();
        await jobs.close();
        stopHousekeeping();
        await metricsServer?.close();
        await gateway?.close();
        await sandboxGateway?.close();
        await events.close();
        await app.close();
        await authenticator.close();
        await sessions.close();
        await authChanges?.close();
        mailer.close();
        await database.close();
        await redis?.quit();
        await observability.tracing?.close();
      },
    };
  } catch (err) {
    await metricsServer?.close();
    await observability.tracing?.close().catch(() => undefined);
    await shieldEvents?.close();
    await authChanges?.close();
    await database.close();
    redis?.disconnect();
    throw err;
  }
}
