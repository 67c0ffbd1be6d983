// Throughput and latency of the Shield gateway against a bare Node proxy and nginx `proxy_pass`,
// all in front of the same nginx origin, measured with wrk on loopback in one run:
//
//   bare      node:http + an undici pool, no decisions: the ceiling for a Node proxy
//   no rules  the gateway in front of a site without rules (managed rules off)
//   full      the gateway with 10 000 IP rules + 1 000 virtual patches + 100 rate limits
//   managed   the same full site with managed rules on at paranoia level 1
//   nginx     Debian nginx proxy_pass with upstream keep-alive
//   modsec    Debian nginx with ModSecurity v3 and the OWASP CRS (paranoia 1, blocking), when
//             libnginx-mod-http-modsecurity and modsecurity-crs are installed
// Every target serves two kinds of request: a GET with query parameters, and a POST of a small JSON
// order (the gateway reads and inspects its body when managed rules are on).
//
// Workers (issue 19): the same full-rules GET through `aegis shield --workers 1` and `--workers N`
// (N = os.availableParallelism(); separate processes on PostgreSQL, so only with BENCH_DATABASE_URL),
// and through nginx proxy_pass with worker_processes 1 and N. These rows run unpinned (every process
// may use every core, wrk with N threads), since scaling is what they measure; on a small machine the
// load generator and the origin share the cores with the proxy, so expect modest gains. Rate limits
// across the Aegis workers go through the primary (IPC) and, with BENCH_REDIS_URL, through Redis too.
//
// TLS (issue 41): the gateway's no-rules site over HTTPS (wrk, keep-alive) and h2 (h2load), and new
// connections with a full TLS handshake each (wrk, one request per connection), beside an nginx
// proxy_pass that terminates TLS with the same certificate and the gateway's protocol settings, plus
// the plain-HTTP figure of each, in one set of interleaved rounds. Here nginx runs on core 0 like
// the gateway, so neither server shares its core with the load generator's TLS work (see
// support/shield-tls.ts for how SNI and full handshakes are arranged). Targets: HTTPS / HTTP of the
// gateway ≥ nginx's − 0.1 (and the same for h2 / HTTP), new TLS connections per second within 2× of nginx's.
//
// Targets: no rules ≥ 85 % of bare; full ≥ 85 % of no rules; managed rules cost ≤ 25 % of the
// full site's throughput (managed / full ≥ 0.75); added p50 at one connection ≤ 0.5 ms; event-loop
// p99 ≤ 20 ms while hostile inputs hit a catastrophic-backtracking pattern. Also reports how long a
// rule written through the API takes to reach the gateway.
//
// On a machine with two cores or more and `taskset`, this process (every proxy under test written
// in Node) runs on core 0 and nginx (origin, proxy_pass, ModSecurity) and wrk on core 1, so the
// Node targets do not fight the load generator for a core and rounds vary less (BENCH_PIN=0: no
// pinning). nginx then shares its core with wrk, which flatters no one.
//   npm run bench:shield     BENCH_SECONDS=5 BENCH_ROUNDS=3 BENCH_CONNECTIONS=50 BENCH_PIN=1
//   BENCH_DATABASE_URL=postgres://… BENCH_REDIS_URL=redis://… npm run bench:shield   (with the worker rows)
//   BENCH_ONLY=workers …     only the worker rows (and the set-up they need)
//   BENCH_ONLY=tls …         only the TLS rows
//   BENCH_ONLY=record …      only the full-rules GET with and without the traffic record
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Pool, request } from 'undici';
import { generateKey } from '../api/accounts/keys/key-material.ts';
import { loadConfig } from '../api/config.ts';
import { startServer } from '../api/server.ts';
import { freePort, nginxConf, startNginx, startNginxProxy } from './support/nginx.ts';
import { fullHandshakeConf, h2load, loopbackScript, makeBenchCertificate, nginxTlsServer, servedFingerprint, type BenchCertificate } from './support/shield-tls.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const BODY = `${'Aegis bench origin. '.repeat(13)}\n`; // 261 bytes, as in the notes' measurements
const PIN = process.env.BENCH_PIN !== '0' && availableParallelism() >= 2 && existsSync('/usr/bin/taskset');
/** The command line of a helper process, on core 1 when pinning. */
const onCore1 = (cmd: string, args: string[]): [string, string[]] => (PIN ? ['taskset', ['-c', '1', cmd, ...args]] : [cmd, args]);
const CORES = availableParallelism();
/** The command line of a process free to use every core (this process's pinning is inherited otherwise). */
const anyCore = (cmd: string, args: string[]): [string, string[]] => (PIN ? ['taskset', ['-c', `0-${CORES - 1}`, cmd, ...args]] : [cmd, args]);
/** The command line of a process on core 0, beside this one (nginx terminating TLS, to match the gateway). */
const onCore0 = (cmd: string, args: string[]): [string, string[]] => (PIN ? ['taskset', ['-c', '0', cmd, ...args]] : [cmd, args]);
const ONLY_WORKERS = process.env.BENCH_ONLY === 'workers';
const ONLY_TLS = process.env.BENCH_ONLY === 'tls';
const ONLY_RECORD = process.env.BENCH_ONLY === 'record';
/** The domain of the gateway's no-rules site, and the name on the certificate it and nginx serve. */
const TLS_DOMAIN = 'plain.bench.test';

