// The sandbox's built-in demo target (api/sandbox/demo-target.ts): Aegis's own DAST engine,
// scoped to the demo's path, finds every planted flaw and nothing else; every response carries the
// CSP sandbox header; the simulated file reads never return anything but the in-memory fake files.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_FAKE_FILES, DEMO_TARGET_PATH, demoTargetRoutes } from '../../api/sandbox/demo-target.ts';
import { XSS_MARKER_PREFIX } from '../../scanners/dast/active.ts';
import { scanDast } from '../../scanners/dast/scan.ts';
import { ScanHttp, type HttpExchange, type ScanRequest } from '../../scanners/web/http.ts';
import type { WebFinding, WebScanOutput } from '../../scanners/web/types.ts';

/** ScanHttp that remembers every request it was asked to send and every exchange it got. */
class RecordingHttp extends ScanHttp {
  readonly attempted: ScanRequest[] = [];
  readonly exchanges: HttpExchange[] = [];
  override async send(req: ScanRequest): Promise<HttpExchange> {
    this.attempted.push(req);
    const ex = await super.send(req);
    this.exchanges.push(ex);
    return ex;
  }
}

let app: FastifyInstance;
let base: string;
const clients: ScanHttp[] = [];

function httpFor(): RecordingHttp {
  const http = new RecordingHttp({
    scope: { hosts: [new URL(base).host], pathPrefixes: [`${DEMO_TARGET_PATH}/`] },
    allowPrivate: true,
    limits: { requestsPerSecond: 1000 },
  });
  clients.push(http);
  return http;
}

/** The CSP sandbox directive, bare: no allow-scripts, allow-same-origin or any other token. */
function expectSandboxed(headers: Record<string, string | string[] | undefined>, what: string): void {
  const csp = String(headers['content-security-policy'] ?? '');
  const directives = csp.split(';').map((d) => d.trim().toLowerCase());
  expect(directives, `${what}: ${csp}`).toContain('sandbox');
  expect(csp, what).not.toMatch(/allow-/i);
  expect(String(headers['x-robots-tag'] ?? ''), what).toMatch(/noindex/);
}

