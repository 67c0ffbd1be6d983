// `aegis serve --config-dir DIR`: the server keeps a config directory applied, through its own API
// exactly as `aegis watch` would from outside (same guard rails, same ownership, the impact preview
// of each plan: AEGIS_CONFIG_DIR_IMPACT_WINDOW, default 24h, and a gate with
// AEGIS_CONFIG_DIR_MAX_NEW_BLOCKS), logging each event with pino.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import type { ServerConfig } from '../api/config.ts';
import { connect } from '../reconciler/sync/session.ts';
import { DEFAULT_IMPACT_WINDOW, parseImpactWindow, parseMaxNewBlocks, type ImpactWindow } from '../reconciler/plan/impact.ts';
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

export interface ConfigDirImpact {
  /** Null: no preview (AEGIS_CONFIG_DIR_IMPACT_WINDOW=off). */
  window: ImpactWindow | null;
  maxNewBlocks: number | undefined;
}

/** The preview's window and gate from the environment, as `aegis watch` takes --impact-window, --no-impact and --max-new-blocks. */
export function configDirImpact(env: NodeJS.ProcessEnv = process.env): ConfigDirImpact {
  const windowText = env.AEGIS_CONFIG_DIR_IMPACT_WINDOW?.trim() || DEFAULT_IMPACT_WINDOW;
  const window = windowText === 'off' ? null : parseImpactWindow(windowText);
  if (window === null && windowText !== 'off') {
    throw new Error(`AEGIS_CONFIG_DIR_IMPACT_WINDOW must be a whole number of minutes, hours or days (30m, 6h, 24h, 7d; at most 90d) or off, got "${windowText}"`);
  }
  const limitText = env.AEGIS_CONFIG_DIR_MAX_NEW_BLOCKS?.trim();
  const maxNewBlocks = limitText ? parseMaxNewBlocks(limitText) : undefined;
  if (maxNewBlocks === null) throw new Error(`AEGIS_CONFIG_DIR_MAX_NEW_BLOCKS must be a whole number of requests, got "${limitText}"`);
  if (window === null && maxNewBlocks !== undefined) throw new Error('AEGIS_CONFIG_DIR_MAX_NEW_BLOCKS needs the impact preview: leave AEGIS_CONFIG_DIR_IMPACT_WINDOW unset or set it to a window');
  return { window, maxNewBlocks };
}

const ANY_OR_LOOPBACK = /^(0\.0\.0\.0|::|::1|localhost|127\.\d+\.\d+\.\d+)$/;

/** The server's URL says localhost, which a server bound to one other address does not answer on. */
export function selfUrl(url: string, host: string): string {
  if (ANY_OR_LOOPBACK.test(host)) return url;
  const own = new URL(url);
  own.hostname = host.includes(':') ? `[${host}]` : host;
  return own.origin;
}

export async function watchConfigDir(url: string, config: ServerConfig, options: ConfigDirOptions, env: NodeJS.ProcessEnv = process.env): Promise<ConfigWatcher> {
  const { window, maxNewBlocks } = configDirImpact(env);
  const apiKey = await watcherApiKey(config, env);
  if (!apiKey) {
    throw new Error(
      `--config-dir needs an API key to apply with: set AEGIS_API_KEY (scope admin) or AEGIS_BOOTSTRAP_API_KEY; ` +
        `${join(config.dataDir, 'bootstrap-key')} is only written on the first start of an empty database`,
    );
  }
  const { api, impact } = connect({ AEGIS_API_URL: selfUrl(url, config.host), AEGIS_API_KEY: apiKey });
  const log = pino({ level: config.logLevel, name: 'gitops' }, config.logStream);
  return watchConfig({
    api,
    path: options.dir,
    source: await resolveSource(undefined, options.dir),
    prune: true,
    selfHeal: options.selfHeal,
    driftIntervalMs: options.driftIntervalMs,
    ...(window ? { impact: { previewer: impact, window, ...(maxNewBlocks !== undefined ? { maxNewBlocks } : {}) } } : {}),
    onEvent: (event) => logEvent(log, event),
  });
}
