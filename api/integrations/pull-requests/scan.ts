// Clones a pull request's head and base through the connection and scans both with the scanners a
// server code scan uses: secrets and SAST in a scan thread (the CPU-heavy part, off the event loop
// the API shares), SCA here against the advisories in the database. The two trees are cloned and
// scanned at the same time. The authenticated clone URL is built by the connector and handed
// straight to git (platform/git/clone.ts redacts it from any error); it is never logged or stored.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DbAdvisoryStore } from '../../advisories/store.ts';
import type { Db } from '../../../platform/db/database.ts';
import { cloneRepository } from '../../../platform/git/clone.ts';
import type { OutboundPolicy } from '../../../platform/net/outbound.ts';
import { withWorkspace } from '../../../platform/git/workspace.ts';
import type { ThreadPool } from '../../../platform/jobs/thread-runner.ts';
import type { CodeScanInput } from '../../scans/scan-thread.ts';
import { scanSca } from '../../../scanners/sca/scan.ts';
import type { CodeScanType, Finding, ScanOutput } from '../../../scanners/types.ts';

export const SCAN_THREAD = new URL('../../scans/scan-thread.ts', import.meta.url);

export interface TreeRef {
  /** The authenticated HTTPS clone URL (never log it). */
  url: string;
  /** A commit id, or a branch when the provider gave no commit (a GitLab base). */
  ref: string;
}

export interface ScanTreesInput {
  head: TreeRef;
  base: TreeRef;
  scanTypes: readonly CodeScanType[];
  allowLocalSources: boolean;
  /** What the clones connect under (net/outbound.ts); default: the tenant rule, private targets refused. */
  outbound?: OutboundPolicy;
  cloneTimeoutMs: number;
  signal: AbortSignal;
}

export interface TreeScan {
  commit: string;
  findings: Finding[];
  /** Time cloning and time scanning, in ms. */
  cloneMs: number;
  scanMs: number;
}

export interface ScanTreesDeps {
  db: Db;
  threads: ThreadPool;
}

/** Every scan type's findings for the tree in `root`, one per fingerprint. */
async function scanTree(deps: ScanTreesDeps, root: string, scanTypes: readonly CodeScanType[], signal: AbortSignal): Promise<Finding[]> {
  const findings = new Map<string, Finding>();
  // One after the other: head and base already run side by side, which fills a small machine.
  for (const scanType of scanTypes) {
    let output: ScanOutput;
    if (scanType === 'sca') output = await scanSca({ root, signal }, new DbAdvisoryStore(deps.db));
    else output = await deps.threads.run<ScanOutput>('runCodeScan', { scanType, root, history: false } satisfies CodeScanInput, { signal });
    for (const f of output.findings) if (!findings.has(f.fingerprint)) findings.set(f.fingerprint, f);
  }
  return [...findings.values()];
}

async function cloneAndScan(deps: ScanTreesDeps, tree: TreeRef, dir: string, input: ScanTreesInput): Promise<TreeScan> {
  const started = performance.now();
  await mkdir(dir);
  const { commit } = await cloneRepository({ kind: 'git', url: tree.url, ref: tree.ref, target: '' }, dir, {
    signal: input.signal,
    timeoutMs: input.cloneTimeoutMs,
    depth: 1,
    allowLocal: input.allowLocalSources,
    ...(input.outbound ? { outbound: input.outbound } : {}),
  });
  const cloned = performance.now();
  const findings = await scanTree(deps, dir, input.scanTypes, input.signal);
  return { commit, findings, cloneMs: cloned - started, scanMs: performance.now() - cloned };
}

/**
 * Clones and scans head and base side by side, in one private workspace removed afterwards. When
 * one side fails the other is stopped, and both have ended before the workspace goes.
 */
export async function scanHeadAndBase(deps: ScanTreesDeps, input: ScanTreesInput): Promise<{ head: TreeScan; base: TreeScan }> {
  const stop = new AbortController();
  const signal = AbortSignal.any([input.signal, stop.signal]);
  return withWorkspace(async (dir) => {
    const sides = [cloneAndScan(deps, input.head, join(dir, 'head'), { ...input, signal }), cloneAndScan(deps, input.base, join(dir, 'base'), { ...input, signal })] as const;
    for (const side of sides) side.catch((err: unknown) => stop.abort(err));
    const [head, base] = await Promise.allSettled(sides);
    if (head.status === 'rejected') throw head.reason;
    if (base.status === 'rejected') throw base.reason;
    return { head: head.value, base: base.value };
  });
}