beforeAll(async () => {
  app = Fastify({ logger: false });
  // Stands in for the host application's own hooks (rate limit, input guard) failing a request
  // before the route runs: the demo's error replies must be sandboxed too.
  app.addHook('onRequest', async (request) => {
    if (request.headers['x-test-refuse'] !== undefined) throw Object.assign(new Error('slow down'), { statusCode: 429 });
  });
  await app.register(demoTargetRoutes, { prefix: DEMO_TARGET_PATH });
  // A route of the host application, next to the demo: the plugin's headers must not reach it.
  app.get('/outside', async () => ({ ok: true }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const http of clients) await http.close();
  await app?.close();
});

const pathOf = (f: WebFinding): string => new URL(f.location.url).pathname;
const summary = (out: WebScanOutput): string[] => out.findings.map((f) => `${f.rule_id} ${f.location.method} ${pathOf(f)}${f.location.parameter ? ` ${f.location.parameter}` : ''}`).sort();

describe('sandbox demo target', () => {
  it('the DAST engine finds every planted flaw, and nothing else', async () => {
    const http = httpFor();
    const started = performance.now();
    const out = await scanDast({ target: `${base}${DEMO_TARGET_PATH}/` }, { http, signal: new AbortController().signal });
    console.log(`demo target: ${out.findings.length} findings, ${out.coverage.requests} requests, ${out.coverage.items} pages, ${((performance.now() - started) / 1000).toFixed(2)} s`);

    const P = DEMO_TARGET_PATH;
    expect(summary(out)).toEqual(
      [
        `dast-xss-reflected GET ${P}/search q`,
        `dast-sqli-error GET ${P}/product id`,
        `dast-sqli-boolean GET ${P}/orders code`,
        `dast-ssti GET ${P}/gift-card message`,
        `dast-path-traversal GET ${P}/manual file`,
        `dast-error-disclosure GET ${P}/checkout`,
        `dast-directory-listing GET ${P}/files/`,
        `dast-missing-xfo GET ${P}/`,
        `dast-cookie-flags GET ${P}/`,
        `dast-version-banner GET ${P}/`,
      ].sort(),
    );
    const by = (rule: string): WebFinding => out.findings.find((f) => f.rule_id === rule)!;
    expect(by('dast-xss-reflected').evidence).toMatch(new RegExp(`<${XSS_MARKER_PREFIX}[0-9a-f]+>`));
    expect(by('dast-sqli-error').evidence).toContain('unterminated quoted string');
    expect(by('dast-path-traversal').evidence).toContain('root:x:0:0:DEMO-ONLY');
    expect(by('dast-ssti').evidence).toMatch(/\{\{\d+\*\d+\}\} rendered as \d+/);
    expect(by('dast-cookie-flags').evidence).toMatch(/demo_cart=….*missing HttpOnly, SameSite/);
    expect(by('dast-version-banner').evidence).toBe('x-powered-by: DemoShop/1.4.2 (DEMO-ONLY)');
    // The CSP is there: the engine must not report it missing.
    expect(out.findings.map((f) => f.rule_id)).not.toContain('dast-missing-csp');

    // Nothing was asked for outside the demo's prefix, and no request failed.
    expect(http.attempted.every((r) => http.inScope(r.url))).toBe(true);
    expect(out.coverage.notes.join('\n')).not.toMatch(/requests failed/);
    expect(http.exchanges.length).toBe(out.coverage.requests);

    // Every response (pages, probes, 404s, the traversal attempts on /files/) is sandboxed, small,
    // and redirects nowhere.
    const statuses = new Set<number>();
    for (const ex of http.exchanges) {
      const what = `${ex.request.method} ${ex.request.url} → ${ex.status}`;
      statuses.add(ex.status);
      expectSandboxed(ex.headers, what);
      expect(ex.headers.location, what).toBeUndefined();
      expect(ex.body.length, what).toBeLessThan(4096);
    }
    expect(statuses).toContain(404);
  });

  it('reflected markup comes back under the CSP sandbox', async () => {
    const res = await fetch(`${base}${DEMO_TARGET_PATH}/search?q=${encodeURIComponent('<script>alert(document.cookie)</script>')}`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<b><script>alert(document.cookie)</script></b>');
    expectSandboxed(Object.fromEntries(res.headers), 'search');
  });

  it('file reads never return anything but the in-memory fake files', async () => {
    const fake = new Set(DEMO_FAKE_FILES.values());
    const attempts = [
      'returns.txt',
      '../../../etc/passwd',
      '/etc/passwd',
      '../../../../../../../../etc/hostname',
      '/etc/hostname',
      '/etc/shadow',
      '/proc/self/environ',
      '/proc/self/cmdline',
      '../../../../../../proc/self/environ',
      '../.env',
      'package.json',
      '../../../../../../package.json',
      `${process.cwd()}/package.json`,
      import.meta.filename,
      `../../../../../../..${import.meta.filename}`,
      '..%2f..%2f..%2fetc%2fpasswd',
      '....//....//....//etc/passwd',
      '..\\..\\..\\windows\\win.ini',
      '.',
      '..',
      '/',
      '',
    ];
    const real = ((): string | null => {
      try {
        return readFileSync('/etc/passwd', 'utf8');
      } catch {
        return null;
      }
    })();
    let served = 0;
    for (const file of attempts) {
      const res = await fetch(`${base}${DEMO_TARGET_PATH}/manual?file=${encodeURIComponent(file)}`);
      const body = await res.text();
      expectSandboxed(Object.fromEntries(res.headers), file);
      if (res.status === 200) {
        served++;
        const shown = /<pre>([\s\S]*)<\/pre>/.exec(body)?.[1]?.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
        expect(fake.has(shown ?? ''), file).toBe(true);
        expect(shown, file).toContain('DEMO-ONLY');
        if (real !== null) expect(shown, file).not.toBe(real);
      } else {
        expect(res.status, file).toBe(404);
        expect(body, file).not.toMatch(/"name"\s*:|\broot:|HOSTNAME|PATH=/);
      }
    }
    // The planted traversal works, and only into the fake files.
    expect(served).toBe(4); // returns.txt, ../../../etc/passwd, /etc/passwd, ../.env

    // Served files are exact names only; the URL path does not traverse. (ScanHttp sends the
    // path as written: fetch would resolve the dot segments itself.)
    const http = httpFor();
    for (const path of ['/files/readme.txt', '/files/..%2f..%2f..%2fetc%2fpasswd', '/files/../../../../etc/passwd', '/files/%2e%2e%2fmanuals%2freturns.txt', '/files/.env']) {
      const ex = await http.send({ method: 'GET', url: `${base}${DEMO_TARGET_PATH}${path}` });
      expectSandboxed(ex.headers, path);
      if (ex.status === 200) expect(fake.has(ex.body), path).toBe(true);
      else expect(ex.body, path).not.toMatch(/\broot:|DEMO-ONLY-/);
    }
  });

  it('caps input sizes, answers only GET/HEAD, and keeps its headers to itself', async () => {
    const long = await fetch(`${base}${DEMO_TARGET_PATH}/search?q=${'a'.repeat(5000)}`);
    expect(long.status).toBe(400);
    expect(await long.text()).not.toContain('a'.repeat(300));
    expectSandboxed(Object.fromEntries(long.headers), 'long input');

    const post = await fetch(`${base}${DEMO_TARGET_PATH}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"q":"x"}' });
    expect(post.status).toBe(404);
    expectSandboxed(Object.fromEntries(post.headers), 'POST');

    const head = await fetch(`${base}${DEMO_TARGET_PATH}/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expectSandboxed(Object.fromEntries(head.headers), 'HEAD');
    expect(head.headers.get('set-cookie')).toMatch(new RegExp(`Path=${DEMO_TARGET_PATH};`));

    const bare = await fetch(`${base}${DEMO_TARGET_PATH}`);
    expect(bare.status).toBe(200);
    expectSandboxed(Object.fromEntries(bare.headers), 'bare prefix');

    const refused = await fetch(`${base}${DEMO_TARGET_PATH}/search?q=x`, { headers: { 'x-test-refuse': '1' } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
    expectSandboxed(Object.fromEntries(refused.headers), 'error reply');

    // Encapsulated: the host application's other routes get none of it.
    const outside = await fetch(`${base}/outside`);
    expect(outside.status).toBe(200);
    expect(outside.headers.get('content-security-policy')).toBeNull();
    expect(outside.headers.get('x-powered-by')).toBeNull();
  });
});
