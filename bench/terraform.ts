// Terraform with the Aegis provider against the reconciler, on the same server and the same shape
// of config: 1 000 resources (10 sites × 99 IP rules). Measures `terraform apply` of the creates,
// a no-change `terraform plan -refresh=true` (one ReadResource per object, in provider processes
// Terraform starts), a no-change `aegis plan` over an identical set of objects, their ratio, and
// the provider's start-up time (exec to handshake line, average of 5 after a warm-up that builds
// the bundle). Both plans are the median of BENCH_PLAN_RUNS (3) runs; `aegis` runs from dist/.
//
// Fairness: each tool gets its own organisation holding exactly its 1 000 objects (Terraform's in
// `default`, the reconciler's in `bench-reconciler`, same domains and rules), so each plan reads
// its own objects and nothing else; both are timed as the commands a user runs (child processes,
// including their start-up), and the reconciler's in-process plan is shown as well.
//   npm run bench:terraform        BENCH_SITES=10 BENCH_RULES=99 BENCH_DATABASE=postgres|embedded BENCH_TF_PARALLELISM=16 BENCH_PLAN_RUNS=3
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKey } from '../api/accounts/keys/key-material.ts';
import { loadConfig } from '../api/config.ts';
import { ensureOrganization } from '../api/accounts/keys/bootstrap.ts';
import { insertKey } from '../api/accounts/keys/key-store.ts';
import { startServer } from '../api/server.ts';
import { DEFAULT_LAUNCHER, installProvider } from '../provider/install/install.ts';
import { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE } from '../provider/server/serve.ts';
import { applyPlan } from '../reconciler/apply/apply.ts';
import { createAegisClient } from '../client/client.ts';
import { preparePlan } from '../reconciler/sync/session.ts';
import { restResources } from '../reconciler/live/rest-resources.ts';
import { buildDist, staleInput } from '../build/bundle.mjs';
import { createScratchDatabase } from './support/scratch-database.ts';
import { writeSiteRepo } from './support/site-repo.ts';

const SITES = Number(process.env.BENCH_SITES ?? 10);
const RULES = Number(process.env.BENCH_RULES ?? 99);
const PARALLELISM = Number(process.env.BENCH_TF_PARALLELISM ?? 16);
const wantPostgres = (process.env.BENCH_DATABASE ?? 'postgres') === 'postgres';
const OBJECTS = SITES * (RULES + 1);
/** Plans are timed this many times each (median): one run of either swings by a quarter on a busy machine. */
const PLAN_RUNS = Number(process.env.BENCH_PLAN_RUNS ?? 3);
const ROOT = fileURLToPath(new URL('../', import.meta.url));

interface Run {
  status: number;
  stdout: string;
  stderr: string;
  seconds: number;
}

// Asynchronous: the API server runs in this process and must keep answering.
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env, timeout: 1_800_000, maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr, seconds: (performance.now() - started) / 1000 });
    });
  });
}

function must(step: string, result: Run, status = 0): Run {
  if (result.status !== status) throw new Error(`${step}: exit ${result.status} (expected ${status})\n${result.stderr}\n${result.stdout.slice(-4000)}`);
  return result;
}

/** The run of median duration among `count` runs of `once`. */
async function medianRun(count: number, once: () => Promise<Run>): Promise<Run> {
  const runs: Run[] = [];
  for (let i = 0; i < count; i++) runs.push(await once());
  return runs.sort((a, b) => a.seconds - b.seconds)[count >> 1]!;
}

/** Exec of the launcher until its handshake line on stdout, in seconds. */
function providerStartup(): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(DEFAULT_LAUNCHER, [], { env: { ...process.env, [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE, PLUGIN_PROTOCOL_VERSIONS: '6' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (!out.includes('\n')) return;
      const seconds = (performance.now() - started) / 1000;
      if (!/^1\|6\|unix\|/.test(out)) reject(new Error(`unexpected handshake: ${out}`));
      child.once('exit', () => resolve(seconds));
      child.kill('SIGTERM');
    });
    child.once('exit', (code) => {
      if (!out.includes('\n')) reject(new Error(`provider exited (${code}) before the handshake: ${err}`));
    });
  });
}

function hcl(): string {
  const parts = ['terraform {\n  required_providers {\n    aegis = { source = "aegis/aegis" }\n  }\n}\n\nprovider "aegis" {}\n'];
  for (let s = 0; s < SITES; s++) {
    parts.push(`resource "aegis_shield_site" "site_${s}" {\n  domain     = "site-${s}.bench.example.com"\n  origin_url = "http://127.0.0.1:9"\n  mode       = "block"\n}\n`);
    for (let r = 0; r < RULES; r++) {
      parts.push(`resource "aegis_ip_access_rule" "s${s}_r${r}" {\n  site_id = aegis_shield_site.site_${s}.id\n  type    = "ip"\n  value   = "10.${s}.${r >> 8}.${r & 255}"\n  action  = "deny"\n}\n`);
    }
  }
  return parts.join('\n');
}


const s = (seconds: number) => `${seconds.toFixed(2)} s`;