interface WrkResult {
  rps: number;
  p50ms: number;
  p99ms: number;
}

function run(cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { maxBuffer: 16 * 1024 * 1024, env: env ? { ...process.env, ...env } : process.env }, (err, stdout, stderr) => (err ? reject(new Error(`${cmd}: ${stderr || err.message}`)) : resolve(stdout)));
  });
}

const ms = (value: string, unit: string): number => Number(value) * ({ us: 0.001, ms: 1, s: 1000 }[unit] ?? 1);

/** wrk; `extra.headers` are more request headers, `extra.env` wrk's environment (OPENSSL_CONF). */
async function wrk(url: string, host: string, connections: number, seconds: number, script?: string, threads = 1, extra: { headers?: string[]; env?: NodeJS.ProcessEnv } = {}): Promise<WrkResult> {
  const headers = [`Host: ${host}`, ...(extra.headers ?? [])].flatMap((header) => ['-H', header]);
  const args = [`-t${threads}`, `-c${connections}`, `-d${seconds}s`, '--latency', ...headers, ...(script ? ['-s', script] : []), url];
  const out = await run(...(threads === 1 ? onCore1('wrk', args) : anyCore('wrk', args)), extra.env);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const p50 = /50%\s+([\d.]+)(us|ms|s)/.exec(out);
  const p99 = /99%\s+([\d.]+)(us|ms|s)/.exec(out);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  if (non2xx) throw new Error(`wrk against ${host}: ${non2xx[1]} non-2xx responses`);
  // A refused TLS handshake is a socket error, not a response: no requests at all.
  if (!(rps > 0)) throw new Error(`wrk against ${host} (${url}): no answers\n${out}`);
  return { rps, p50ms: p50 ? ms(p50[1]!, p50[2]!) : NaN, p99ms: p99 ? ms(p99[1]!, p99[2]!) : NaN };
}

/**
 * nginx proxy_pass in front of the shared origin on a plain port and a TLS port (HTTP/1.1 and h2)
 * with `cert`, one worker on core 0, as the gateway in this process.
 */
