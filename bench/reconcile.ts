// The reconciler at scale: apply 10 000 creates (10 sites × 999 rules: IP rules, virtual patches and
// rate-limit rules, plus the sites) to a live server running with the DEFAULT rate limit
// (100 requests/min per key), then plan again with nothing to change. Rule writes go through the
// site's rule batch endpoint (≤ 1 000 per request). Targets: apply ≤ 5 s on PostgreSQL, plan ≤ 3 s,
// and a no-change plan that writes nothing and whose reads grow with pages, not objects.
//
// "Before" is the old path, one request per change, measured in the same run on a sample of
// BENCH_BEFORE_SITES sites (default 1; 0 skips it; = BENCH_SITES for all) on a second server whose
// rate limit is lifted, and extrapolated to the full plan. Under the default rate limit the old
// path cannot beat (writes / 100) minutes at all; that bound is printed too.
//   npm run bench:reconcile        BENCH_SITES=10 BENCH_RULES=999 BENCH_BEFORE_SITES=1 BENCH_DATABASE=postgres|embedded
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKey } from '../api/accounts/keys/key-material.ts';
import { loadConfig } from '../api/config.ts';
import { startServer, type RunningServer } from '../api/server.ts';
import { applyPlan } from '../reconciler/apply/apply.ts';
import { createAegisClient, type AegisClient } from '../client/client.ts';
import { preparePlan } from '../reconciler/sync/session.ts';
import { restResources } from '../reconciler/live/rest-resources.ts';
import { summarise } from '../reconciler/plan/plan.ts';
import { createScratchDatabase, type ScratchDatabase } from './support/scratch-database.ts';

const SITES = Number(process.env.BENCH_SITES ?? 10);
const RULES = Number(process.env.BENCH_RULES ?? 999);
const BEFORE_SITES = Math.min(SITES, Number(process.env.BENCH_BEFORE_SITES ?? 1));
const wantPostgres = (process.env.BENCH_DATABASE ?? 'postgres') === 'postgres';
const OBJECTS = SITES * (RULES + 1);
const APPLY_TARGET_S = 5;

/** SITES files, each a site with RULES nested rules: 70 % IP rules, 20 % virtual patches, 10 % rate limits. */
async function writeMixedRepo(dir: string, sites: number, rules: number): Promise<void> {
  for (let s = 0; s < sites; s++) {
    const ip: string[] = [];
    const patches: string[] = [];
    const limits: string[] = [];
    for (let r = 0; r < rules; r++) {
      const slot = r % 10;
      if (slot < 7) ip.push(`    - name: ip${r}\n      type: ip\n      value: 10.${s}.${r >> 8}.${r & 255}\n      action: deny\n      note: bench`);
      else if (slot < 9) patches.push(`    - name: vp${r}\n      url_pattern: /search/${r}\n      method: GET\n      match_param: q${r}\n      match_regex: "(?i)union\\\\s+select"\n      action: block`);
      else limits.push(`    - name: rl${r}\n      identity: ip\n      url_pattern: /api/${r}/*\n      method: POST\n      budget: 100\n      window_seconds: 60\n      action: block`);
    }
    const section = (field: string, items: string[]) => (items.length > 0 ? `  ${field}:\n${items.join('\n')}\n` : '');
    await writeFile(
      join(dir, `site-${s}.yaml`),
      `apiVersion: aegis/v1\nkind: ShieldSite\nmetadata:\n  name: site-${s}\nspec:\n  domain: site-${s}.bench.example.com\n  origin_url: http://127.0.0.1:9\n  mode: block\n` +
        section('ip_access', ip) +
        section('virtual_patches', patches) +
        section('rate_limits', limits),
    );
  }
}

interface Started {
  server: RunningServer;
  rateLimitPerMinute: number;
  key: string;
  scratch: ScratchDatabase | undefined;
  dataDir: string;
  close(): Promise<void>;
}

