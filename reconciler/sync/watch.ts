// Continuous GitOps over a config directory: every burst of file edits is reconciled (validate,
// plan, apply, with every guard rail of `aegis apply`), and between edits a periodic drift check
// compares live state with the config — reporting what someone changed by hand, and with self-heal
// restoring it. `aegis watch` and `aegis serve --config-dir` both run this.
import { stat } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { passScheduler, type PassKind } from './pass-scheduler.ts';
import { reconcile, type ReconcileImpact, type ReconcileOptions } from './reconcile.ts';
import { errorSignature, passReport, type PassTrigger, type Signature, type WatchEvent } from './watch-events.ts';
import { watchConfigFiles } from './watch-files.ts';
import { errorMessage } from '../../schemas/json-value.ts';

export type { WatchEvent } from './watch-events.ts';

export const DEFAULT_DRIFT_INTERVAL_MS = 60_000;
export const DEFAULT_DEBOUNCE_MS = 150;

export interface WatchOptions extends Pick<ReconcileOptions, 'api' | 'path' | 'source' | 'prune' | 'adopt' | 'thresholds' | 'denyWeakening'> {
  /** Drift checks apply what they find (restore live state); otherwise they only report it. */
  selfHeal?: boolean;
  /** Quiet time after the last pass before a drift check; 0 turns drift checks off. */
  driftIntervalMs?: number;
  /** Quiet time after the last file event before a pass. */
  debounceMs?: number;
  /** Every report; must not throw. */
  onEvent: (event: WatchEvent) => void;
  /** Preview each plan's impact on recorded traffic (absent: none); an unchanged plan reuses the last preview for a while. */
  impact?: Omit<ReconcileImpact, 'previous'>;
}

export interface ConfigWatcher {
  /** Resolves once no pass is running or waiting (edits still in their debounce time excepted). */
  settled(): Promise<void>;
  /** Stops watching and the drift timer; resolves when a running pass is over. */
  close(): Promise<void>;
}


/** Starts watching; resolves once file events are being seen, with the initial pass under way. */
export async function watchConfig(options: WatchOptions): Promise<ConfigWatcher> {
  const { onEvent, selfHeal = false, driftIntervalMs = DEFAULT_DRIFT_INTERVAL_MS, debounceMs = DEFAULT_DEBOUNCE_MS } = options;
  const settings = { api: options.api, path: options.path, source: options.source, prune: options.prune, adopt: options.adopt, thresholds: options.thresholds, denyWeakening: options.denyWeakening };
  // chokidar would wait silently for a path that does not exist (yet); a typo should fail at once.
  await stat(options.path).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ENOENT' ? new Error(`${options.path} does not exist`) : error;
  });

  let started = false;
  // The last file pass failed: the next timed pass applies it again rather than checking drift.
  let unapplied = false;
  let closed = false;
  // What the last pass left; drift checks report only when it changes (watch-events.ts).
  let signature: Signature | null = null;
  let driftTimer: NodeJS.Timeout | undefined;
  let lastPreview: ReconcileImpact['previous'];
  // Files changed since the last file pass began: a drift check that overlaps an edit reads it half-way.
  let filesChanged = false;

  const pass = async (kind: PassKind): Promise<void> => {
    const trigger: PassTrigger = kind === 'files' ? (started ? 'files' : 'start') : unapplied ? 'retry' : 'drift';
    started = true;
    if (kind === 'files') filesChanged = false;
    const begun = performance.now();
    try {
      // A file pass (or its retry) always applies: the config changed, which is the request to apply it.
      const impact = options.impact ? { impact: { ...options.impact, ...(lastPreview ? { previous: lastPreview } : {}) } } : {};
      const outcome = await reconcile({ ...settings, ...impact, apply: trigger !== 'drift' || selfHeal });
      // The config was edited while this check read it: what it found is the edit, not drift, and
      // the file pass that follows applies and reports it.
      if (trigger === 'drift' && (filesChanged || files.debouncing())) return;
      // A reused preview (same window start) keeps the time it was made, so that it ages out.
      const reused = lastPreview !== undefined && outcome.impact?.since === lastPreview.impact.since;
      if (outcome.impact && outcome.plan && !reused) lastPreview = { plan: outcome.plan, impact: outcome.impact, at: Date.now() };
      const report = passReport(trigger, outcome, signature, { at: new Date(), durationMs: performance.now() - begun });
      signature = report.signature;
      if (trigger !== 'drift') unapplied = outcome.result === 'failed';
      if (report.event) onEvent(report.event);
    } catch (error) {
      const next = errorSignature(errorMessage(error));
      if (trigger === 'start' || trigger === 'files' || next !== signature) onEvent({ kind: 'error', trigger, at: new Date().toISOString(), message: errorMessage(error) });
      signature = next;
      if (trigger !== 'drift') unapplied = true;
    }
  };

  // The drift timer counts from the end of the last pass: right after applying, there is nothing to check.
  const armDriftCheck = (): void => {
    clearTimeout(driftTimer);
    if (closed || driftIntervalMs <= 0) return;
    driftTimer = setTimeout(() => {
      // Edits waiting out their debounce time will bring a file pass, which re-arms the timer.
      if (!files.debouncing()) scheduler.request('drift');
    }, driftIntervalMs);
  };
  const scheduler = passScheduler(pass, armDriftCheck);
  const files = await watchConfigFiles(options.path, {
    debounceMs,
    onChange: () => {
      filesChanged = true;
      scheduler.request('files');
    },
    onError: (error) => onEvent({ kind: 'error', trigger: 'watcher', at: new Date().toISOString(), message: error.message }),
  });
  onEvent({ kind: 'watching', at: new Date().toISOString(), path: options.path, source: options.source, selfHeal, driftIntervalMs: Math.max(0, driftIntervalMs), debounceMs });
  scheduler.request('files');

  return {
    settled: () => scheduler.settled(),
    async close() {
      closed = true;
      clearTimeout(driftTimer);
      await files.close();
      await scheduler.close();
    },
  };
}
