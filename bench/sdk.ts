// Listing 10 000 IP access rules through each SDK's auto-pagination iterator, against raw HTTP
// paging written by hand in the same language, in the same process and the same run (target: the
// SDK at ≥ 0.9 of raw throughput). One real server (embedded database, budgets out of the way)
// holds one site with 10 000 rules, imported by CSV; each language's bench program
// (sdks/<language>/bench/…) alternates raw and SDK rounds and prints its times as one JSON line.
//   npm run bench:sdk        BENCH_ROUNDS=5 BENCH_LANGUAGES=node,python,go
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKey } from '../api/accounts/keys/key-material.ts';
import { loadConfig } from '../api/config.ts';
import { startServer } from '../api/server.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const RULES = 10_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const LANGUAGES = (process.env.BENCH_LANGUAGES ?? 'node,python,go').split(',');
const TARGET = 0.9;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

interface Program {
  language: string;
  command: string;
  args: string[];
  cwd: string;
  /** Why it cannot run here, if it cannot. */
  missing?: string;
}

function available(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Debian's python3 carries pytest and the rest; a pyenv one first on PATH may not, but any 3.9+ runs the SDK. */
const python = process.env.AEGIS_PYTHON ?? 'python3';

const PROGRAMS: Program[] = [
  { language: 'node', command: process.execPath, args: [join(ROOT, 'bin/run-ts.mjs'), join(ROOT, 'sdks/node/bench/list-ip-rules.ts')], cwd: ROOT },
  { language: 'python', command: python, args: [join(ROOT, 'sdks/python/bench/list_ip_rules.py')], cwd: join(ROOT, 'sdks/python'), ...(available(python, ['--version']) ? {} : { missing: `${python} not found` }) },
  { language: 'go', command: 'go', args: ['run', './bench/listiprules'], cwd: join(ROOT, 'sdks/go'), ...(available('go', ['version']) ? {} : { missing: 'go not found (apt-get install golang-go)' }) },
];

function run(program: Program, env: NodeJS.ProcessEnv): Promise<{ items: number; raw_ms: number[]; sdk_ms: number[] }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(program.command, program.args, { cwd: program.cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`${program.language} bench exited with ${code}`));
      const line = out.trim().split('\n').pop() ?? '';
      try {
        resolvePromise(JSON.parse(line) as { items: number; raw_ms: number[]; sdk_ms: number[] });
      } catch {
        reject(new Error(`${program.language} bench printed no JSON line: ${out.slice(-500)}`));
      }
    });
  });
}

const dataDir = await mkdtemp(join(tmpdir(), 'aegis-bench-sdk-'));
const apiKey = generateKey();
const server = await startServer({
  ...loadConfig({ host: '127.0.0.1', port: '0', dataDir }, {}),
  shieldEnabled: false,
  bootstrapApiKey: apiKey,
  logLevel: 'silent',
  // The budget would otherwise be the first thing measured.
  rateLimitPerMinute: 1_000_000,
});
try {
  const headers = { authorization: `Bearer ${apiKey}` };
  const site = (await (
    await fetch(`${server.url}/api/v1/shield/sites`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ domain: 'bench-sdk.example.com', origin_url: 'http://127.0.0.1:9', mode: 'block' }),
    })
  ).json()) as { id: string };
  const csv = ['type,value,action,note', ...Array.from({ length: RULES }, (_, i) => `ip,10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255},deny,bench ${i}`)].join('\n');
  const imported = await fetch(`${server.url}/api/v1/shield/sites/${site.id}/ip-access/import`, { method: 'POST', headers: { ...headers, 'content-type': 'text/csv' }, body: csv });
  if (imported.status !== 201) throw new Error(`import answered ${imported.status}: ${await imported.text()}`);

  const env = { AEGIS_API_URL: server.url.replace('//localhost:', '//127.0.0.1:'), AEGIS_API_KEY: apiKey, AEGIS_BENCH_SITE_ID: site.id, AEGIS_BENCH_ROUNDS: String(ROUNDS) };
  console.log(`listing ${RULES} IP rules (limit 200, ${RULES / 200} pages), ${ROUNDS} rounds each, medians; ratio = SDK throughput / raw throughput (target ≥ ${TARGET})`);
  console.log('language  raw ms   SDK ms   ratio');
  let failed = false;
  for (const program of PROGRAMS.filter((p) => LANGUAGES.includes(p.language))) {
    if (program.missing) {
      console.log(`${program.language.padEnd(8)}  not run: ${program.missing}`);
      continue;
    }
    const result = await run(program, env);
    if (result.items !== RULES) throw new Error(`${program.language}: listed ${result.items} rules, expected ${RULES}`);
    const raw = median(result.raw_ms);
    const sdk = median(result.sdk_ms);
    const ratio = raw / sdk;
    if (ratio < TARGET) failed = true;
    console.log(`${program.language.padEnd(8)}  ${raw.toFixed(1).padStart(6)}  ${sdk.toFixed(1).padStart(7)}  ${ratio.toFixed(2).padStart(6)}${ratio < TARGET ? '  below target' : ''}`);
  }
  if (failed) process.exitCode = 1;
} finally {
  await server.close();
  await rm(dataDir, { recursive: true, force: true });
}