// `aegis plan` is timed as users run it: from the build, made fresh first.
if (staleInput() !== undefined) await buildDist({ quiet: true });
const scratch = wantPostgres ? await createScratchDatabase() : undefined;
if (wantPostgres && !scratch) console.log('no PostgreSQL server reachable; running on the embedded database');
const tmp = await mkdtemp(join(tmpdir(), 'aegis-bench-terraform-'));
const dataDir = join(tmp, 'data');
const work = join(tmp, 'work');
const repo = join(tmp, 'repo');
await Promise.all([mkdir(dataDir), mkdir(work), mkdir(repo)]);
const key = generateKey();
const server = await startServer({ ...loadConfig({ host: '127.0.0.1', port: '0', dataDir }, {}), databaseUrl: scratch?.url, bootstrapApiKey: key, logLevel: 'silent', rateLimitPerMinute: 1e9 });
try {
  console.log(`terraform vs reconciler: ${SITES} sites × ${RULES} IP rules = ${OBJECTS} resources each, on ${scratch ? 'PostgreSQL' : 'the embedded database'}`);
  const version = must('terraform version', await run('terraform', ['version'], work, { ...process.env, CHECKPOINT_DISABLE: '1' }));
  console.log(version.stdout.split('\n')[0]);

  // Provider start-up: one warm-up (builds provider/.build when stale), then the average of 5.
  await providerStartup();
  const startups: number[] = [];
  for (let i = 0; i < 5; i++) startups.push(await providerStartup());
  const startupAverage = startups.reduce((a, b) => a + b, 0) / startups.length;
  console.log(`provider start-up (exec → handshake)  ${(startupAverage * 1000).toFixed(0)} ms average of 5 (${startups.map((x) => (x * 1000).toFixed(0)).join(', ')} ms)`);

  // Terraform, in organisation `default`.
  const installed = installProvider({ dir: join(tmp, 'mirror') });
  const env: NodeJS.ProcessEnv = { ...process.env, CHECKPOINT_DISABLE: '1', TF_IN_AUTOMATION: '1', TF_CLI_CONFIG_FILE: installed.configFile, AEGIS_API_URL: server.url, AEGIS_API_KEY: key };
  delete env.TF_PLUGIN_CACHE_DIR;
  delete env.TF_LOG;
  await writeFile(join(work, 'main.tf'), hcl());
  const init = must('terraform init', await run('terraform', ['init', '-no-color', '-input=false'], work, env));
  console.log(`terraform init                         ${s(init.seconds)}`);
  const apply = must('terraform apply', await run('terraform', ['apply', '-auto-approve', '-no-color', '-input=false', `-parallelism=${PARALLELISM}`], work, env));
  if (!new RegExp(`Resources: ${OBJECTS} added`).test(apply.stdout)) throw new Error(`terraform apply: ${apply.stdout.slice(-2000)}`);
  console.log(`terraform apply (${OBJECTS} creates)       ${s(apply.seconds)}  (-parallelism=${PARALLELISM})`);
  const tfPlan = await medianRun(PLAN_RUNS, async () => must('terraform plan', await run('terraform', ['plan', '-refresh=true', '-detailed-exitcode', '-no-color', '-input=false', `-parallelism=${PARALLELISM}`], work, env)));
  console.log(`terraform plan -refresh=true           ${s(tfPlan.seconds)}  no changes (exit 0), ${OBJECTS} ReadResource calls, -parallelism=${PARALLELISM}; median of ${PLAN_RUNS}`);

  // The reconciler, in its own organisation with the same objects.
  const db = server.database.db;
  const orgId = await ensureOrganization(db, 'bench-reconciler');
  const reconcilerKey = (await insertKey(db, { orgId, name: 'bench-reconciler', scopes: ['admin'], createdBy: null })).value;
  await writeSiteRepo(repo, SITES, RULES);
  const client = createAegisClient({ baseUrl: server.url, apiKey: reconcilerKey });
  const api = restResources(client);
  const inputs = { path: repo, source: 'bench', adopt: false, prune: true, denyWeakening: false };
  const first = await preparePlan(api, inputs);
  if ('configErrors' in first) throw new Error(first.configErrors.join('\n'));
  let started = performance.now();
  const applied = await applyPlan(first.plan, api, { concurrency: 16 });
  if (applied.failed.length > 0) throw new Error(`aegis apply failed: ${applied.failed[0]?.error}`);
  console.log(`aegis apply (${applied.applied.length} creates)           ${s((performance.now() - started) / 1000)}  (in process, concurrency 16)`);

  client.resetStats();
  started = performance.now();
  const second = await preparePlan(api, inputs);
  const inProcess = (performance.now() - started) / 1000;
  if ('configErrors' in second || second.plan.changes.length > 0) throw new Error('aegis plan: expected no changes');
  const cliEnv = { ...process.env, AEGIS_API_URL: server.url, AEGIS_API_KEY: reconcilerKey };
  const aegisPlan = await medianRun(PLAN_RUNS, async () => must('aegis plan', await run(process.execPath, [join(ROOT, 'bin/aegis.mjs'), 'plan', repo, '--source', 'bench'], ROOT, cliEnv)));
  console.log(`aegis plan                             ${s(aegisPlan.seconds)}  no changes (exit 0); in process ${s(inProcess)}, ${client.stats.reads} reads; median of ${PLAN_RUNS}, ${staleInput() === undefined ? 'from the build (dist/)' : 'FROM THE SOURCES: dist/ is stale'}`);

  console.log(`ratio terraform plan / aegis plan      ${(tfPlan.seconds / aegisPlan.seconds).toFixed(1)}×  (commands; ${(tfPlan.seconds / inProcess).toFixed(1)}× against the in-process plan)`);
  must('terraform destroy', await run('terraform', ['destroy', '-auto-approve', '-no-color', '-input=false', `-parallelism=${PARALLELISM}`], work, env));
} finally {
  await server.close();
  await scratch?.drop();
  await rm(tmp, { recursive: true, force: true });
}
