// `aegis watch DIR`: keeps the platform matching a config directory until stopped. Prints a line
// per event (`--json`: one JSON object per line), with indented detail lines in text mode.
import { parseArgs } from 'node:util';
import { describeEvent, type WatchEvent } from '../sync/watch-events.ts';
import { DEFAULT_DRIFT_INTERVAL_MS, watchConfig } from '../sync/watch.ts';
import { thresholdsFrom } from './commands.ts';
import { connect } from './session.ts';
import { resolveSource } from './source.ts';

export const WATCH_USAGE =
  'usage: aegis watch DIR [--self-heal] [--drift-interval SECONDS] [--debounce MS] [--source ID] [--adopt] [--no-prune]\n' +
  '                       [--deny-weakening] [--max-changes N] [--max-change-percent P] [--json]\n';

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

export async function watchCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      'self-heal': { type: 'boolean', default: false },
      'drift-interval': { type: 'string' },
      debounce: { type: 'string' },
      source: { type: 'string' },
      adopt: { type: 'boolean', default: false },
      'no-prune': { type: 'boolean', default: false },
      'deny-weakening': { type: 'boolean', default: false },
      'max-changes': { type: 'string' },
      'max-change-percent': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    allowPositionals: true,
  });
  const path = positionals[0];
  if (!path || positionals.length > 1) {
    process.stderr.write(WATCH_USAGE);
    return 1;
  }
  const debounceMs = values.debounce === undefined ? undefined : Number(values.debounce);
  if (debounceMs !== undefined && (!Number.isInteger(debounceMs) || debounceMs < 0)) throw new Error(`--debounce must be a whole number of milliseconds, got "${values.debounce}"`);
  const { api } = connect();
  const watcher = await watchConfig({
    api,
    path,
    source: await resolveSource(values.source, path),
    prune: !values['no-prune'],
    adopt: values.adopt,
    denyWeakening: values['deny-weakening'],
    thresholds: thresholdsFrom(values),
    selfHeal: values['self-heal'],
    driftIntervalMs: secondsFlag('drift-interval', values['drift-interval'], DEFAULT_DRIFT_INTERVAL_MS),
    ...(debounceMs !== undefined ? { debounceMs } : {}),
    onEvent: (event) => printEvent(event, values.json),
  });
  await untilSignal();
  await watcher.close();
  return 0;
}
