// Continuous GitOps: time from a push event received to the sync applied, for a config repository
// of 1 000 objects (10 sites × 99 IP rules) with one changed rule. Target ≤ 2 s. The baseline, in
// the same run against the same server, is the same one-rule change reconciled directly (what
// `aegis apply` does from a checkout): the ratio is what the push path (delivery, job, clone) adds.
// Also: `aegis watch` on the same directory, a saved edit → applied (target ≤ 1 s).
//   npm run bench:gitops        BENCH_ROUNDS=7 BENCH_DATABASE=postgres|embedded
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKey } from '../api/accounts/keys/key-material.ts';
import { loadConfig } from '../api/config.ts';
import { startServer } from '../api/server.ts';
import { syncConfigDirectory } from '../reconciler/sync/config-repo-sync.ts';
import { createAegisClient } from '../client/client.ts';
import { restResources } from '../reconciler/live/rest-resources.ts';
import { reconcile } from '../reconciler/sync/reconcile.ts';
import { watchConfig } from '../reconciler/sync/watch.ts';
import { createScratchDatabase } from './support/scratch-database.ts';

const SITES = 10;
const RULES = 99;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const wantPostgres = (process.env.BENCH_DATABASE ?? 'postgres') === 'postgres';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-C', cwd, '-c', 'user.name=Bench', '-c', 'user.email=bench@example.com', ...args], { stdio: 'pipe' }).toString().trim();

/** The config; `changed` flips one rule of site 0 between deny and challenge. */
async function writeConfig(dir: string, changed: number): Promise<void> {
  for (let s = 0; s < SITES; s++) {
    const rules = Array.from({ length: RULES }, (_, r) => {
      const action = s === 0 && r === 0 && changed % 2 === 1 ? 'challenge' : 'deny';
      return `    - name: r${r}\n      type: ip\n      value: 10.${s}.${r >> 8}.${r & 255}\n      action: ${action}`;
    }).join('\n');
    await writeFile(
      join(dir, `site-${s}.yaml`),
      `apiVersion: aegis/v1\nkind: ShieldSite\nmetadata:\n  name: site-${s}\nspec:\n  domain: site-${s}.gitops-bench.example.com\n  origin_url: http://127.0.0.1:9\n  mode: block\n  ip_access:\n${rules}\n`,
    );
  }
}

