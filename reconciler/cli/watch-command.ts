// `aegis watch DIR`: keeps the platform matching a config directory until stopped. Prints a line
// per event (`--json`: one JSON object per line), with indented detail lines in text mode. Its
// flags and help are declared in cli/program.ts.
import { describeEvent, type WatchEvent } from '../sync/watch-events.ts';
import { DEFAULT_DRIFT_INTERVAL_MS, watchConfig } from '../sync/watch.ts';
import { impactFlagsFrom, thresholdsFrom, type PlanOptions, type ThresholdOptions } from './commands.ts';
import { connect } from '../sync/session.ts';
import { configDirOf, resolveSource } from './source.ts';

/** A non-negative number of seconds as milliseconds (0: off); `fallback` when not given. */
export function secondsFlag(flag: string, value: string | undefined, fallbackMs: number): number {
  if (value === undefined) return fallbackMs;
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds < 0) throw new Error(`--${flag} must be a non-negative number of seconds, got "${value}"`);
  return Math.round(seconds * 1000);
}

export function printEvent(event: WatchEvent, json: boolean, out: NodeJS.WritableStream = process.stdout): void {
  if (json) {
    out.write(`${JSON.stringify(event)}\n`);
    return;
  }
  const { headline, details } = describeEvent(event);
  out.write([`${event.at} ${headline}`, ...details].map((line) => `${line}\n`).join(''));
}

export const untilSignal = (): Promise<void> =>
  new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });

export interface WatchOptions extends ThresholdOptions, Pick<PlanOptions, 'impactWindow' | 'impact' | 'maxNewBlocks'> {
  selfHeal?: boolean | undefined;
  driftInterval?: string | undefined;
  debounce?: string | undefined;
  source?: string | undefined;
  adopt?: boolean | undefined;
  /** false with --no-prune. */
  prune?: boolean | undefined;
  denyWeakening?: boolean | undefined;
  json?: boolean | undefined;
}

export async function watchCommand(path: string, options: WatchOptions): Promise<number> {
  const debounceMs = options.debounce === undefined ? undefined : Number(options.debounce);
  if (debounceMs !== undefined && (options.debounce?.trim() === '' || !Number.isInteger(debounceMs) || debounceMs < 0)) {
    throw new Error(`--debounce must be a whole number of milliseconds, got "${options.debounce}"`);
  }
  const driftIntervalMs = secondsFlag('drift-interval', options.driftInterval, DEFAULT_DRIFT_INTERVAL_MS);
  const thresholds = thresholdsFrom(options);
  const flags = impactFlagsFrom(options);
  const { api, impact } = connect();
  const json = options.json === true;
  const watcher = await watchConfig({
    api,
    path,
    source: await resolveSource(options.source, await configDirOf(path)),
    prune: options.prune !== false,
    adopt: options.adopt === true,
    denyWeakening: options.denyWeakening === true,
    thresholds,
    selfHeal: options.selfHeal === true,
    driftIntervalMs,
    ...(debounceMs !== undefined ? { debounceMs } : {}),
    ...(flags.window ? { impact: { previewer: impact, window: flags.window, ...(flags.maxNewBlocks !== undefined ? { maxNewBlocks: flags.maxNewBlocks } : {}) } } : {}),
    onEvent: (event) => printEvent(event, json),
  });
  await untilSignal();
  await watcher.close();
  return 0;
}