async function start(rateLimitPerMinute?: number): Promise<Started> {
  const scratch = wantPostgres ? await createScratchDatabase() : undefined;
  const dataDir = await mkdtemp(join(tmpdir(), 'aegis-bench-reconcile-'));
  const key = generateKey();
  const defaults = loadConfig({ host: '127.0.0.1', port: '0', dataDir }, {});
  const server = await startServer({ ...defaults, databaseUrl: scratch?.url, bootstrapApiKey: key, logLevel: 'silent', shieldPort: 0, ...(rateLimitPerMinute ? { rateLimitPerMinute } : {}) });
  return {
    server,
    rateLimitPerMinute: rateLimitPerMinute ?? defaults.rateLimitPerMinute,
    key,
    scratch,
    dataDir,
    async close() {
      await server.close();
      await scratch?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

const seconds = (since: number) => (performance.now() - since) / 1000;
const stats = (client: AegisClient) => `${client.stats.writes} writes, ${client.stats.reads} reads, ${client.stats.retries} retries, waited ${(client.stats.waitedMs / 1000).toFixed(1)} s`;

/** Plans `repo` against an empty server and applies it; returns the apply time and what it sent. */
async function planAndApply(client: AegisClient, repo: string, batch: boolean) {
  const api = restResources(client);
  const inputs = { path: repo, source: 'bench', adopt: false, prune: true, denyWeakening: false };
  let started = performance.now();
  const first = await preparePlan(api, inputs);
  if ('configErrors' in first) throw new Error(first.configErrors.join('\n'));
  const planSeconds = seconds(started);
  client.resetStats();
  started = performance.now();
  const result = await applyPlan(first.plan, api, { concurrency: 16, batch });
  const applySeconds = seconds(started);
  if (result.failed.length > 0) throw new Error(`apply failed: ${result.failed[0]?.error}`);
  return { plan: first.plan, planSeconds, applySeconds, applied: result.applied.length, writes: client.stats.writes, sent: stats(client), api, inputs };
}

const repo = await mkdtemp(join(tmpdir(), 'aegis-bench-repo-'));
const sampleRepo = await mkdtemp(join(tmpdir(), 'aegis-bench-repo-sample-'));
const after = await start();
let before: Started | undefined;
try {
  await writeMixedRepo(repo, SITES, RULES);
  const where = after.scratch ? 'PostgreSQL' : 'the embedded database';
  if (wantPostgres && !after.scratch) console.log('no PostgreSQL server reachable; running on the embedded database');
  console.log(`reconcile: ${SITES} sites × ${RULES} rules (70 % IP, 20 % virtual patches, 10 % rate limits) + the sites = ${OBJECTS} objects on ${where}`);

  // ---- before: one request per change, on a sample, with the rate limit lifted ----------------
  let beforeExtrapolated: number | undefined;
  let beforeWrites = OBJECTS;
  if (BEFORE_SITES > 0) {
    before = await start(1e9);
    await writeMixedRepo(sampleRepo, BEFORE_SITES, RULES);
    const client = createAegisClient({ baseUrl: before.server.url, apiKey: before.key });
    const sample = await planAndApply(client, sampleRepo, false);
    beforeExtrapolated = sample.applySeconds * (SITES / BEFORE_SITES);
    beforeWrites = Math.round(sample.writes * (SITES / BEFORE_SITES));
    console.log(
      `before: apply of ${sample.applied} creates, one request each (rate limit lifted)  ${sample.applySeconds.toFixed(2)} s  (${sample.sent})` +
        (BEFORE_SITES < SITES ? `  → ${OBJECTS} objects ≈ ${beforeExtrapolated.toFixed(1)} s (× ${SITES / BEFORE_SITES})` : ''),
    );
    await before.close();
    before = undefined;
  }
  const rateLimitFloorS = (beforeWrites / after.rateLimitPerMinute) * 60;
  console.log(`before: under the default rate limit (${after.rateLimitPerMinute}/min per key) ${beforeWrites} single writes take ≥ ${(rateLimitFloorS / 60).toFixed(0)} min`);

  // ---- after: batches, default rate limit --------------------------------------------------------
  const client = createAegisClient({ baseUrl: after.server.url, apiKey: after.key });
  const run = await planAndApply(client, repo, true);
  console.log(`plan (empty live state)   ${run.planSeconds.toFixed(2)} s  ${JSON.stringify(summarise(run.plan))}`);
  console.log(
    `after: apply of ${run.applied} creates in batches (default rate limit)  ${run.applySeconds.toFixed(2)} s  (${run.sent})  ` +
      `(target <= ${APPLY_TARGET_S} s${after.scratch ? '' : ' on PostgreSQL'}) ${run.applySeconds <= APPLY_TARGET_S ? 'PASS' : 'ABOVE TARGET'}`,
  );
  if (beforeExtrapolated !== undefined) console.log(`speed-up vs one request per change, rate limit lifted: × ${(beforeExtrapolated / run.applySeconds).toFixed(1)}`);
  console.log(`speed-up vs one request per change, default rate limit: × ${(rateLimitFloorS / run.applySeconds).toFixed(0)} (at least)`);

  // ---- no-change plan ------------------------------------------------------------------------------
  // A key of its own: the apply above already spent part of this minute's budget, and this measures
  // the plan, not the wait for the next window.
  const planKey = (await client.POST('/api/v1/api-keys', { body: { name: 'bench-plan', scopes: ['admin'] } })).key;
  const planClient = createAegisClient({ baseUrl: after.server.url, apiKey: planKey });
  const planApi = restResources(planClient);
  const started = performance.now();
  const second = await preparePlan(planApi, run.inputs);
  const planSeconds = seconds(started);
  if ('configErrors' in second) throw new Error('config errors');
  console.log(
    `plan (no changes)        ${planSeconds.toFixed(2)} s  (target <= 3 s) ${planSeconds <= 3 ? 'PASS' : 'ABOVE TARGET'}; ` +
      `changes ${second.plan.changes.length}, ${stats(planClient)} (objects: ${OBJECTS})`,
  );
} finally {
  await before?.close();
  await after.close();
  await rm(repo, { recursive: true, force: true });
  await rm(sampleRepo, { recursive: true, force: true });
}