const scratch = wantPostgres ? await createScratchDatabase() : undefined;
if (wantPostgres && !scratch) console.log('no PostgreSQL server reachable; running on the embedded database');
const root = await mkdtemp(join(tmpdir(), 'aegis-bench-gitops-'));
const key = generateKey();
const server = await startServer({
  ...loadConfig({ host: '127.0.0.1', port: '0', dataDir: join(root, 'data') }, {}),
  databaseUrl: scratch?.url,
  bootstrapApiKey: key,
  logLevel: 'silent',
  rateLimitPerMinute: 1e9,
  allowLocalSources: true,
  shieldEnabled: false,
}, { configSync: syncConfigDirectory });
const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(server.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: typeof body === 'string' ? body : body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const waitFor = async (check: () => Promise<boolean>, timeoutMs = 120_000) => {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

try {
  const bare = join(root, 'config.git');
  const work = join(root, 'work');
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
  execFileSync('git', ['clone', '-q', bare, work], { stdio: 'pipe' });
  git(work, 'checkout', '-q', '-b', 'main');
  await writeConfig(work, 0);
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'initial');
  git(work, 'push', '-q', 'origin', 'main');

  console.log(`gitops: ${SITES} sites × ${RULES} IP rules = ${SITES * (RULES + 1)} objects on ${scratch ? 'PostgreSQL' : 'the embedded database'}`);
  let started = performance.now();
  const created = await call('POST', '/api/v1/config-repos', { name: 'bench', url: `file://${bare}`, poll_interval_seconds: 86_400, max_changes: 5 });
  if (created.status !== 201) throw new Error(JSON.stringify(created.body));
  const repoId = String(created.body.id);
  const secret = String(created.body.webhook_secret);
  await waitFor(async () => (await call('GET', `/api/v1/config-repos/${repoId}`)).body.status === 'synced');
  console.log(`first sync (1 000 creates)       ${((performance.now() - started) / 1000).toFixed(2)} s`);

  const pushTimes: number[] = [];
  const inJob: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    await writeConfig(work, round);
    git(work, 'commit', '-q', '-am', `round ${round}`);
    git(work, 'push', '-q', 'origin', 'main');
    const after = git(work, 'rev-parse', 'HEAD');
    const payload = JSON.stringify({ ref: 'refs/heads/main', after, repository: { clone_url: `file://${bare}` } });
    const signature = `sha256=${createHmac('sha256', secret).update(payload).digest('hex')}`;
    started = performance.now();
    const delivered = await call('POST', '/api/v1/webhooks/github', payload, { 'x-github-event': 'push', 'x-github-delivery': `bench-${round}`, 'x-hub-signature-256': signature });
    const syncId = String((delivered.body.syncs as { sync_id: string }[])[0]!.sync_id);
    let sync: Record<string, unknown> = {};
    await waitFor(async () => {
      sync = (await call('GET', `/api/v1/config-repos/${repoId}/syncs/${syncId}`)).body;
      return sync.status === 'completed';
    });
    pushTimes.push(performance.now() - started);
    inJob.push(Number(sync.duration_ms));
    if (sync.result !== 'applied' || (sync.changes as string[]).length !== 1) throw new Error(`unexpected sync: ${JSON.stringify(sync)}`);
  }

  // Baseline: the same one-rule change reconciled directly from the working copy.
  const api = restResources(createAegisClient({ baseUrl: server.url, apiKey: key }));
  const source = String(created.body.source);
  const direct: number[] = [];
  for (let round = ROUNDS + 1; round <= 2 * ROUNDS; round++) {
    await writeConfig(work, round);
    started = performance.now();
    const outcome = await reconcile({ api, path: work, source, prune: true, apply: true });
    direct.push(performance.now() - started);
    if (outcome.result !== 'applied' || outcome.changes.length !== 1) throw new Error(`unexpected reconcile: ${outcome.result} ${outcome.errors.join('; ')}`);
  }

  // aegis watch on the same directory: a saved edit → the watcher's `applied` event.
  const watchTimes: number[] = [];
  let resolveApplied: (() => void) | undefined;
  const watcher = await watchConfig({
    api,
    path: work,
    source,
    prune: true,
    driftIntervalMs: 0,
    onEvent: (event) => {
      if (event.kind === 'applied') resolveApplied?.();
    },
  });
  await watcher.settled();
  for (let round = 2 * ROUNDS + 1; round <= 3 * ROUNDS; round++) {
    const applied = new Promise<void>((resolve) => (resolveApplied = resolve));
    started = performance.now();
    await writeConfig(work, round);
    await applied;
    watchTimes.push(performance.now() - started);
  }
  await watcher.close();

  const push = median(pushTimes);
  const base = median(direct);
  console.log(`direct reconcile of one change   median ${base.toFixed(0)} ms  (baseline: validate, read 1 000 objects, plan, 1 write)`);
  console.log(`push received → sync applied     median ${push.toFixed(0)} ms  (${pushTimes.map((t) => t.toFixed(0)).join(', ')}; target <= 2000 ms) ${push <= 2000 ? 'PASS' : 'ABOVE TARGET'}`);
  console.log(`  of which the sync job ran      median ${median(inJob).toFixed(0)} ms (clone + reconcile + record); the rest is queueing and the client's polling`);
  console.log(`ratio push path / direct         ${(push / base).toFixed(2)}`);
  console.log(`aegis watch: edit saved → applied median ${median(watchTimes).toFixed(0)} ms  (${watchTimes.map((t) => t.toFixed(0)).join(', ')}; includes the 150 ms debounce; target <= 1000 ms) ${median(watchTimes) <= 1000 ? 'PASS' : 'ABOVE TARGET'}`);
} finally {
  await server.close();
  await scratch?.drop();
  await rm(root, { recursive: true, force: true });
}
