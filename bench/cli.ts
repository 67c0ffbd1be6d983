// Start-up of the `aegis` command, from the build (dist/) and from the TypeScript sources
// (AEGIS_FROM_SOURCE=1, tsx): the median wall time of BENCH_RUNS cold processes (default 11) for
//   aegis --help
//   aegis validate examples/gitops
//   aegis plan DIR   against a running API, DIR holding 1 000 objects (10 sites × 99 IP rules) that
//                    are already applied, so the plan finds no changes (exit 0)
// and their ratio sources/build. Target: `aegis --help` from the build within 300 ms.
// Builds dist/ first when it is missing or stale, and checks it is still fresh afterwards (a file
// saved during the run would silently send the "build" runs to the sources).
//   npm run bench:cli        BENCH_RUNS=11 BENCH_DATABASE=postgres|embedded
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKey } from '../api/accounts/keys/key-material.ts';
import { loadConfig } from '../api/config.ts';
import { startServer } from '../api/server.ts';
import { staleInput } from '../build/bundle.mjs';
import { applyPlan } from '../reconciler/apply/apply.ts';
import { createAegisClient } from '../client/client.ts';
import { preparePlan } from '../reconciler/sync/session.ts';
import { restResources } from '../reconciler/live/rest-resources.ts';
import { createScratchDatabase } from './support/scratch-database.ts';
import { writeSiteRepo } from './support/site-repo.ts';

const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 11));
const SITES = 10;
const RULES = 99;
const TARGET_MS = 300;
const wantPostgres = (process.env.BENCH_DATABASE ?? 'postgres') === 'postgres';
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const AEGIS = join(ROOT, 'bin/aegis.mjs');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

// Asynchronous: the API server runs in this process and must keep answering.
function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(command, args, { cwd: ROOT, env, timeout: 600_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr, ms: performance.now() - started });
    });
  });
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

type Mode = 'build' | 'sources';

function envFor(mode: Mode, extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  if (mode === 'sources') env.AEGIS_FROM_SOURCE = '1';
  else delete env.AEGIS_FROM_SOURCE;
  return env;
}

/** Median ms of RUNS cold starts per mode, alternating the modes; every run must exit with `code`. */
async function measure(label: string, args: string[], code: number, extra: NodeJS.ProcessEnv = {}): Promise<Record<Mode, number>> {
  const times: Record<Mode, number[]> = { build: [], sources: [] };
  for (const mode of ['build', 'sources'] as const) await run(process.execPath, [AEGIS, ...args], envFor(mode, extra)); // warm the file cache
  for (let i = 0; i < RUNS; i++) {
    for (const mode of ['build', 'sources'] as const) {
      const result = await run(process.execPath, [AEGIS, ...args], envFor(mode, extra));
      if (result.code !== code) throw new Error(`${label} (${mode}): exit ${result.code}, expected ${code}\n${result.stderr}\n${result.stdout.slice(-2000)}`);
      times[mode].push(result.ms);
    }
  }
  return { build: median(times.build), sources: median(times.sources) };
}

const built = await run(process.execPath, [join(ROOT, 'build/bundle.mjs'), '--if-stale'], process.env);
if (built.code !== 0) throw new Error(`build failed:\n${built.stderr}`);
if (staleInput() !== undefined) throw new Error(`dist/ is stale after building (${staleInput()}): is someone editing the sources?`);

const scratch = wantPostgres ? await createScratchDatabase() : undefined;
if (wantPostgres && !scratch) console.log('no PostgreSQL server reachable; running on the embedded database');
const tmp = await mkdtemp(join(tmpdir(), 'aegis-bench-cli-'));
const dataDir = join(tmp, 'data');
const repo = join(tmp, 'repo');
await Promise.all([mkdir(dataDir), mkdir(repo)]);
const key = generateKey();
const server = await startServer({ ...loadConfig({ host: '127.0.0.1', port: '0', dataDir }, {}), databaseUrl: scratch?.url, bootstrapApiKey: key, logLevel: 'silent', rateLimitPerMinute: 1e9 });
try {
  const objects = await writeSiteRepo(repo, SITES, RULES);
  const api = restResources(createAegisClient({ baseUrl: server.url, apiKey: key }));
  const prepared = await preparePlan(api, { path: repo, source: 'bench-cli', adopt: false, prune: true, denyWeakening: false });
  if ('configErrors' in prepared) throw new Error(prepared.configErrors.join('\n'));
  const applied = await applyPlan(prepared.plan, api, { concurrency: 16 });
  if (applied.failed.length > 0) throw new Error(`apply failed: ${applied.failed[0]?.error}`);

  console.log(`aegis start-up: median of ${RUNS} cold processes each, build (dist/) and sources (tsx); API on ${scratch ? 'PostgreSQL' : 'the embedded database'}`);
  const rows: [string, Record<Mode, number>][] = [
    ['aegis --help', await measure('--help', ['--help'], 0)],
    ['aegis validate examples/gitops', await measure('validate', ['validate', 'examples/gitops'], 0)],
    [`aegis plan (${objects} objects, no changes)`, await measure('plan', ['plan', repo, '--source', 'bench-cli'], 0, { AEGIS_API_URL: server.url, AEGIS_API_KEY: key })],
  ];
  const stale = staleInput();
  if (stale !== undefined) console.log(`WARNING: ${stale} changed during the run; later "build" runs may have run the sources`);

  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  console.log(`${'command'.padEnd(width)}${'build'.padStart(10)}${'sources'.padStart(10)}${'sources/build'.padStart(15)}`);
  for (const [label, t] of rows) {
    console.log(`${label.padEnd(width)}${`${t.build.toFixed(0)} ms`.padStart(10)}${`${t.sources.toFixed(0)} ms`.padStart(10)}${`${(t.sources / t.build).toFixed(1)}×`.padStart(15)}`);
  }
  const help = rows[0]![1].build;
  console.log(`aegis --help from the build: ${help.toFixed(0)} ms (target <= ${TARGET_MS} ms) ${help <= TARGET_MS ? 'PASS' : 'ABOVE TARGET'}`);
} finally {
  await server.close();
  await scratch?.drop();
  await rm(tmp, { recursive: true, force: true });
}
