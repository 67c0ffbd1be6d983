// Pull-request check latency: a signed `pull_request` event delivered to a server connected to the
// GitHub stand-in → the check run completed at the stand-in, for a repository of 1 000 generated
// JavaScript modules (~2 KB each) whose pull request adds one new finding. Target ≤ 10 s. The
// connection is made through the OAuth flow (a GitHub App user token), as GitHub writes check runs
// only for GitHub Apps: the stand-in refuses them to personal access tokens, as GitHub does.
//
// Each round opens a new pull request (a branch adding a hard-coded AWS access key id to one module) and
// delivers its `opened` event. Measured from the delivery being sent until the stand-in holds a
// completed check run on the head. The split comes from the job's own timestamps, kept in the
// check's summary (`timings`): time talking to the provider (check run created, updated, comment
// posted), time cloning head and base (side by side: the longer of the two), time scanning them
// (side by side: the longer of the two); the rest is delivery, queue wait and database writes
// (total minus the job's own time; the job's time also covers the comment posted after the check
// run completed, so the rest is, if anything, underestimated by that one call).
//
// Baseline, same run and same repository: `aegis scan secrets` then `aegis scan sast`, each
// `--local --diff-base HEAD~1` (the base commit), on a checkout of the head, in this process — what
// a CI job would run instead of the check (head and base scanned, findings already in the base
// dropped), without clone, queue or provider calls. The check's SCA scan finds no lockfile here and
// costs next to nothing, so both do the same scanning work; the CLI does it one tree after the
// other on one thread, the check scans head and base side by side in two threads.
//   node bin/run-ts.mjs bench/pr-check.ts     BENCH_ROUNDS=5
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { generateKey } from '../api/accounts/keys/key-material.ts';
import { loadConfig } from '../api/config.ts';
import { loadProviderSettings } from '../api/integrations/providers/settings.ts';
import { startServer } from '../api/server.ts';
import { scanCommand, type ScanIo } from '../cli/scan.ts';
import { startGithubStandIn } from '../test/support/providers/github/index.ts';
import { createScratchDatabase } from './support/scratch-database.ts';

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
const FILES = 1_000;
const TARGET_MS = 10_000;
const OWNER = 'acme';
const NAME = 'storefront';

/** A module of a small web shop: imports, a class, helpers; deterministic, ~2 KB, no findings. */
function moduleSource(i: number): string {
  const name = `Service${i}`;
  const dep = (i * 7919) % FILES;
  return `// Generated module ${i} of the storefront.
import { ${'helper' + dep} } from '../lib/module-${dep}.js';

const DEFAULTS = Object.freeze({ pageSize: ${10 + (i % 40)}, retries: ${1 + (i % 4)}, currency: 'EUR' });

/** Orders of one customer, with totals, for the account page. */
export class ${name} {
  constructor(repository, clock = () => new Date()) {
    this.repository = repository;
    this.clock = clock;
    this.cache = new Map();
  }

  async list(customerId, options = {}) {
    const pageSize = Math.min(options.pageSize ?? DEFAULTS.pageSize, 100);
    const key = \`\${customerId}:\${pageSize}:\${options.cursor ?? ''}\`;
    if (this.cache.has(key)) return this.cache.get(key);
    const rows = await this.repository.query('select * from orders where customer_id = $1 order by id limit $2', [customerId, pageSize + 1]);
    const page = { data: rows.slice(0, pageSize).map((row) => this.toOrder(row)), next: rows.length > pageSize ? rows[pageSize - 1].id : null };
    this.cache.set(key, page);
    return page;
  }

  toOrder(row) {
    const lines = Array.isArray(row.lines) ? row.lines : [];
    const total = lines.reduce((sum, line) => sum + line.quantity * line.unitPrice, 0);
    return {
      id: row.id,
      placedAt: new Date(row.placed_at).toISOString(),
      status: row.status === 'shipped' ? 'shipped' : row.status === 'cancelled' ? 'cancelled' : 'open',
      total: Math.round(total * 100) / 100,
      currency: row.currency ?? DEFAULTS.currency,
      items: lines.length,
    };
  }

  async retry(operation) {
    let lastError;
    for (let attempt = 0; attempt < DEFAULTS.retries; attempt++) {
      try {
        return await operation();
      } catch (err) {
        lastError = err;
        await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      }
    }
    throw lastError;
  }
}

export function helper${i}(value) {
  if (typeof value !== 'string') return ${'helper' + dep}(String(value ?? ''));
  return value.trim().toLowerCase().replace(/[^a-z0-9-]+/g, '-').slice(0, 64);
}

export function formatPrice${i}(amount, currency = DEFAULTS.currency) {
  return new Intl.NumberFormat('en-GB', { style: 'currency', currency }).format(amount);
}
`;
}

