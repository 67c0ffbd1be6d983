import { loadConfig } from '../api/config.ts';
import { startServer } from '../api/server.ts';
import { syncConfigDirectory } from '../reconciler/sync/config-repo-sync.ts';
import { DEFAULT_DRIFT_INTERVAL_MS, type ConfigWatcher } from '../reconciler/sync/watch.ts';
import { secondsFlag, untilSignal } from '../reconciler/cli/watch-command.ts';
import { watchConfigDir } from './serve-config-dir.ts';

/** `aegis serve`'s flags as cli/program.ts parses them. */
export interface ServeOptions {
  port?: string | undefined;
  shieldPort?: string | undefined;
  dataDir?: string | undefined;
  host?: string | undefined;
  asnDb?: string | undefined;
  configDir?: string | undefined;
  selfHeal?: boolean | undefined;
  driftInterval?: string | undefined;
}

export async function serveCommand(values: ServeOptions): Promise<number> {
  const configDir = values.configDir;
  const selfHeal = values.selfHeal === true;
  if (!configDir && (selfHeal || values.driftInterval !== undefined)) {
    process.stderr.write('aegis serve: --self-heal and --drift-interval go with --config-dir DIR\n');
    return 1;
  }
  const driftIntervalMs = secondsFlag('drift-interval', values.driftInterval, DEFAULT_DRIFT_INTERVAL_MS);
  const config = loadConfig({ port: values.port, shieldPort: values.shieldPort, dataDir: values.dataDir, host: values.host, asnDb: values.asnDb });
  const server = await startServer(config, { configSync: syncConfigDirectory });
  const lines = [
    `Aegis is running on the ${server.database.kind === 'embedded' ? `embedded database (${server.database.location})` : `PostgreSQL server ${server.database.location}`}`,
    `  API        ${server.url}/api/v1`,
    `  Reference  ${server.url}/docs`,
    `  OpenAPI    ${server.url}/api/v1/openapi.json`,
  ];
  if (server.gateway) lines.push(`  Shield     ${server.gateway.url} (routes by Host to each site's origin)`);
  if (server.bootstrap.kind === 'key-file-written') lines.push(`  API key    created; read it from ${server.bootstrap.path} (shown nowhere else)`);
  if (server.bootstrap.kind === 'env-key-revoked') lines.push('  warning    AEGIS_BOOTSTRAP_API_KEY names a revoked key; it stays revoked');
  let watcher: ConfigWatcher | undefined;
  if (configDir) {
    try {
      watcher = await watchConfigDir(server.url, config, { dir: configDir, selfHeal, driftIntervalMs });
    } catch (err) {
      await server.close();
      throw err;
    }
    const drift = driftIntervalMs > 0 ? `drift check every ${driftIntervalMs / 1000} s, ` : 'no drift checks, ';
    lines.push(`  Config     watching ${configDir} (${drift}self-heal ${selfHeal ? 'on' : 'off'})`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);

  await untilSignal();
  await watcher?.close();
  await server.close();
  return 0;
}
