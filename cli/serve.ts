import pino from 'pino';
import { loadConfig } from '../api/config.ts';
import { startGatewayCluster, type RunningCluster } from '../gateway/cluster/primary.ts';
import { startServer } from '../api/server.ts';
import { syncConfigDirectory } from '../reconciler/sync/config-repo-sync.ts';
import { DEFAULT_DRIFT_INTERVAL_MS, type ConfigWatcher } from '../reconciler/sync/watch.ts';
import { secondsFlag, untilSignal } from '../reconciler/cli/watch-command.ts';
import { configDirImpact, watchConfigDir } from './serve-config-dir.ts';
import { DataDirBusyError, holdDataDir, type HeldDataDir } from '../platform/control-socket.ts';
import { loadServerKey } from '../platform/crypto/secret-box.ts';
import { dumpEmbedded } from '../platform/db/backup.ts';
import { aegisVersion } from './version.ts';

/** `aegis serve`'s flags as cli/program.ts parses them. */
export interface ServeOptions {
  port?: string | undefined;
  shieldPort?: string | undefined;
  sandboxShieldPort?: string | undefined;
  shieldTlsPort?: string | undefined;
  dataDir?: string | undefined;
  host?: string | undefined;
  asnDb?: string | undefined;
  configDir?: string | undefined;
  selfHeal?: boolean | undefined;
  driftInterval?: string | undefined;
  shieldWorkers?: string | undefined;
}

export async function serveCommand(values: ServeOptions): Promise<number> {
  const configDir = values.configDir;
  const selfHeal = values.selfHeal === true;
  if (!configDir && (selfHeal || values.driftInterval !== undefined)) {
    process.stderr.write('aegis serve: --self-heal and --drift-interval go with --config-dir DIR\n');
    return 1;
  }
  const driftIntervalMs = secondsFlag('drift-interval', values.driftInterval, DEFAULT_DRIFT_INTERVAL_MS);
  if (configDir) {
    // Checked before the server starts: a mistyped AEGIS_CONFIG_DIR_… setting is said at once.
    try {
      configDirImpact();
    } catch (err) {
      process.stderr.write(`aegis serve: ${err instanceof Error ? err.message : String(err)}\n`);
      return 1;
    }
  }
  const gatewayFlags = { shieldPort: values.shieldPort, shieldTlsPort: values.shieldTlsPort, dataDir: values.dataDir, host: values.host, asnDb: values.asnDb };
  let config;
  try {
    config = loadConfig({ ...gatewayFlags, port: values.port, shieldWorkers: values.shieldWorkers, sandboxShieldPort: values.sandboxShieldPort });
  } catch (err) {
    // loadConfig names `aegis shield`'s flag; this command's is --shield-workers.
    if (err instanceof Error) err.message = err.message.replace(/^--workers\b/, '--shield-workers');
    throw err;
  }
  // --shield-workers N > 1: the gateway runs as a cluster of N processes beside this one (as
  // `aegis shield --workers N` would) instead of inside it. Each worker opens the database itself,
  // which the embedded database (one process) cannot allow.
  const shieldWorkers = config.shieldEnabled ? (config.shieldWorkers ?? 1) : 1;
  if (shieldWorkers > 1 && !config.databaseUrl) {
    process.stderr.write('aegis serve: --shield-workers above 1 needs PostgreSQL (DATABASE_URL): the embedded database belongs to one process. Use --shield-workers 1, or DATABASE_URL.\n');
    return 2;
  }
  // On the embedded database this process holds the data directory through its control socket
  // (platform/control-socket.ts) from before the database opens until after it closes: a second
  // server, `aegis backup` or `aegis restore` then never opens the same files, and `aegis backup`
  // asks this process for the backup instead.
  let held: HeldDataDir | undefined;
  if (!config.databaseUrl) {
    try {
      held = await holdDataDir(config.dataDir, 'serve', aegisVersion());
    } catch (err) {
      if (err instanceof DataDirBusyError) {
        process.stderr.write(`aegis serve: ${err.message}; the embedded database belongs to one process\n`);
        return 1;
      }
      throw err;
    }
    held.answerBackups({ refuse: 'the server is still starting; try again once it has printed its URLs' });
  }
  try {
    return await serveHolding(config, shieldWorkers, { configDir, selfHeal, driftIntervalMs }, held);
  } finally {
    await held?.release();
  }
}

