// What a scan thread runs (platform/jobs/thread-runner.ts): the CPU-heavy scanners, off the event loop
// the API and the job heartbeats share. Input and output cross the thread boundary by structured
// clone, so they are plain data.
import type { ThreadFunction } from '../../platform/jobs/thread-runner.ts';
import { defaultRules } from '../../scanners/sast/rules.ts';
import { scanSast } from '../../scanners/sast/scan.ts';
import { scanSecrets } from '../../scanners/secrets/index.ts';
import { loadRuleSet } from '../../scanners/secrets/rules.ts';
import type { ScanOutput } from '../../scanners/types.ts';
import { attachSourceWindows } from '../../scanners/source-window.ts';

export interface CodeScanInput {
  scanType: 'sast' | 'secrets';
  root: string;
  history: boolean;
}

export const runCodeScan: ThreadFunction<CodeScanInput, ScanOutput> = async (input, { signal, progress }) => {
  const ctx = { root: input.root, signal, onProgress: progress };
  const output = input.scanType === 'secrets' ? await scanSecrets(ctx, { history: input.history }) : await scanSast(ctx);
  // the checkout is gone after the scan: keep the (redacted) code around each finding for triage
  signal.throwIfAborted();
  attachSourceWindows(input.root, output.findings);
  return output;
};

/** Compiles both rule sets (cached for the thread's life), so a warmed thread's first scan starts at once. */
export const warmUp: ThreadFunction<null, null> = () => {
  loadRuleSet();
  defaultRules();
  return null;
};
