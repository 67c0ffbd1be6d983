// What the scans pages share: the scan resource's type, the six kinds and how each is started,
// and small formatting rules (duration, progress, which statuses are still moving).
import type { Item } from '../../api/types.ts';

export type Scan = Item<'/api/v1/scans'>;
export type ScanKind = Scan['scan_type'];
export type ScanStatus = Scan['status'];

export const SCAN_KINDS: ReadonlyArray<{ kind: ScanKind; label: string; what: string }> = [
  { kind: 'secrets', label: 'Secrets', what: 'Leaked keys, tokens and passwords in a repository (optionally its history).' },
  { kind: 'sast', label: 'SAST', what: 'Static analysis of source code: injection, unsafe calls, source → sink paths.' },
  { kind: 'sca', label: 'SCA', what: 'Dependencies named in lockfiles, checked against known advisories.' },
  { kind: 'dast', label: 'DAST', what: 'Crawls a running web application and probes its parameters.' },
  { kind: 'api', label: 'API', what: 'Exercises every operation of an OpenAPI document against a running API.' },
  { kind: 'cve', label: 'CVE', what: 'Runs the bundled templates of chosen CVEs or tags against a URL.' },
];

export const SCAN_STATUSES: readonly ScanStatus[] = ['queued', 'running', 'completed', 'failed', 'canceled'];

export const kindLabel = (kind: string) => SCAN_KINDS.find((k) => k.kind === kind)?.label ?? kind;

/** Queued and running scans still change: pages poll while one is on screen. */
export const isActive = (status: string) => status === 'queued' || status === 'running';

/** How often a page with a moving scan asks again. */
export const LIVE_INTERVAL_MS = 1500;

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${ms} ms`;
  const seconds = Math.round(ms / 100) / 10;
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.round(seconds - minutes * 60)} s`;
}
