// What a signed-in person costs against an API key, and how long a magic link takes to arrive.
//   1. Throughput of GET /api/v1/me with the session cookie and with an API key, on the same
//      server in the same run, in alternating rounds (cookie, key, key, cookie, ...) so both see
//      the same machine state; prints the ratio cookie/key (target >= 0.9).
//   2. Magic-link latency: N sequential POST /auth/login, each timed from sending the request
//      until a real SMTP server (test/support/smtp.ts) has accepted the mail; p50/p95.
// The API runs in a child process (bench/servers/aegis.ts, as `aegis serve` starts it), so
// autocannon and the SMTP server here never compete with it for an event loop. Runs on the
// embedded database, then on PostgreSQL (a scratch database on BENCH_DATABASE_URL, DATABASE_URL
// or the local server) when one is reachable.
//   npm run bench:auth   BENCH_ROUNDS=3  BENCH_DURATION=5 (seconds per round and kind)
//                        BENCH_CONNECTIONS=50  BENCH_LINKS=50  BENCH_DATABASE=both|embedded|postgres
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { generateKey } from '../api/accounts/keys/key-material.ts';
import { startSmtpServer, linkIn, type SmtpCapture } from '../test/support/smtp.ts';
import { createScratchDatabase, type ScratchDatabase } from './support/scratch-database.ts';

const TARGET_RATIO = 0.9;
const WARMUP_SECONDS = 2;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SESSION_COOKIE = '__Host-aegis_session';

function positiveEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return n;
}
const rounds = positiveEnv('BENCH_ROUNDS', 3);
const duration = positiveEnv('BENCH_DURATION', 5);
const connections = positiveEnv('BENCH_CONNECTIONS', 50);
const links = positiveEnv('BENCH_LINKS', 50);
const databases = process.env.BENCH_DATABASE ?? 'both';
if (!['both', 'embedded', 'postgres'].includes(databases)) throw new Error(`BENCH_DATABASE must be both, embedded or postgres, got "${databases}"`);

const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

/** Starts bench/servers/aegis.ts and resolves with its base URL once it prints {"port": N}. */
function startAegis(env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/run-ts.mjs'), join(ROOT, 'bench/servers/aegis.ts')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => {
      clearTimeout(timer);
      reject(err);
    };
    const timer = setTimeout(() => fail(new Error('aegis server did not report a port within 60 s')), 60_000);
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => fail(new Error(`aegis server exited early (code ${code}, signal ${signal})`));
    child.once('exit', onExit);
    child.once('error', fail);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const { port } = JSON.parse(line) as { port?: unknown };
        if (typeof port !== 'number') return;
        clearTimeout(timer);
        child.off('exit', onExit);
        // localhost: the public URL the server puts in its links is http://localhost:<port>.
        resolve(`http://localhost:${port}`);
      } catch {
        // not the port line
      }
    });
  });
}

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
    for (const fn of cleanups.reverse()) await fn().catch((err: unknown) => console.error(err));
  })();
  return cleaned;
}

/** A distinct client address per sign-in (the server trusts X-Forwarded-For from 127.0.0.1), so the per-IP link budget never interferes. */
let nextClient = 0;
const clientIp = () => {
  nextClient += 1;
  return `10.77.${Math.floor(nextClient / 250)}.${(nextClient % 250) + 1}`;
};