async function serveHolding(
  config: ReturnType<typeof loadConfig>,
  shieldWorkers: number,
  { configDir, selfHeal, driftIntervalMs }: { configDir: string | undefined; selfHeal: boolean; driftIntervalMs: number },
  held: HeldDataDir | undefined,
): Promise<number> {
  const server = await startServer(shieldWorkers > 1 ? { ...config, shieldEnabled: false } : config, { configSync: syncConfigDirectory });
  let gatewayCluster: RunningCluster | undefined;
  if (shieldWorkers > 1) {
    try {
      // After startServer, which migrated; the API process keeps AEGIS_METRICS_PORT for its own metrics.
      gatewayCluster = await startGatewayCluster(config, { workers: shieldWorkers, log: pino({ level: config.logLevel }, config.logStream), serveMetrics: false });
    } catch (err) {
      await server.close();
      throw err;
    }
  }
  const lines = [
    `Aegis is running on the ${server.database.kind === 'embedded' ? `embedded database (${server.database.location})` : `PostgreSQL server ${server.database.location}`}`,
    `  Dashboard  ${server.url}/ (sign in with your e-mail; mail goes to ${server.mailDestination})`,
    `  API        ${server.url}/api/v1`,
    `  Reference  ${server.url}/docs`,
    `  OpenAPI    ${server.url}/api/v1/openapi.json`,
  ];
  if (server.firstOwner === 'link-issued') lines.push(`  Owner      open the one-time owner link above (also in ${server.mailDestination}) to own the default organisation`);
  if (server.gateway) lines.push(`  Shield     ${server.gateway.url} (routes by Host to each site's origin)`);
  if (server.gateway?.tlsUrl) lines.push(`  Shield TLS ${server.gateway.tlsUrl} (HTTPS and HTTP/2, by SNI, for sites with a certificate)`);
  if (gatewayCluster) lines.push(`  Shield     ${gatewayCluster.url} (routes by Host to each site's origin; ${shieldWorkers} worker processes)`);
  if (gatewayCluster?.tlsUrl) lines.push(`  Shield TLS ${gatewayCluster.tlsUrl} (HTTPS and HTTP/2, by SNI, for sites with a certificate)`);
  if (server.sandboxGateway) lines.push(`  Sandbox    ${server.sandboxGateway.url} (Shield for test-mode sites only)`);
  if (server.bootstrap.kind === 'key-file-written') lines.push(`  API key    created; read it from ${server.bootstrap.path} (shown nowhere else)`);
  if (server.bootstrap.kind === 'env-key-revoked') lines.push('  warning    AEGIS_BOOTSTRAP_API_KEY names a revoked key; it stays revoked');
  let watcher: ConfigWatcher | undefined;
  if (configDir) {
    try {
      watcher = await watchConfigDir(server.url, config, { dir: configDir, selfHeal, driftIntervalMs });
    } catch (err) {
      await gatewayCluster?.close();
      await server.close();
      throw err;
    }
    const drift = driftIntervalMs > 0 ? `drift check every ${driftIntervalMs / 1000} s, ` : 'no drift checks, ';
    const { window, maxNewBlocks } = configDirImpact();
    lines.push(`  Config     watching ${configDir} (${drift}self-heal ${selfHeal ? 'on' : 'off'})`);
    const gate = maxNewBlocks !== undefined ? `; refused past ${maxNewBlocks} newly blocked requests on a site` : '';
    lines.push(`  Impact     ${window ? `each plan previewed against the ${window.label} of recorded traffic${gate}` : 'no preview (AEGIS_CONFIG_DIR_IMPACT_WINDOW=off)'}`);
  }
  const embedded = server.database.embedded;
  if (held && embedded) {
    const key = await loadServerKey(config.dataDir, config.secretKey);
    held.answerBackups(() => dumpEmbedded(server.database.db, embedded, { key, aegisVersion: aegisVersion() }));
  }
  process.stdout.write(`${lines.join('\n')}\n`);

  await untilSignal();
  held?.answerBackups({ refuse: 'the server is stopping' });
  await watcher?.close();
  await gatewayCluster?.close();
  await server.close();
  return 0;
}
