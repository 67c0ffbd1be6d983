// Fixed cost of a code scan through the API: POST → completed for a small repository (the secrets
// fixture, 28 files) on an otherwise idle server, target ≤ 0.5 s. The first scan after start-up is
// shown apart (scan threads are warmed at start: AEGIS_WARM_SCAN_THREADS), then the median of the
// following ones split into queue wait (created → started), run (started → finished: clone, scan,
// findings recorded) and the rest (polling, HTTP). PostgreSQL (a scratch database), then embedded.
//   node bin/run-ts.mjs bench/scan-latency.ts     BENCH_SAMPLES=10
import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKey } from '../api/accounts/keys/key-material.ts';
import { loadConfig } from '../api/config.ts';
import { startServer } from '../api/server.ts';
import { onEachDatabase } from './support/scratch-database.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 10);

interface Timing {
  total: number;
  wait: number;
  run: number;
}

async function smallRepository(): Promise<string> {
  const repo = await mkdtemp(join(tmpdir(), 'aegis-scan-latency-repo-'));
  await cp('test/fixtures/scanners/secrets/repo', repo, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', ['-C', repo, '-c', 'user.name=Bench', '-c', 'user.email=bench@example.com', ...args], { stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'bench');
  return repo;
}

async function measure(label: string, databaseUrl: string | undefined, repo: string): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'aegis-scan-latency-data-'));
  const key = generateKey();
  const config = { ...loadConfig({ host: '127.0.0.1', port: '0', dataDir }, {}), databaseUrl, bootstrapApiKey: key, logLevel: 'warn', shieldEnabled: false, allowLocalSources: true, rateLimitPerMinute: 1_000_000 };
  const server = await startServer(config, {});
  const call = async (method: string, path: string, body?: unknown): Promise<Record<string, string>> => {
    const res = await fetch(server.url + path, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    return (await res.json()) as Record<string, string>;
  };
  const scanOnce = async (): Promise<Timing> => {
    const started = performance.now();
    const created = await call('POST', '/api/v1/secrets/scans', { target: `file://${repo}` });
    let scan = created;
    while (!['completed', 'failed', 'canceled'].includes(scan.status!)) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      scan = await call('GET', `/api/v1/scans/${created.id}`);
    }
    if (scan.status !== 'completed') throw new Error(`scan ${scan.status}: ${scan.error}`);
    return {
      total: performance.now() - started,
      wait: Date.parse(scan.started_at!) - Date.parse(scan.created_at!),
      run: Date.parse(scan.finished_at!) - Date.parse(scan.started_at!),
    };
  };
  try {
    // Let the warm-up thread load the scanners, as it would on a server started a moment ago.
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    const first = await scanOnce();
    const rest: Timing[] = [];
    for (let i = 0; i < SAMPLES; i++) rest.push(await scanOnce());
    const median = (pick: (t: Timing) => number) => [...rest.map(pick)].sort((a, b) => a - b)[Math.floor(rest.length / 2)]!;
    const total = median((t) => t.total);
    console.log(
      `${label.padEnd(11)} first scan ${first.total.toFixed(0)} ms; then median ${total.toFixed(0)} ms (queue wait ${median((t) => t.wait)} ms, run ${median((t) => t.run)} ms) over ${SAMPLES}  target ≤ 500 ms ${total <= 500 ? 'PASS' : 'ABOVE TARGET'}`,
    );
  } finally {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const repo = await smallRepository();
try {
  await onEachDatabase((label, databaseUrl) => measure(label, databaseUrl, repo));
} finally {
  await rm(repo, { recursive: true, force: true });
}