async function signIn(url: string, smtp: SmtpCapture, email: string): Promise<string> {
  const ip = clientIp();
  const since = Date.now();
  const asked = await fetch(`${url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': ip }, body: JSON.stringify({ email }) });
  if (asked.status !== 202) throw new Error(`POST /auth/login: ${asked.status} ${await asked.text()}`);
  const mail = await smtp.waitFor(email, (m) => m.text.includes('/auth/magic'), since);
  const token = new URL(linkIn(mail, `${url}/auth/magic`)).searchParams.get('token');
  const used = await fetch(`${url}/auth/magic`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip, 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' },
    body: JSON.stringify({ token }),
  });
  const cookie = adoptCookie(used.headers);
  if (used.status !== 200 || !cookie) throw new Error(`POST /auth/magic: ${used.status} ${await used.text()}`);
  return cookie;
}

function adoptCookie(headers: Headers): string | undefined {
  for (const line of headers.getSetCookie()) {
    const match = new RegExp(`^${SESSION_COOKIE}=([^;]+)`).exec(line);
    if (match?.[1]) return match[1];
  }
  return undefined;
}

interface Run {
  requests: number;
  seconds: number;
  latencies: number[];
  non2xx: number;
  errors: number;
}

function load(url: string, headers: Record<string, string>, seconds: number): Promise<autocannon.Result> {
  return autocannon({ url: `${url}/api/v1/me`, headers, connections, duration: seconds });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
};

interface DatabaseResult {
  database: string;
  cookie: Run;
  key: Run;
  ratio: number;
  roundRatios: number[];
  mail: number[];
  answer: number[];
}

async function benchOne(label: string, scratch: ScratchDatabase | undefined, smtp: SmtpCapture): Promise<DatabaseResult> {
  const dataDir = await mkdtemp(join(tmpdir(), 'aegis-bench-auth-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const apiKey = generateKey();
  const url = await startAegis({
    ...process.env,
    DATABASE_URL: scratch?.url ?? '',
    AEGIS_DATA_DIR: dataDir,
    AEGIS_BOOTSTRAP_API_KEY: apiKey,
    AEGIS_PUBLIC_URL: '',
    SMTP_URL: smtp.url,
    AEGIS_TRUSTED_PROXIES: '127.0.0.1',
    // What is measured is authentication, not the per-caller budgets (600/min for a session would
    // turn the load into 429s within a second).
    AEGIS_RATE_LIMIT_PER_MINUTE: '10000000',
    AEGIS_SESSION_RATE_LIMIT_PER_MINUTE: '10000000',
  });

  let cookie = await signIn(url, smtp, `bench-${label}@example.com`);
  const byKind = { cookie: { requests: 0, seconds: 0, latencies: [] as number[], non2xx: 0, errors: 0 }, key: { requests: 0, seconds: 0, latencies: [] as number[], non2xx: 0, errors: 0 } };
  const headersFor = (kind: 'cookie' | 'key'): Record<string, string> => (kind === 'cookie' ? { cookie: `${SESSION_COOKIE}=${cookie}` } : { authorization: `Bearer ${apiKey}` });

  /** One request first (a wrong cookie fails in a second); takes a re-issued cookie as a browser would (the cookie slides after 60 s). */
  async function probe(kind: 'cookie' | 'key'): Promise<void> {
    const res = await fetch(`${url}/api/v1/me`, { headers: headersFor(kind) });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${label} ${kind}: GET /api/v1/me answered ${res.status}: ${text}`);
    if (kind === 'cookie') cookie = adoptCookie(res.headers) ?? cookie;
  }

  console.error(`${label}: warming up ${WARMUP_SECONDS} s per kind, then ${rounds} rounds of ${duration} s per kind, ${connections} connections`);
  for (const kind of ['cookie', 'key'] as const) {
    await probe(kind);
    await load(url, headersFor(kind), WARMUP_SECONDS);
  }
  const roundRatios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? (['cookie', 'key'] as const) : (['key', 'cookie'] as const);
    const perRound: Record<string, number> = {};
    for (const kind of order) {
      await probe(kind);
      const r = await load(url, headersFor(kind), duration);
      const run = byKind[kind];
      run.requests += r['2xx'];
      run.seconds += r.duration;
      run.latencies.push(r.latency.p50);
      run.non2xx += r.non2xx;
      run.errors += r.errors;
      perRound[kind] = r['2xx'] / r.duration;
      if (r['2xx'] < (r['2xx'] + r.non2xx) / 2) throw new Error(`${label} ${kind}: only ${r['2xx']} of ${r['2xx'] + r.non2xx} responses were 2xx (${JSON.stringify(r.statusCodeStats)})`);
    }
    roundRatios.push(perRound.cookie! / perRound.key!);
    console.error(`${label}: round ${round + 1}: cookie ${perRound.cookie!.toFixed(0)} req/s, key ${perRound.key!.toFixed(0)} req/s`);
  }

  // Magic links: sequential, a new address and client each time (the budgets are per address and IP).
  const mail: number[] = [];
  const answer: number[] = [];
  for (let i = 0; i < links; i++) {
    const email = `latency-${label}-${i}@example.com`;
    const started = Date.now();
    const t0 = performance.now();
    const res = await fetch(`${url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() }, body: JSON.stringify({ email }) });
    await res.text();
    answer.push(performance.now() - t0);
    if (res.status !== 202) throw new Error(`POST /auth/login ${email}: ${res.status}`);
    const received = await smtp.waitFor(email, () => true, started);
    mail.push(received.receivedAt - started);
  }

  await stopChild(children[children.length - 1]!);
  const perSecond = (run: Run) => run.requests / run.seconds;
  return { database: label, cookie: byKind.cookie, key: byKind.key, ratio: perSecond(byKind.cookie) / perSecond(byKind.key), roundRatios, mail, answer };
}

function report(results: DatabaseResult[]): void {
  const row = (cells: (string | number)[], widths: number[]) => console.log(cells.map((c, i) => String(c)[i === 0 ? 'padEnd' : 'padStart'](widths[i]!)).join(' '));
  const w1 = [22, 10, 12, 9, 9];
  console.log(`\nGET /api/v1/me, ${connections} connections, ${rounds} x ${duration} s per kind, alternating\n`);
  row(['database / credential', 'req/s', 'p50 ms (med)', 'non-2xx', 'errors'], w1);
  for (const r of results) {
    for (const kind of ['cookie', 'key'] as const) {
      const run = r[kind];
      row([`${r.database} / ${kind === 'cookie' ? 'session cookie' : 'API key'}`, (run.requests / run.seconds).toFixed(0), median(run.latencies), run.non2xx, run.errors], w1);
    }
  }
  console.log('');
  for (const r of results) {
    const verdict = r.ratio >= TARGET_RATIO ? 'PASS' : 'BELOW TARGET';
    console.log(`${r.database}: ratio cookie/key ${r.ratio.toFixed(2)} (rounds ${r.roundRatios.map((x) => x.toFixed(2)).join(', ')}; target >= ${TARGET_RATIO}) ${verdict}`);
  }
  const w2 = [22, 8, 8, 8, 8];
  console.log(`\nMagic link, ${links} sequential POST /auth/login: ms until the SMTP server accepted the mail (and until the HTTP answer)\n`);
  row(['database', 'mail p50', 'mail p95', 'http p50', 'http p95'], w2);
  for (const r of results) row([r.database, percentile(r.mail, 50).toFixed(0), percentile(r.mail, 95).toFixed(0), percentile(r.answer, 50).toFixed(1), percentile(r.answer, 95).toFixed(1)], w2);
}

async function main(): Promise<void> {
  const smtp = await startSmtpServer();
  cleanups.push(() => smtp.close());
  const results: DatabaseResult[] = [];
  if (databases !== 'postgres') results.push(await benchOne('embedded', undefined, smtp));
  if (databases !== 'embedded') {
    const scratch = await createScratchDatabase();
    if (!scratch) console.log('PostgreSQL skipped: no server reachable (set BENCH_DATABASE_URL)');
    else {
      cleanups.push(() => scratch.drop());
      results.push(await benchOne('postgres', scratch, smtp));
    }
  }
  report(results);
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