async function startNginxEdge(dir: string, origin: number, cert: BenchCertificate): Promise<{ plain: number; tls: number; process: ChildProcess }> {
  const plain = await freePort();
  const tls = await freePort();
  const own = join(dir, 'edge');
  const conf = nginxConf({ own, workers: 1, origin, servers: nginxTlsServer({ plainPort: plain, tlsPort: tls, cert }) });
  await writeFile(`${own}.conf`, conf);
  const child = spawn(...onCore0('nginx', ['-p', dir, '-c', `${own}.conf`]), { stdio: 'ignore' });
  for (let i = 0; i < 50; i++) {
    try {
      await fetch(`http://127.0.0.1:${plain}/`);
      return { plain, tls, process: child };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error('nginx terminating TLS did not start');
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * The TLS rows (see the header): for the gateway (its plain port `gatewayPort`, TLS port `tlsPort`)
 * and an nginx with the same certificate, plain HTTP/1.1, HTTPS/1.1 and h2 at CONNECTIONS requests
 * in flight, and new connections with a full handshake each; interleaved rounds, medians.
 */
async function measureTls(input: { dir: string; origin: number; gatewayPort: number; tlsPort: number; cert: BenchCertificate; path: string }): Promise<void> {
  const edge = await startNginxEdge(input.dir, input.origin, input.cert);
  try {
    for (const [label, port] of [['gateway', input.tlsPort], ['nginx', edge.tls]] as const) {
      if ((await servedFingerprint(port, TLS_DOMAIN, input.cert)) !== input.cert.fingerprint) throw new Error(`${label} does not serve the bench certificate for ${TLS_DOMAIN}`);
    }
    const loopback = await loopbackScript(input.dir);
    const fullHandshakes = { headers: ['Connection: close'], env: { OPENSSL_CONF: await fullHandshakeConf(input.dir) } };
    // h2: the same number of requests in flight as wrk's connections, 10 streams per connection.
    const clients = Math.max(1, Math.round(CONNECTIONS / 10));
    const streams = Math.max(1, Math.round(CONNECTIONS / clients));
    interface Row {
      label: string;
      measure: (seconds: number) => Promise<{ rps: number; latencyMs: number }>;
    }
    const rows: Row[] = [];
    // The h2 rows need h2load (Debian nghttp2-client); without it they are left out, not failed.
    const withH2 = !spawnSync('h2load', ['--version']).error;
    if (!withH2) console.log('h2load not installed (apt-get install nghttp2-client): skipping the h2 rows');
    for (const [name, plain, tls] of [['aegis', input.gatewayPort, input.tlsPort], ['nginx', edge.plain, edge.tls]] as const) {
      const https = `https://${TLS_DOMAIN}:${tls}${input.path}`;
      const p99 = (result: WrkResult) => ({ rps: result.rps, latencyMs: result.p99ms });
      rows.push(
        { label: `${name} HTTP/1.1`, measure: async (seconds) => p99(await wrk(`http://127.0.0.1:${plain}${input.path}`, TLS_DOMAIN, CONNECTIONS, seconds)) },
        { label: `${name} HTTPS/1.1`, measure: async (seconds) => p99(await wrk(https, TLS_DOMAIN, CONNECTIONS, seconds, loopback)) },
        ...(withH2
          ? [
              {
                label: `${name} h2`,
                measure: async (seconds: number) => {
                  const result = await h2load(onCore1, { name: TLS_DOMAIN, port: tls, path: input.path, clients, streams, seconds });
                  return { rps: result.rps, latencyMs: result.meanMs };
                },
              },
            ]
          : []),
        { label: `${name} new TLS conns`, measure: async (seconds) => p99(await wrk(https, TLS_DOMAIN, CONNECTIONS, seconds, loopback, 1, fullHandshakes)) },
      );
    }
    console.log(
      `\nTLS: ${TLS_DOMAIN} (no rules) and nginx proxy_pass with the same ECDSA P-256 certificate, both on core 0; ${ROUNDS} interleaved rounds × ${SECONDS} s (medians)\n` +
        `  HTTP/1.1, HTTPS/1.1: wrk -c${CONNECTIONS} keep-alive; h2: h2load -c${clients} -m${streams}; new TLS conns: wrk -c${CONNECTIONS}, one request per connection, full TLS 1.2 handshakes`,
    );
    for (const row of rows) await row.measure(2); // warm-up
    const results = new Map<string, { rps: number; latencyMs: number }[]>(rows.map((row) => [row.label, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const row of rows) results.get(row.label)!.push(await row.measure(SECONDS));
    }
    const rps = new Map<string, number>();
    for (const [label, list] of results) {
      rps.set(label, median(list.map((x) => x.rps)));
      const latency = label.endsWith(' h2') ? `mean ${median(list.map((x) => x.latencyMs)).toFixed(2)} ms` : `p99 ${median(list.map((x) => x.latencyMs)).toFixed(2)} ms`;
      const unit = label.endsWith('conns') ? 'conn/s' : 'req/s ';
      console.log(`${label.padEnd(20)} ${Math.round(rps.get(label)!).toString().padStart(7)} ${unit}   ${latency}   (rounds: ${list.map((x) => Math.round(x.rps)).join(', ')})`);
    }
    const ratio = (server: string, protocol: string) => rps.get(`${server} ${protocol}`)! / rps.get(`${server} HTTP/1.1`)!;
    for (const protocol of withH2 ? ['HTTPS/1.1', 'h2'] : ['HTTPS/1.1']) {
      const aegis = ratio('aegis', protocol);
      const nginx = ratio('nginx', protocol);
      console.log(`${`${protocol} / HTTP`.padEnd(16)} aegis ${aegis.toFixed(2)}   nginx ${nginx.toFixed(2)}   (target: aegis ≥ nginx − 0.1 = ${(nginx - 0.1).toFixed(2)}) ${aegis >= nginx - 0.1 ? 'PASS' : 'BELOW TARGET'}`);
    }
    const handshakes = rps.get('nginx new TLS conns')! / rps.get('aegis new TLS conns')!;
    console.log(`new TLS connections/s: nginx / aegis ${handshakes.toFixed(2)}× (target ≤ 2×) ${handshakes <= 2 ? 'PASS' : 'ABOVE TARGET'}`);
  } finally {
    await stopChild(edge.process, 'SIGQUIT');
  }
}

/** `aegis shield --workers N` as an operator runs it (bin/aegis.mjs: the build when fresh), on any core. */
async function startShield(workers: number, env: NodeJS.ProcessEnv, dataDir: string): Promise<{ url: string; process: ChildProcess }> {
  const args = [resolve('bin/aegis.mjs'), 'shield', '--workers', String(workers), '--host', '127.0.0.1', '--shield-port', '0', '--data-dir', dataDir];
  const child = spawn(...anyCore(process.execPath, args), { env: { ...process.env, AEGIS_LOG_LEVEL: 'warn', AEGIS_SHIELD_ALLOW_SAMPLE_RATE: '0.01', AEGIS_METRICS_PORT: '', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolvePromise, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match?.[1]) resolvePromise({ url: match[1].replace('localhost', '127.0.0.1'), process: child });
    });
    child.once('exit', (code) => reject(new Error(`aegis shield --workers ${workers} exited with ${code}: ${output}`)));
  });
}

const stopChild = (child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> =>
  new Promise((r) => {
    if (child.exitCode !== null || child.signalCode !== null) return r();
    child.once('exit', () => r());
    child.kill(signal);
  });

/** The baseline: the smallest correct Node reverse proxy, on the same undici pool settings. */
async function startBareProxy(originPort: number): Promise<{ port: number; server: Server; pool: Pool }> {
  const pool = new Pool(`http://127.0.0.1:${originPort}`, { connections: 128, pipelining: 1 });
  const server = createServer((req, res) => {
    pool.request({ path: req.url ?? '/', method: req.method as 'GET', headers: req.headers, body: null }).then(
      (up) => {
        res.writeHead(up.statusCode, up.headers as Record<string, string>);
        // pipe() with error handling, as the gateway does: stream.pipeline costs ~10 % on Node 20.
        up.body.on('error', () => res.destroy());
        res.on('close', () => {
          if (!up.body.readableEnded) up.body.destroy();
        });
        up.body.pipe(res);
      },
      () => {
        res.writeHead(502).end();
      },
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, server, pool };
}

async function api(base: string, key: string, method: string, path: string, body?: unknown, contentType = 'application/json') {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

async function configureFullSite(base: string, key: string, siteId: string): Promise<void> {
  const lines = ['type,value,action,note'];
  for (let i = 0; i < 10_000; i++) {
    lines.push(i % 2 === 0 ? `cidr,10.${(i >> 8) & 255}.${i & 255}.0/24,deny,` : `ip,2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::1,challenge,`);
  }
  await api(base, key, 'POST', `/api/v1/shield/sites/${siteId}/ip-access/import`, `${lines.join('\n')}\n`, 'text/csv');
  // 1 000 patches over 50 parameter names; the benchmark request carries two of them.
  await Promise.all(
    Array.from({ length: 10 }, async (_, worker) => {
      for (let i = worker; i < 1_000; i += 10) {
        await api(base, key, 'POST', `/api/v1/shield/sites/${siteId}/virtual-patches`, { url_pattern: i % 2 ? '/*' : `/app${i}/*`, method: 'ANY', match_param: `p${i % 50}`, match_regex: `(?i)attack${i}[0-9]+(select|union)`, action: 'block' });
      }
      for (let i = worker; i < 100; i += 10) {
        await api(base, key, 'POST', `/api/v1/shield/sites/${siteId}/rate-limits`, { identity: 'ip', url_pattern: i === 0 ? '/*' : `/api/v${i}/*`, method: 'ANY', budget: 1_000_000_000, window_seconds: 60, action: 'block' });
      }
    }),
  );
}

if (PIN) await run('taskset', ['-a', '-cp', '0', String(process.pid)]);
console.log(PIN ? 'pinned: Node proxies on core 0, nginx and wrk on core 1' : 'not pinned');
const dir = await mkdtemp(join(tmpdir(), 'aegis-bench-shield-'));
const nginx = await startNginx(dir, { originBody: BODY, launch: onCore1 });
const bare = await startBareProxy(nginx.origin);
const key = generateKey();
const server = await startServer({
  ...loadConfig({ host: '127.0.0.1', port: '0', shieldPort: '0', shieldTlsPort: '0', dataDir: join(dir, 'data') }, {}),
  databaseUrl: process.env.BENCH_DATABASE_URL,
  bootstrapApiKey: key,
  logLevel: 'warn',
  rateLimitPerMinute: 1_000_000,
  trustedProxies: ['127.0.0.1'],
  shieldAllowSampleRate: 0.01,
});
try {
  const gateway = server.gateway!;
  const origin = `http://127.0.0.1:${nginx.origin}`;
  // `tls.mode: off`: with a TLS port, a new site would otherwise order a certificate from Let's Encrypt.
  const site = async (domain: string, managed: boolean) =>
    (await api(server.url, key, 'POST', '/api/v1/shield/sites', { domain, origin_url: origin, mode: 'block', managed_rules: { enabled: managed, paranoia_level: 1 }, tls: { mode: 'off' } })).id as string;
  const plain = await site(TLS_DOMAIN, false);
  const full = await site('full.bench.test', false);
  const managed = await site('managed.bench.test', true);
  const configured = performance.now();
  if (!ONLY_TLS) await Promise.all([configureFullSite(server.url, key, full), ...(ONLY_WORKERS ? [] : [configureFullSite(server.url, key, managed)])]);
  console.log(`configured the full sites in ${((performance.now() - configured) / 1000).toFixed(1)} s`);
  // The no-rules site serves HTTPS with an uploaded certificate (tls.mode becomes custom).
  const cert = await makeBenchCertificate(dir, [TLS_DOMAIN]);
  await api(server.url, key, 'PUT', `/api/v1/shield/sites/${plain}/certificate`, { certificate: cert.certificate, private_key: cert.privateKey });
  await gateway.registry.refresh();
  await gateway.certificates!.refresh();

  // Realistic traffic: a search with a few parameters (two of them named by patches), and a small
  // JSON order posted to an API.
  const path = '/app/items?p3=hello&p7=world&q=running+shoes&sort=price&page=2';
  // What a browser sends with it: without a User-Agent, managed rules at level 3 would refuse every request.
  const BROWSER = { headers: ['User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', 'Accept: text/html,application/xhtml+xml,*/*;q=0.8', 'Accept-Language: en-GB,en;q=0.7'] };
  const post = join(dir, 'post.lua');
  const order = JSON.stringify({ customer: { name: "Anne O'Neil", email: 'anne@example.com' }, items: [{ sku: 'RS-42', qty: 1 }, { sku: 'SK-7', qty: 2 }], note: 'Leave it at the door, please' });
  await writeFile(post, `wrk.method = "POST"\nwrk.path = "/api/orders"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = ${JSON.stringify(order)}\n`);
  if (!ONLY_WORKERS && !ONLY_TLS) {
    const allTargets: [string, string, string, string?][] = [
      ['bare proxy', `http://127.0.0.1:${bare.port}${path}`, 'bare.bench.test'],
      ['gateway, no rules', `${gateway.url}${path}`, 'plain.bench.test'],
      ['gateway, full rules', `${gateway.url}${path}`, 'full.bench.test'],
      ['gateway, full, recorded', `${gateway.url}${path}`, 'full.bench.test'],
      ['gateway, full + managed', `${gateway.url}${path}`, 'managed.bench.test'],
      // With managed rules, recording also judges each request at every paranoia level.
      ['gateway, full + managed, recorded', `${gateway.url}${path}`, 'managed.bench.test'],
      ['nginx proxy_pass', `http://127.0.0.1:${nginx.proxy}${path}`, 'nginx'],
      ...(nginx.modsec === null ? [] : ([['nginx + ModSec CRS', `http://127.0.0.1:${nginx.modsec}${path}`, 'nginx']] as [string, string, string][])),
      ['POST gateway, full', `${gateway.url}/`, 'full.bench.test', post],
      ['POST gateway, managed', `${gateway.url}/`, 'managed.bench.test', post],
      ...(nginx.modsec === null ? [] : ([['POST nginx + ModSec', `http://127.0.0.1:${nginx.modsec}/`, 'nginx', post]] as [string, string, string, string][])),
    ];
    const targets = ONLY_RECORD ? allTargets.filter(([label]) => label.startsWith('gateway, full')) : allTargets;
    if (nginx.modsec === null) console.log('ModSecurity not installed (apt-get install libnginx-mod-http-modsecurity modsecurity-crs): skipping nginx + ModSecurity + CRS');
    // Both WAFs must actually be blocking, or the comparison means nothing.
    const attack = `/search?q=${encodeURIComponent("1' union select password from users --")}`;
    for (const [label, base, host] of [
      ['gateway + managed', gateway.url, 'managed.bench.test'],
      ...(nginx.modsec === null ? [] : [['nginx + ModSecurity', `http://127.0.0.1:${nginx.modsec}`, 'nginx']]),
    ] as [string, string, string][]) {
      const res = await request(base + attack, { headers: { host, 'user-agent': 'Mozilla/5.0' } });
      await res.body.dump();
      console.log(`${label} answers a UNION SELECT with ${res.statusCode}`);
      if (res.statusCode !== 403) throw new Error(`${label} does not block: the comparison would be meaningless`);
    }
    // Rounds interleave the targets, and each figure is the median over rounds: on a small machine
    // a background burst (the API's housekeeping, a GC) then moves one round, not one target.
    const runs = new Map<string, { many: WrkResult[]; one: WrkResult[] }>(targets.map(([label]) => [label, { many: [], one: [] }]));
    console.log(`\nwrk -t1, ${ROUNDS} interleaved rounds of ${CONNECTIONS} connections × ${SECONDS} s and 1 connection × ${Math.ceil(SECONDS / 2)} s (medians); 261-byte origin response`);
    // The traffic record (impact previews) is kept only while the `recorded` row runs: every other row
    // measures the gateway without it, so the pair shows what recording costs.
    const recording = (label: string) => {
      server.shieldEvents.traffic?.setEnabled(label.endsWith('recorded'));
      captureTime.label = label;
    };
    // The record's own cost on the hot path, timed in place: on a small shared machine the rounds'
    // spread is larger than the few per cent recording costs, but the time spent capturing is not.
    const captureTime = { label: '', byLabel: new Map<string, { ns: bigint; requests: number }>() };
    const writer = server.shieldEvents.traffic;
    if (writer) {
      const capture = writer.capture.bind(writer);
      writer.capture = (input) => {
        const started = process.hrtime.bigint();
        capture(input);
        const spent = process.hrtime.bigint() - started;
        let entry = captureTime.byLabel.get(captureTime.label);
        if (!entry) captureTime.byLabel.set(captureTime.label, (entry = { ns: 0n, requests: 0 }));
        entry.ns += spent;
        entry.requests++;
      };
    }
    for (const [label, url, host, script] of targets) {
      recording(label);
      await wrk(url, host, CONNECTIONS, 2, script, 1, BROWSER); // warm-up: pools, JIT
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const [label, url, host, script] of targets) {
        recording(label);
        runs.get(label)!.many.push(await wrk(url, host, CONNECTIONS, SECONDS, script, 1, BROWSER));
        runs.get(label)!.one.push(await wrk(url, host, 1, Math.ceil(SECONDS / 2), script, 1, BROWSER));
      }
    }
    const results = new Map<string, { many: WrkResult; one: WrkResult }>();
    for (const [label, { many, one }] of runs) {
      const summary = (list: WrkResult[]): WrkResult => ({ rps: median(list.map((x) => x.rps)), p50ms: median(list.map((x) => x.p50ms)), p99ms: median(list.map((x) => x.p99ms)) });
      results.set(label, { many: summary(many), one: summary(one) });
      const { many: m, one: o } = results.get(label)!;
      console.log(`${label.padEnd(20)} ${Math.round(m.rps).toString().padStart(7)} req/s   p50@1conn ${(o.p50ms * 1000).toFixed(0).padStart(4)} µs   p99@${CONNECTIONS} ${m.p99ms.toFixed(2)} ms   (rounds: ${many.map((x) => Math.round(x.rps)).join(', ')})`);
    }
    const r = (label: string) => results.get(label)!;
    const traffic = server.shieldEvents.traffic?.stats();
    console.log(`traffic record: ${traffic?.written ?? 0} written, ${traffic?.shed ?? 0} shed`);
    // Each recorded row against the same site unrecorded, and the capture's own time at that rate
    // (one process on one core). A recording gateway runs managed rules screened by level 4 in both
    // rows of the managed pair: what that screening adds is bench:managed's "PL1 recorded" row.
    for (const [label, base] of [['gateway, full, recorded', 'gateway, full rules'], ['gateway, full + managed, recorded', 'gateway, full + managed']] as const) {
      const ratio = r(label).many.rps / r(base).many.rps;
      console.log(`${label} / unrecorded  ${ratio.toFixed(2)}  (target ≥ 0.95) ${ratio >= 0.95 ? 'PASS' : 'BELOW TARGET'}`);
      const spent = captureTime.byLabel.get(label);
      if (!spent) continue;
      const us = Number(spent.ns) / 1e3 / spent.requests;
      const share = us / (1e6 / r(base).many.rps);
      console.log(`  capture on the hot path: ${us.toFixed(2)} µs per request = ${(share * 100).toFixed(1)} % of a request's time at ${Math.round(r(base).many.rps)} req/s ${share <= 0.05 ? 'PASS' : 'ABOVE'} (≤ 5 %)`);
    }
    if (!ONLY_RECORD) {
      const noRules = r('gateway, no rules').many.rps / r('bare proxy').many.rps;
      const fullRatio = r('gateway, full rules').many.rps / r('gateway, no rules').many.rps;
      const addedP50 = r('gateway, full rules').one.p50ms - r('bare proxy').one.p50ms;
      console.log(`\nno rules / bare     ${noRules.toFixed(2)}  (target ≥ 0.85) ${noRules >= 0.85 ? 'PASS' : 'BELOW TARGET'}`);
      console.log(`full / no rules     ${fullRatio.toFixed(2)}  (target ≥ 0.85) ${fullRatio >= 0.85 ? 'PASS' : 'BELOW TARGET'}`);
      console.log(`added p50 (full vs bare, 1 connection) ${(addedP50 * 1000).toFixed(0)} µs (target ≤ 500 µs) ${addedP50 <= 0.5 ? 'PASS' : 'ABOVE TARGET'}`);
      const managedGet = r('gateway, full + managed').many.rps / r('gateway, full rules').many.rps;
      const managedPost = r('POST gateway, managed').many.rps / r('POST gateway, full').many.rps;
      console.log(`managed / full, GET ${managedGet.toFixed(2)}  POST ${managedPost.toFixed(2)}  (target ≥ 0.75) ${Math.min(managedGet, managedPost) >= 0.75 ? 'PASS' : 'BELOW TARGET'}`);
      console.log(`gateway full / nginx ${(r('gateway, full rules').many.rps / r('nginx proxy_pass').many.rps).toFixed(2)}   bare Node / nginx ${(r('bare proxy').many.rps / r('nginx proxy_pass').many.rps).toFixed(2)}`);
      if (nginx.modsec !== null) {
        const get = r('gateway, full + managed').many.rps / r('nginx + ModSec CRS').many.rps;
        const postRatio = r('POST gateway, managed').many.rps / r('POST nginx + ModSec').many.rps;
        console.log(`gateway full + managed / nginx + ModSecurity + CRS: GET ${get.toFixed(2)}  POST ${postRatio.toFixed(2)}`);
      }
    }

    if (!ONLY_RECORD) {
      // Hostile input: a pattern that backtracks catastrophically on V8, and 8 KB values that trigger it.
      await api(server.url, key, 'POST', `/api/v1/shield/sites/${full}/virtual-patches`, { url_pattern: '/*', method: 'ANY', match_param: 'q', match_regex: '^(a+)+$', action: 'block' });
      await gateway.registry.refresh();
      const script = join(dir, 'hostile.lua');
      await writeFile(script, `wrk.path = "/search?q=${'a'.repeat(8000)}!"\n`);
      const loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      const hostile = await wrk(`${gateway.url}/`, 'full.bench.test', CONNECTIONS, Math.ceil(SECONDS / 2), script);
      loop.disable();
      const p99 = loop.percentile(99) / 1e6;
      console.log(`\nhostile 8 KB input vs ^(a+)+$: ${Math.round(hostile.rps)} req/s, event-loop p99 ${p99.toFixed(1)} ms (target ≤ 20 ms) ${p99 <= 20 ? 'PASS' : 'ABOVE TARGET'}`);

      // Propagation: rule written through the API → enforced by the gateway.
      const delays: number[] = [];
      for (let i = 0; i < 10; i++) {
        const ip = `192.0.2.${i + 1}`;
        const started = performance.now();
        await api(server.url, key, 'POST', `/api/v1/shield/sites/${plain}/ip-access`, { type: 'ip', value: ip, action: 'deny' });
        for (;;) {
          const res = await request(`${gateway.url}/`, { headers: { 'x-forwarded-for': ip, host: 'plain.bench.test' } });
          await res.body.dump();
          if (res.statusCode === 403) break;
          await new Promise((r) => setTimeout(r, 5));
        }
        delays.push(performance.now() - started);
      }
      delays.sort((a, b) => a - b);
      console.log(`rule propagation API → gateway: median ${delays[5]!.toFixed(0)} ms, max ${delays[9]!.toFixed(0)} ms (target ≤ 1000 ms)`);
    }
  }

  if (!ONLY_WORKERS && !ONLY_RECORD) await measureTls({ dir, origin: nginx.origin, gatewayPort: gateway.port, tlsPort: gateway.tlsPort!, cert, path });

  // Worker processes: `aegis shield --workers 1` and `--workers N` against nginx with 1 and N
  // worker_processes, the full-rules GET, unpinned (see the header).
  if (!ONLY_TLS && !ONLY_RECORD) {
    const scaling: [string, string, string][] = [];
    const stops: (() => Promise<void>)[] = [];
    try {
      for (const n of [...new Set([1, CORES])]) {
        const proxy = await startNginxProxy(dir, nginx.origin, n, false, anyCore);
        stops.push(() => stopChild(proxy.process, 'SIGQUIT'));
        scaling.push([`nginx ${n} worker${n > 1 ? 's' : ''}`, `http://127.0.0.1:${proxy.port}${path}`, 'nginx']);
        if (nginx.modsec !== null) {
          const waf = await startNginxProxy(dir, nginx.origin, n, true, anyCore);
          stops.push(() => stopChild(waf.process, 'SIGQUIT'));
          scaling.push([`nginx+ModSec ${n} worker${n > 1 ? 's' : ''}`, `http://127.0.0.1:${waf.port}${path}`, 'nginx']);
        }
      }
      if (!process.env.BENCH_DATABASE_URL) {
        console.log('\nno BENCH_DATABASE_URL: skipping `aegis shield --workers` (a separate gateway process needs PostgreSQL)');
      } else {
        const shieldEnv = { DATABASE_URL: process.env.BENCH_DATABASE_URL, REDIS_URL: '' };
        const variants: [string, number, NodeJS.ProcessEnv][] = [[`aegis 1 worker`, 1, shieldEnv], ...(CORES > 1 ? ([[`aegis ${CORES} workers, IPC`, CORES, shieldEnv]] as [string, number, NodeJS.ProcessEnv][]) : [])];
        if (process.env.BENCH_REDIS_URL && CORES > 1) variants.push([`aegis ${CORES} workers, Redis`, CORES, { ...shieldEnv, REDIS_URL: process.env.BENCH_REDIS_URL }]);
        for (const [label, n, env] of variants) {
          const shield = await startShield(n, env, join(dir, 'data'));
          stops.push(() => stopChild(shield.process));
          // Every worker has loaded the sites once fresh connections (spread over the workers) all pass.
          for (let ok = 0; ok < 4 * n; ) {
            const res = await request(`${shield.url}${path}`, { headers: { host: 'full.bench.test', connection: 'close' } });
            await res.body.dump();
            ok = res.statusCode === 200 ? ok + 1 : 0;
            if (ok === 0) await new Promise((r) => setTimeout(r, 50));
          }
          scaling.push([label, `${shield.url}${path}`, 'full.bench.test']);
        }
      }
      const threads = CORES;
      console.log(`\nworkers: wrk -t${threads}, ${ROUNDS} interleaved rounds of ${CONNECTIONS} connections × ${SECONDS} s (medians), nothing pinned; Aegis: full rules GET`);
      for (const [, url, host] of scaling) await wrk(url, host, CONNECTIONS, 2, undefined, threads); // warm-up
      const rounds = new Map<string, WrkResult[]>(scaling.map(([label]) => [label, []]));
      for (let round = 0; round < ROUNDS; round++) {
        for (const [label, url, host] of scaling) rounds.get(label)!.push(await wrk(url, host, CONNECTIONS, SECONDS, undefined, threads));
      }
      const rps = new Map<string, number>();
      for (const [label, list] of rounds) {
        rps.set(label, median(list.map((x) => x.rps)));
        console.log(`${label.padEnd(24)} ${Math.round(rps.get(label)!).toString().padStart(7)} req/s   p99@${CONNECTIONS} ${median(list.map((x) => x.p99ms)).toFixed(2)} ms   (rounds: ${list.map((x) => Math.round(x.rps)).join(', ')})`);
      }
      if (CORES > 1) {
        const ratio = (a: string, b: string) => (rps.has(a) && rps.has(b) ? `${(rps.get(a)! / rps.get(b)!).toFixed(2)}×` : 'n/a');
        console.log(`scaling 1 → ${CORES}: nginx ${ratio(`nginx ${CORES} workers`, 'nginx 1 worker')}   aegis IPC ${ratio(`aegis ${CORES} workers, IPC`, 'aegis 1 worker')}   aegis Redis ${ratio(`aegis ${CORES} workers, Redis`, 'aegis 1 worker')}`);
        console.log(`scaling 1 → ${CORES}: nginx+ModSecurity ${ratio(`nginx+ModSec ${CORES} workers`, 'nginx+ModSec 1 worker')}`);
        console.log(`aegis / nginx: 1 worker ${ratio('aegis 1 worker', 'nginx 1 worker')}   ${CORES} workers ${ratio(`aegis ${CORES} workers, IPC`, `nginx ${CORES} workers`)}`);
        console.log(`aegis / nginx+ModSecurity: 1 worker ${ratio('aegis 1 worker', 'nginx+ModSec 1 worker')}   ${CORES} workers ${ratio(`aegis ${CORES} workers, IPC`, `nginx+ModSec ${CORES} workers`)}`);
      }
    } finally {
      for (const stopOne of stops.reverse()) await stopOne();
    }
  }
} finally {
  await server.close();
  bare.server.close();
  await bare.pool.close();
  nginx.process.kill('SIGQUIT');
  await rm(dir, { recursive: true, force: true });
}
