// `aegis serve --config-dir DIR`: the server keeps a config directory applied, through its own API
// exactly as `aegis watch` would from outside (same guard rails, same ownership), logging each
// event with pino.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import type { ServerConfig } from '../api/config.ts';
import { connect } from '../reconciler/sync/session.ts';
import { resolveSource } from '../reconciler/cli/source.ts';
import { describeEvent, type WatchEvent } from '../reconciler/sync/watch-events.ts';
import { watchConfig, type ConfigWatcher } from '../reconciler/sync/watch.ts';

export interface ConfigDirOptions {
  dir: string;
  selfHeal: boolean;
  driftIntervalMs: number;
}

/** AEGIS_API_KEY, else the bootstrap key: AEGIS_BOOTSTRAP_API_KEY or the key file the first start wrote. */
export async function watcherApiKey(config: Pick<ServerConfig, 'bootstrapApiKey' | 'dataDir'>, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  if (env.AEGIS_API_KEY) return env.AEGIS_API_KEY;
  if (config.bootstrapApiKey) return config.bootstrapApiKey;
  try {
    return (await readFile(join(config.dataDir, 'bootstrap-key'), 'utf8')).trim() || undefined;
  } catch {
    return undefined;
  }
}

const LEVEL: Record<WatchEvent['kind'], 'info' | 'warn' | 'error'> = {
  watching: 'info',
  applied: 'info',
  unchanged: 'info',
  healed: 'info',
  'in-sync': 'info',
  invalid: 'warn',
  refused: 'warn',
  drift: 'warn',
  failed: 'error',
  error: 'error',
};

function logEvent(log: Logger, event: WatchEvent): void {
  const { kind, at: _at, ...fields } = event;
  log[LEVEL[kind]]({ event: kind, ...fields }, describeEvent(event).headline);
}

const ANY_OR_LOOPBACK = /^(0\.0\.0\.0|::|::1|localhost|127\.\d+\.\d+\.\d+)$/;

/** The server's URL says localhost, which a server bound to one other address does not answer on. */
export function selfUrl(url: string, host: string): string {
  if (ANY_OR_LOOPBACK.test(host)) return url;
  const own = new URL(url);
  own.hostname = host.includes(':') ? `[${host}]` : host;
  return own.origin;
}

export async function watchConfigDir(url: string, config: ServerConfig, options: ConfigDirOptions): Promise<ConfigWatcher> {
  const apiKey = await watcherApiKey(config);
  if (!apiKey) {
    throw new Error(
      `--config-dir needs an API key to apply with: set AEGIS_API_KEY (scope admin) or AEGIS_BOOTSTRAP_API_KEY; ` +
        `${join(config.dataDir, 'bootstrap-key')} is only written on the first start of an empty database`,
    );
  }
  const { api } = connect({ AEGIS_API_URL: selfUrl(url, config.host), AEGIS_API_KEY: apiKey });
  const log = pino({ level: config.logLevel, name: 'gitops' }, config.logStream);
  return watchConfig({
    api,
    path: options.dir,
    source: await resolveSource(undefined, options.dir),
    prune: true,
    selfHeal: options.selfHeal,
    driftIntervalMs: options.driftIntervalMs,
    onEvent: (event) => logEvent(log, event),
  });
}