function repositoryFiles(): Record<string, string> {
  const files: Record<string, string> = { 'README.md': '# Storefront\n', 'package.json': '{ "name": "storefront", "private": true, "type": "module" }\n' };
  for (let i = 0; i < FILES - 2; i++) files[`lib/module-${i}.js`] = moduleSource(i);
  return files;
}

/** The one new finding of round `round`: a hard-coded AWS access key id in one module. */
function headChange(files: Record<string, string>, round: number): Record<string, string> {
  const path = `lib/module-${(round * 131) % (FILES - 2)}.js`;
  return { [path]: `${files[path]}\nexport const awsAccessKeyId = 'AKIA4VISCG5BI2EIRQO7';\n` };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (value: number): string => `${Math.round(value)} ms`;

interface Round {
  total: number;
  provider: number;
  clone: number;
  scan: number;
  job: number;
  newFindings: number;
}

async function writeCheckout(files: Record<string, string>, change: Record<string, string>): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'aegis-pr-bench-checkout-'));
  const write = async (all: Record<string, string>) => {
    for (const [path, content] of Object.entries(all)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), content);
    }
  };
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, '-c', 'user.name=Bench', '-c', 'user.email=bench@example.com', ...args], { stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  await write(files);
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  await write(change);
  git('add', '-A');
  git('commit', '-q', '-m', 'head');
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** `aegis scan <type> --local --diff-base HEAD~1` in this process; the new findings it reported. */
async function cliDiffScan(dir: string, scanType: 'secrets' | 'sast'): Promise<number> {
  let out = '';
  const io: ScanIo = { stdout: (t) => void (out += t), stderr: () => undefined, stderrIsTty: false };
  const code = await scanCommand(scanType, dir, { local: true, diffBase: 'HEAD~1', format: 'json', quiet: true, failOn: 'none' }, {}, io);
  if (code === 2) throw new Error(`aegis scan ${scanType} failed`);
  return (JSON.parse(out) as { findings: unknown[] }).findings.length;
}

async function baseline(files: Record<string, string>): Promise<{ ms: number; newFindings: number }> {
  const { dir, cleanup } = await writeCheckout(files, headChange(files, 0));
  try {
    await cliDiffScan(dir, 'secrets'); // loads and compiles the rules, as a warm check thread has
    await cliDiffScan(dir, 'sast');
    const times: number[] = [];
    let found = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const started = performance.now();
      found = (await cliDiffScan(dir, 'secrets')) + (await cliDiffScan(dir, 'sast'));
      times.push(performance.now() - started);
    }
    return { ms: median(times), newFindings: found };
  } finally {
    await cleanup();
  }
}

