// The reconciler at scale: apply 10 000 creates (20 sites × 500 IP rules) to a live server, then
// plan again with nothing to change. Targets: apply ≤ 30 s on PostgreSQL, plan ≤ 3 s, and a
// no-change plan that writes nothing and whose reads grow with pages, not objects.
//   npm run bench:reconcile        BENCH_SITES=20 BENCH_RULES=500 BENCH_DATABASE=postgres|embedded
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKey } from '../api/auth/key-material.ts';
import { loadConfig } from '../api/config.ts';
import { startServer } from '../api/server.ts';
import { applyPlan } from '../reconciler/apply/apply.ts';
import { createAegisClient } from '../reconciler/client/client.ts';
import { preparePlan } from '../reconciler/cli/session.ts';
import { restResources } from '../reconciler/live/rest-resources.ts';
import { summarise } from '../reconciler/plan/plan.ts';
import { createScratchDatabase } from './support/scratch-database.ts';
import { writeSiteRepo } from './support/site-repo.ts';

const SITES = Number(process.env.BENCH_SITES ?? 20);
const RULES = Number(process.env.BENCH_RULES ?? 500);
const wantPostgres = (process.env.BENCH_DATABASE ?? 'postgres') === 'postgres';

const scratch = wantPostgres ? await createScratchDatabase() : undefined;
if (wantPostgres && !scratch) console.log('no PostgreSQL server reachable; running on the embedded database');
const dataDir = await mkdtemp(join(tmpdir(), 'aegis-bench-reconcile-'));
const repo = await mkdtemp(join(tmpdir(), 'aegis-bench-repo-'));
const key = generateKey();
const server = await startServer({ ...loadConfig({ host: '127.0.0.1', port: '0', dataDir }, {}), databaseUrl: scratch?.url, bootstrapApiKey: key, logLevel: 'silent', rateLimitPerMinute: 1e9 });
try {
  await writeSiteRepo(repo, SITES, RULES);
  const client = createAegisClient({ baseUrl: server.url, apiKey: key });
  const api = restResources(client);
  const inputs = { path: repo, source: 'bench', adopt: false, prune: true, denyWeakening: false };
  console.log(`reconcile: ${SITES} sites × ${RULES} IP rules = ${SITES * (RULES + 1)} objects on ${scratch ? 'PostgreSQL' : 'the embedded database'}`);

  let started = performance.now();
  const first = await preparePlan(api, inputs);
  if ('configErrors' in first) throw new Error(first.configErrors.join('\n'));
  console.log(`plan (empty live state)   ${((performance.now() - started) / 1000).toFixed(2)} s  ${JSON.stringify(summarise(first.plan))}`);

  started = performance.now();
  const result = await applyPlan(first.plan, api, { concurrency: 16 });
  const applySeconds = (performance.now() - started) / 1000;
  if (result.failed.length > 0) throw new Error(`apply failed: ${result.failed[0]?.error}`);
  console.log(`apply of ${result.applied.length} creates  ${applySeconds.toFixed(2)} s  (target <= 30 s${scratch ? '' : ' on PostgreSQL'}) ${applySeconds <= 30 ? 'PASS' : 'ABOVE TARGET'}`);

  client.resetStats();
  started = performance.now();
  const second = await preparePlan(api, inputs);
  const planSeconds = (performance.now() - started) / 1000;
  if ('configErrors' in second) throw new Error('config errors');
  const pagesExpected = Math.ceil(SITES / 200) + 2 + SITES * (Math.ceil(RULES / 200) + 2 + 1);
  console.log(
    `plan (no changes)        ${planSeconds.toFixed(2)} s  (target <= 3 s) ${planSeconds <= 3 ? 'PASS' : 'ABOVE TARGET'}; ` +
      `changes ${second.plan.changes.length}, writes ${client.stats.writes}, reads ${client.stats.reads} (pages: ~${pagesExpected}; objects: ${SITES * (RULES + 1)})`,
  );
} finally {
  await server.close();
  await scratch?.drop();
  await rm(dataDir, { recursive: true, force: true });
  await rm(repo, { recursive: true, force: true });
}
