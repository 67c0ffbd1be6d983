// Throughput of authenticated GET /api/v1/me against a bare Fastify route, measured in one run so
// both numbers see the same machine. Each server runs in its own child process, so autocannon
// (here) never competes with the server under test for an event loop.
//   npm run bench:api        BENCH_DURATION=8 (seconds)  BENCH_CONNECTIONS=50
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { generateKey } from '../api/accounts/keys/key-material.ts';

const TARGET_RATIO = 0.4;
const WARMUP_SECONDS = 2;
const ROOT = fileURLToPath(new URL('..', import.meta.url));

function positiveEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return n;
}
const duration = positiveEnv('BENCH_DURATION', 8);
const connections = positiveEnv('BENCH_CONNECTIONS', 50);

const children: ChildProcess[] = [];
const tempDirs: string[] = [];

/** Starts bench/servers/<name>.ts and resolves with its base URL once it prints {"port": N}. */
function startChild(name: string, env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/run-ts.mjs'), join(ROOT, 'bench/servers', `${name}.ts`)], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => {
      clearTimeout(timer);
      reject(err);
    };
    const timer = setTimeout(() => fail(new Error(`${name} server did not report a port within 60 s`)), 60_000);
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => fail(new Error(`${name} server exited early (code ${code}, signal ${signal})`));
    child.once('exit', onExit);
    child.once('error', fail);
    // readline keeps draining stdout afterwards, so a chatty child can never block on a full pipe.
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const { port } = JSON.parse(line) as { port?: unknown };
        if (typeof port !== 'number') return;
        clearTimeout(timer);
        child.off('exit', onExit);
        resolve(`http://127.0.0.1:${port}`);
      } catch {
        // not the port line
      }
    });
  });
}

/** SIGTERM (lets the aegis child close its database), then SIGKILL if it lingers. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

let cleaned: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaned ??= (async () => {
    await Promise.all(children.map(stopChild));
    await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
  })();
  return cleaned;
}

function load(url: string, headers: Record<string, string>, seconds: number): Promise<autocannon.Result> {
  return autocannon({ url: `${url}/api/v1/me`, headers, connections, duration: seconds });
}

/** Warm-up (JIT, caches, connection pools), then the measured run; refuses a run that was mostly errors. */
async function measure(name: string, url: string, headers: Record<string, string>): Promise<autocannon.Result> {
  // One request first: a wrong key or route should fail in a second, not after ten.
  const probe = await fetch(`${url}/api/v1/me`, { headers });
  const text = await probe.text();
  if (probe.status !== 200) throw new Error(`${name}: GET /api/v1/me answered ${probe.status}: ${text}`);
  console.error(`${name}: response body ${Buffer.byteLength(text)} bytes; warming up ${WARMUP_SECONDS} s, measuring ${duration} s`);
  await load(url, headers, WARMUP_SECONDS);
  const result = await load(url, headers, duration);
  const total = result['2xx'] + result.non2xx;
  if (total === 0 || result['2xx'] < total / 2) {
    throw new Error(`${name}: only ${result['2xx']} of ${total} responses were 2xx (status counts ${JSON.stringify(result.statusCodeStats)}, errors ${result.errors})`);
  }
  if (result.non2xx > 0 || result.errors > 0) console.error(`${name}: warning: ${result.non2xx} non-2xx responses, ${result.errors} errors`);
  return result;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'aegis-bench-'));
  tempDirs.push(dataDir);
  const key = generateKey();
  const [bareUrl, aegisUrl] = await Promise.all([
    startChild('bare', process.env),
    startChild('aegis', { ...process.env, AEGIS_DATA_DIR: dataDir, AEGIS_BOOTSTRAP_API_KEY: key }),
  ]);

  // Sequential, never overlapping: the idle server costs nothing while the other is measured.
  const bare = await measure('bare', bareUrl, {});
  const aegis = await measure('aegis', aegisUrl, { authorization: `Bearer ${key}` });

  const row = (cells: (string | number)[]) => console.log(cells.map((c, i) => String(c)[i === 0 ? 'padEnd' : 'padStart'](i === 0 ? 8 : 11)).join(' '));
  console.log(`\nGET /api/v1/me, ${connections} connections, ${duration} s each\n`);
  row(['target', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx']);
  for (const [name, r] of [['bare', bare], ['aegis', aegis]] as const) {
    row([name, r.requests.average.toFixed(0), r.latency.p50, r.latency.p99, r.non2xx]);
  }
  const ratio = aegis.requests.average / bare.requests.average;
  console.log(`\nratio aegis/bare: ${ratio.toFixed(2)} (target >= ${TARGET_RATIO}) ${ratio >= TARGET_RATIO ? 'PASS' : 'BELOW TARGET'}`);
}

process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));
try {
  await main();
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await cleanup();
}