async function main(): Promise<void> {
  const files = repositoryFiles();
  const bytes = Object.values(files).reduce((sum, text) => sum + Buffer.byteLength(text), 0);
  console.log(`repository: ${Object.keys(files).length} files, ${(bytes / 1024 / 1024).toFixed(1)} MB; ${ROUNDS} rounds`);

  const github = await startGithubStandIn();
  const scratch = await createScratchDatabase();
  const dataDir = await mkdtemp(join(tmpdir(), 'aegis-pr-bench-data-'));
  const key = generateKey();
  const server = await startServer({
    ...loadConfig({ host: '127.0.0.1', port: '0', dataDir }, {}),
    databaseUrl: scratch?.url,
    bootstrapApiKey: key,
    logLevel: 'warn',
    shieldEnabled: false,
    allowLocalSources: true,
    allowPrivateTargets: true,
    rateLimitPerMinute: 1_000_000,
    warmScanThreads: true,
    providers: { ...loadProviderSettings({}), github: github.settings },
  });
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(server.url + path, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  try {
    console.log(`database: ${scratch ? 'PostgreSQL (scratch)' : 'embedded'}`);
    // OAuth: the stand-in's authorize page approves at once and sends the browser to the callback.
    const started = await call<{ authorize_url: string; integration: { id: string } }>('POST', '/api/v1/integrations/github/connect', {});
    const approved = await fetch(started.authorize_url, { redirect: 'manual' });
    const callback = await fetch(approved.headers.get('location') ?? '', { redirect: 'manual' });
    if (approved.status !== 302 || callback.status !== 303) throw new Error(`OAuth connect: authorize ${approved.status}, callback ${callback.status} ${await callback.text()}`);
    const webhook = await call<{ url: string; secret: string }>('POST', `/api/v1/integrations/${started.integration.id}/webhook-secret`);
    const integration = { id: started.integration.id, webhook };
    const repository = await github.createRepository(OWNER, NAME, files, { private: true });
    const base = repository.branches.get('main')!;
    // Let the warm-up thread load the scanners, as on a server started a moment ago.
    await new Promise((resolve) => setTimeout(resolve, 5_000));

    const runRound = async (round: number): Promise<Round> => {
      const branch = `feature-${round}`;
      const head = await github.commit(OWNER, NAME, branch, headChange(files, round));
      const started = performance.now();
      const sent = await github.sendPullRequestEvent(integration.webhook.url, integration.webhook.secret, { owner: OWNER, repo: NAME, number: round + 1, action: 'opened', headSha: head, baseSha: base, headRef: branch, baseRef: 'main' });
      if (sent.status !== 202) throw new Error(`delivery answered ${sent.status}: ${sent.body}`);
      for (;;) {
        if (github.checkRuns.some((c) => c.headSha === head && c.status === 'completed')) break;
        if (performance.now() - started > 120_000) throw new Error('no completed check run after 120 s');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const total = performance.now() - started;
      // The row is written last (after the comment): wait for it to read the job's timings.
      let row: { summary: Record<string, unknown>; status: string } | undefined;
      while (row?.status !== 'completed') {
        row = await server.database.db.selectFrom('pull_request_checks').select(['summary', 'status']).where('head_sha', '=', head).executeTakeFirst();
        if (row?.status === 'failed') throw new Error('the check failed');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const summary = row.summary as { new: number; timings: { provider_ms: number; clone_ms: number; scan_ms: number; total_ms: number } };
      return { total, provider: summary.timings.provider_ms, clone: summary.timings.clone_ms, scan: summary.timings.scan_ms, job: summary.timings.total_ms, newFindings: summary.new };
    };

    const first = await runRound(0);
    console.log(`first check (cold caches): ${ms(first.total)} (scan ${ms(first.scan)}, clone ${ms(first.clone)}, provider ${ms(first.provider)})`);
    const rounds: Round[] = [];
    for (let i = 1; i <= ROUNDS; i++) rounds.push(await runRound(i));
    const m = (pick: (r: Round) => number) => median(rounds.map(pick));
    const total = m((r) => r.total);
    console.log(
      `pull-request check, event → check run completed: median ${ms(total)} over ${ROUNDS} rounds  target ≤ ${TARGET_MS / 1000} s ${total <= TARGET_MS ? 'PASS' : 'ABOVE TARGET'}\n` +
        `  scanning (head ‖ base, secrets + sast + sca): ${ms(m((r) => r.scan))}\n` +
        `  cloning (head ‖ base):                        ${ms(m((r) => r.clone))}\n` +
        `  provider calls (create, update, comment):     ${ms(m((r) => r.provider))}\n` +
        `  rest (delivery, queue wait, database):        ${ms(total - m((r) => r.job))}\n` +
        `  new findings reported: ${rounds.map((r) => r.newFindings).join(', ')}`,
    );
    const cli = await baseline(files);
    console.log(`baseline, aegis scan secrets + sast --local --diff-base (same repository, in process): median ${ms(cli.ms)} (${cli.newFindings} new findings); check / baseline = ${(total / cli.ms).toFixed(2)}`);
    if (github.rejected.length > 0) console.log(`stand-in rejected: ${github.rejected.join('; ')}`);
  } finally {
    await server.close();
    await scratch?.drop();
    await github.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
