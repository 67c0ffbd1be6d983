// The DAST engine against the deliberately vulnerable shop (test/fixtures/web/vulnerable-shop.ts,
// whose header lists the planted flaws) and its fixed twin: every planted flaw is found with proof
// and nothing else, the twin yields nothing, scope, budget, policy and abort are respected, and a
// finding's check re-runs on demand (verify-fix).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { XSS_MARKER_PREFIX } from '../../scanners/dast/active.ts';
import { dedupeKey, extractLinks, linkRequest } from '../../scanners/dast/crawl.ts';
import { DAST_RULES } from '../../scanners/dast/rules.ts';
import { recheckDast, scanDast } from '../../scanners/dast/scan.ts';
import { ScanHttp, type HttpExchange, type ScanRequest } from '../../scanners/web/http.ts';
import type { WebFinding, WebFindingDetails, WebScanOutput } from '../../scanners/web/types.ts';
import { startVulnerableShop, type Shop } from '../fixtures/web/vulnerable-shop.ts';

/** ScanHttp that also remembers every request it was asked to send, sent or not. */
class RecordingHttp extends ScanHttp {
  readonly attempted: ScanRequest[] = [];
  override async send(req: ScanRequest): Promise<HttpExchange> {
    this.attempted.push(req);
    return super.send(req);
  }
}

let vulnerable: Shop;
let fixed: Shop;
const clients: ScanHttp[] = [];

function httpFor(shop: Shop, options: { prefixes?: string[]; maxRequests?: number; signal?: AbortSignal } = {}): RecordingHttp {
  const http = new RecordingHttp({
    scope: { hosts: [new URL(shop.url).host], pathPrefixes: options.prefixes ?? ['/'] },
    allowPrivate: true,
    // Fast for the tests; the politeness default (20 req/s) is what bench:dast measures.
    limits: { requestsPerSecond: 1000, ...(options.maxRequests !== undefined ? { maxRequests: options.maxRequests } : {}) },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  clients.push(http);
  return http;
}

const ctxFor = (http: ScanHttp, signal = new AbortController().signal) => ({ http, signal });
const pathOf = (f: WebFinding): string => new URL(f.location.url).pathname;
const details = (f: WebFinding): WebFindingDetails => f.details as WebFindingDetails;
const summary = (out: WebScanOutput): string[] => out.findings.map((f) => `${f.rule_id} ${f.location.method} ${pathOf(f)}${f.location.parameter ? ` ${f.location.parameter}` : ''}`).sort();

beforeAll(async () => {
  [vulnerable, fixed] = await Promise.all([startVulnerableShop({ fixed: false }), startVulnerableShop({ fixed: true })]);
});

afterAll(async () => {
  for (const http of clients) await http.close();
  await Promise.all([vulnerable?.close(), fixed?.close()]);
});

let found: WebScanOutput;

describe('DAST scan of the vulnerable shop', () => {
  it('finds every planted flaw, with proof, and nothing else', async () => {
    const http = httpFor(vulnerable);
    const started = performance.now();
    found = await scanDast({ target: `${vulnerable.url}/` }, ctxFor(http));
    const seconds = (performance.now() - started) / 1000;
    console.log(`vulnerable shop: ${found.findings.length} findings, ${found.coverage.requests} requests, ${found.coverage.items} pages, ${seconds.toFixed(2)} s`);

    expect(summary(found)).toEqual(
      [
        // Injections, each on the parameter it was planted in.
        'dast-xss-reflected GET /search q',
        'dast-sqli-error GET /products id',
        'dast-sqli-boolean POST /orders/lookup code',
        'dast-sqli-time GET /subscribe email',
        'dast-open-redirect GET /go next',
        'dast-path-traversal GET /download file',
        'dast-path-traversal GET /files/readme.txt',
        'dast-cmdi-time GET /ping host',
        'dast-ssti GET /hello name',
        // Passive.
        'dast-missing-csp GET /',
        'dast-missing-xfo GET /',
        'dast-missing-xcto GET /',
        'dast-cookie-flags GET /',
        'dast-version-banner GET /',
        'dast-error-disclosure GET /debug',
        'dast-directory-listing GET /files/',
        'dast-cors-misconfig GET /api/profile',
      ].sort(),
    );

    const by = (rule: string): WebFinding => found.findings.find((f) => f.rule_id === rule)!;
    expect(by('dast-xss-reflected').evidence).toMatch(new RegExp(`<${XSS_MARKER_PREFIX}[0-9a-f]+>`));
    expect(by('dast-sqli-error').evidence).toContain('unterminated quoted string');
    expect(by('dast-sqli-time').evidence).toMatch(/pg_sleep\(2\).* took [2-9]\.\d\d s/);
    expect(by('dast-cmdi-time').evidence).toMatch(/sleep 2/);
    expect(by('dast-open-redirect').evidence).toMatch(/^302 Location: https:\/\/aegis-redirect-check\.example\//);
    expect(by('dast-path-traversal').evidence).toContain('root:x:0:0:');
    expect(by('dast-ssti').evidence).toMatch(/\{\{\d+\*\d+\}\} rendered as \d+/);
    expect(by('dast-cookie-flags').evidence).toMatch(/session=….*missing HttpOnly, SameSite/);
    expect(by('dast-version-banner').evidence).toBe('server: Apache/2.4.49 (Unix)');

    for (const f of found.findings) {
      expect(f.fingerprint).toMatch(/^[0-9a-f]{64}$/);
      expect(f.cwe).toMatch(/^CWE-\d+$/);
      expect(f.location.kind).toBe('url');
      const d = details(f);
      expect(d.policy).toBe(f.severity === 'high' || f.severity === 'critical' ? 'fail' : 'warn');
      expect(d.check.rule).toBe(f.rule_id);
      expect(d.request).toBeTruthy();
    }
    expect(details(by('dast-sqli-error')).attack).toEqual({ class: 'sqli', method: 'GET', path: '/products', parameter: 'id', in: 'query' });
    expect(details(by('dast-sqli-boolean')).attack).toEqual({ class: 'sqli', method: 'POST', path: '/orders/lookup', parameter: 'code', in: 'body' });
    expect(details(by('dast-cmdi-time')).attack).toMatchObject({ class: 'cmdi', path: '/ping', parameter: 'host' });
    expect(found.findings.filter((f) => f.rule_id === 'dast-path-traversal').map((f) => details(f).attack)).toContainEqual({ class: 'traversal', method: 'GET', path: '/files/', parameter: '*', in: 'path' });

    // Links inside HTML comments are not links.
    expect(vulnerable.requests.some((r) => r.url.includes('never-linked'))).toBe(false);
    // Nothing left the scope: the external partner link and mailto: were never requested.
    const host = new URL(vulnerable.url).host;
    expect(http.attempted.every((r) => new URL(r.url).host === host)).toBe(true);
    expect(found.coverage.notes.join('\n')).toMatch(/2 out-of-scope URLs/);
    expect(found.coverage.requests).toBe(http.requests);
    expect(found.coverage.requests).toBeLessThan(200);
  });

  it('reports nothing on the fixed twin', async () => {
    const http = httpFor(fixed);
    const started = performance.now();
    const fractions: number[] = [];
    const out = await scanDast({ target: `${fixed.url}/` }, { ...ctxFor(http), onProgress: (f) => fractions.push(f) });
    console.log(`fixed twin: ${out.findings.length} findings, ${out.coverage.requests} requests, ${out.coverage.items} pages, ${((performance.now() - started) / 1000).toFixed(2)} s`);
    expect(summary(out)).toEqual([]);
    expect(out.coverage.items).toBe(found.coverage.items);
    expect(fractions.at(-1)).toBe(1);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
  });
});

describe('timing proofs', () => {
  it('do not take a page that is slow for some input for a time-based injection', async () => {
    const policy = Object.fromEntries([...DAST_RULES.keys()].map((id) => [id, id === 'dast-cmdi-time' ? 'fail' : 'ignore'] as const));
    const http = httpFor(vulnerable);
    const started = performance.now();
    const out = await scanDast({ target: `${vulnerable.url}/status?service=web`, maxDepth: 0, policy }, ctxFor(http));
    console.log(`slow page: ${out.coverage.requests} requests, ${((performance.now() - started) / 1000).toFixed(2)} s`);
    expect(out.findings).toEqual([]);
    // The long probes were slow enough to pass the first gate; the zero-delay controls stopped them.
    const controls = http.attempted.filter((r) => decodeURIComponent(r.url).includes('sleep 0'));
    expect(controls.length).toBeGreaterThan(0);
  });
});

describe('a single-page app', () => {
  it("probes the start page's own directory for traversal, though it links to no file", async () => {
    // An SPA shell with no links; its static handler joins the raw path onto its root.
    const server = createServer((req, res) => {
      const raw = req.url ?? '/';
      if (/(\.\.(\/|%2f)){3,}etc(\/|%2f)passwd$/i.test(raw)) return res.end('root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n');
      res.setHeader('content-type', 'text/html');
      res.setHeader('x-frame-options', 'DENY');
      res.setHeader('content-security-policy', "default-src 'self'");
      res.end(raw === '/app/' ? '<!doctype html><html><head><title>app</title></head><body><div id="root"></div></body></html>' : 'not found');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const http = new RecordingHttp({ scope: { hosts: [new URL(url).host], pathPrefixes: ['/'] }, allowPrivate: true, limits: { requestsPerSecond: 1000 } });
      clients.push(http);
      const out = await scanDast({ target: `${url}/app/` }, ctxFor(http));
      expect(out.findings.filter((f) => f.rule_id === 'dast-path-traversal')).toHaveLength(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('one root cause, one finding', () => {
  const PASSWD = 'root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n';
  const safeHeaders = { 'x-frame-options': 'DENY', 'content-security-policy': "default-src 'self'", 'x-content-type-options': 'nosniff' };

  async function serve(handler: (raw: string, url: URL) => { type: string; body: string } | null): Promise<{ url: string; close(): Promise<void> }> {
    const server = createServer((req, res) => {
      const raw = req.url ?? '/';
      const answer = handler(raw, new URL(raw, 'http://x'));
      if (!answer) {
        res.writeHead(404, { 'content-type': 'text/plain', ...safeHeaders });
        return res.end('not found');
      }
      res.writeHead(200, { 'content-type': answer.type, ...safeHeaders });
      res.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  const scanOf = async (url: string): Promise<WebFinding[]> => {
    const http = new RecordingHttp({ scope: { hosts: [new URL(url).host], pathPrefixes: ['/'] }, allowPrivate: true, limits: { requestsPerSecond: 1000 } });
    clients.push(http);
    const out = await scanDast({ target: `${url}/` }, ctxFor(http));
    return out.findings.filter((f) => f.rule_id === 'dast-path-traversal');
  };

  it('a static handler that escapes under / and under /docs/ is one finding listing both', async () => {
    // One static file handler joins the raw path onto its root, whatever the directory.
    const site = await serve((raw, url) => {
      if (/(\.\.(\/|%2f)){3,}etc(\/|%2f)passwd$/i.test(raw)) return { type: 'text/plain', body: PASSWD };
      if (url.pathname === '/') return { type: 'text/html', body: '<html><head><title>s</title></head><body><a href="/readme.txt">readme</a> <a href="/docs/guide.html">guide</a></body></html>' };
      if (url.pathname === '/readme.txt') return { type: 'text/plain', body: 'read me' };
      if (url.pathname === '/docs/guide.html') return { type: 'text/html', body: '<html><head><title>guide</title></head><body>guide</body></html>' };
      return null;
    });
    try {
      const traversals = await scanOf(site.url);
      expect(traversals).toHaveLength(1);
      const d = details(traversals[0]!);
      expect(d.affected_urls).toEqual([`${site.url}/`, `${site.url}/docs/`]);
      expect(d.affected_count).toBe(2);
      // The finding kept is the one nearest the root: its fingerprint is what a scan of / alone gives.
      expect(d.attack).toMatchObject({ path: '/', parameter: '*', in: 'path' });
      const again = await scanOf(site.url);
      expect(again.map((f) => f.fingerprint)).toEqual(traversals.map((f) => f.fingerprint));
    } finally {
      await site.close();
    }
  });

  it('traversal in two handlers through different parameters stays two findings', async () => {
    const site = await serve((_raw, url) => {
      const read = (value: string | null) => (value && /etc\/passwd$/.test(value) ? { type: 'text/plain', body: PASSWD } : { type: 'text/plain', body: `contents of ${value ?? ''}` });
      if (url.pathname === '/') return { type: 'text/html', body: '<html><head><title>s</title></head><body><a href="/download?file=a.txt">a</a><a href="/view?path=b.txt">b</a></body></html>' };
      if (url.pathname === '/download') return read(url.searchParams.get('file'));
      if (url.pathname === '/view') return read(url.searchParams.get('path'));
      return null;
    });
    try {
      const traversals = await scanOf(site.url);
      expect(traversals.map((f) => `${pathOf(f)} ${f.location.parameter}`).sort()).toEqual(['/download file', '/view path']);
      for (const f of traversals) expect(details(f).affected_urls).toBeUndefined();
    } finally {
      await site.close();
    }
  });
});

describe('limits', () => {
  it('never requests outside a narrower path prefix', async () => {
    const shop = await startVulnerableShop({ fixed: false });
    try {
      const http = httpFor(shop, { prefixes: ['/account/'] });
      const out = await scanDast({ target: `${shop.url}/account/` }, ctxFor(http));
      console.log(`/account/ only: ${out.coverage.requests} requests, ${out.coverage.items} pages`);
      expect(out.coverage.items).toBe(2);
      expect(http.attempted.every((r) => http.inScope(r.url))).toBe(true);
      expect(shop.requests.length).toBe(out.coverage.requests);
      expect(shop.requests.every((r) => r.url.startsWith('/account/'))).toBe(true);
      // The navigation (/, /search, /orders) and the partner site are linked but out of scope.
      expect(out.coverage.notes.join('\n')).toMatch(/4 out-of-scope URLs/);
    } finally {
      await shop.close();
    }
  });

  it('stops at the request budget with what it found and a note', async () => {
    const http = httpFor(vulnerable, { maxRequests: 20 });
    const out = await scanDast({ target: `${vulnerable.url}/` }, ctxFor(http));
    console.log(`budget 20: ${out.coverage.requests} requests, ${out.coverage.items} pages, ${out.findings.length} findings`);
    expect(http.requests).toBe(20);
    expect(out.coverage.requests).toBe(20);
    expect(out.coverage.items).toBe(10);
    expect(out.coverage.notes.join('\n')).toMatch(/request budget of 20 reached/);
    // The passive findings of the pages crawled are kept.
    expect(out.findings.map((f) => f.rule_id)).toContain('dast-missing-csp');
  });

  it('does not run rules a policy ignores, and applies warn/fail', async () => {
    const http = httpFor(vulnerable);
    const policy = { 'dast-xss-reflected': 'ignore', 'dast-sqli-time': 'ignore', 'dast-cmdi-time': 'ignore', 'dast-cors-misconfig': 'ignore', 'dast-sqli-error': 'warn', 'dast-missing-csp': 'fail' } as const;
    const out = await scanDast({ target: `${vulnerable.url}/`, policy }, ctxFor(http));
    console.log(`policy ignoring 4 rules: ${out.coverage.requests} requests, ${out.findings.length} findings`);
    const rules = new Set(out.findings.map((f) => f.rule_id));
    for (const ignored of ['dast-xss-reflected', 'dast-sqli-time', 'dast-cmdi-time', 'dast-cors-misconfig']) expect(rules.has(ignored)).toBe(false);
    // No probe of theirs was sent at all.
    const sent = http.attempted.map((r) => `${r.url} ${r.body ?? ''} ${JSON.stringify(r.headers ?? {})}`);
    expect(sent.filter((s) => s.includes(XSS_MARKER_PREFIX))).toEqual([]);
    expect(sent.filter((s) => /sleep|WAITFOR/i.test(decodeURIComponent(s)))).toEqual([]);
    expect(http.attempted.filter((r) => r.headers?.origin !== undefined)).toEqual([]);
    expect(details(out.findings.find((f) => f.rule_id === 'dast-sqli-error')!).policy).toBe('warn');
    expect(details(out.findings.find((f) => f.rule_id === 'dast-missing-csp')!).policy).toBe('fail');
    expect(rules.has('dast-sqli-boolean')).toBe(true);
    expect(out.coverage.notes.join('\n')).toMatch(/rules ignored by policy: .*dast-xss-reflected/);
  });

  it('stops when the scan is canceled', async () => {
    const controller = new AbortController();
    const http = httpFor(vulnerable, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('canceled')), 200);
    const started = performance.now();
    await expect(scanDast({ target: `${vulnerable.url}/` }, ctxFor(http, controller.signal))).rejects.toThrow('canceled');
    expect(performance.now() - started).toBeLessThan(1_500);
  });
});

describe('recheck (verify-fix)', () => {
  const rechecked = ['dast-sqli-error', 'dast-sqli-boolean', 'dast-sqli-time', 'dast-xss-reflected', 'dast-open-redirect', 'dast-path-traversal', 'dast-ssti', 'dast-cookie-flags'];

  it("re-runs a finding's check: reproduced while vulnerable, not once fixed", async () => {
    const checks = rechecked.map((rule) => ({ rule, check: details(found.findings.find((f) => f.rule_id === rule)!).check }));
    const http = httpFor(vulnerable);
    const before = await Promise.all(checks.map(async ({ rule, check }) => ({ rule, result: await recheckDast(check, ctxFor(http)) })));
    for (const { rule, result } of before) expect(result, rule).toMatchObject({ reproduced: true });
    const afterVulnerable = http.requests;

    vulnerable.configure({ fixed: true });
    try {
      const after = await Promise.all(checks.map(async ({ rule, check }) => ({ rule, result: await recheckDast(check, ctxFor(http)) })));
      for (const { rule, result } of after) expect(result, `${rule}: ${result.evidence}`).toMatchObject({ reproduced: false });
      console.log(`recheck of ${checks.length} findings: ${afterVulnerable} requests while vulnerable, ${http.requests - afterVulnerable} once fixed`);
    } finally {
      vulnerable.configure({ fixed: false });
    }
  });

  it('fixing the SQL injection alone resolves only the SQL injection findings', async () => {
    const sqli = details(found.findings.find((f) => f.rule_id === 'dast-sqli-error')!).check;
    const xss = details(found.findings.find((f) => f.rule_id === 'dast-xss-reflected')!).check;
    const http = httpFor(vulnerable);
    vulnerable.configure({ fixed: false, fixedSqli: true });
    try {
      expect((await recheckDast(sqli, ctxFor(http))).reproduced).toBe(false);
      expect((await recheckDast(xss, ctxFor(http))).reproduced).toBe(true);
    } finally {
      vulnerable.configure({ fixed: false });
    }
  });

  it('rejects a malformed check', async () => {
    await expect(recheckDast({ rule: 'dast-sqli-error', method: 'GET' }, ctxFor(httpFor(vulnerable)))).rejects.toThrow(/required/);
    await expect(recheckDast({ rule: 'nope', method: 'GET', url: vulnerable.url, params: [], in: 'query' }, ctxFor(httpFor(vulnerable)))).rejects.toThrow(/unknown DAST rule/);
  });
});

describe('HTML reading', () => {
  it('finds links and forms the way a browser would submit them', () => {
    const html = `<base href="/shop/">
      <a href="item?id=1#top">x</a><a href='/abs'>y</a><a href=javascript:void(0)>z</a><area href="https://other.example/">
      <!-- <a href="/commented">no</a> --><script>document.write('<a href="/scripted">')</script>
      <form method="POST" action="save?v=2"><input name="title"><input type="hidden" name="token" value="t&amp;1">
        <input type="checkbox" name="agree"><input type="checkbox" name="news" value="yes" checked>
        <input type="radio" name="size" value="s"><input type="radio" name="size" value="m" checked>
        <select name="colour"><option value="red">Red<option value="blue" selected>Blue</select>
        <textarea name="note">hi &lt;there&gt;</textarea><input name="off" disabled><input type="file" name="f">
        <input type="submit" name="go" value="Save"><input type="submit" name="other" value="No"></form>
      <form action="/find"><input type="email" name="mail"></form>
      <form method="post" enctype="multipart/form-data" action="/up"><input name="a"></form>`;
    const { links, forms } = extractLinks(html, 'http://h.test/start');
    expect(links).toEqual(['http://h.test/shop/item?id=1', 'http://h.test/abs', 'https://other.example/']);
    expect(forms).toEqual([
      {
        action: 'http://h.test/shop/save?v=2',
        method: 'POST',
        multipart: false,
        fields: [['title', 'aegis'], ['token', 't&1'], ['news', 'yes'], ['size', 'm'], ['colour', 'blue'], ['note', 'hi <there>'], ['go', 'Save']],
      },
      { action: 'http://h.test/find', method: 'GET', multipart: false, fields: [['mail', 'aegis@example.com']] },
      { action: 'http://h.test/up', method: 'POST', multipart: true, fields: [['a', 'aegis']] },
    ]);
  });

  it('counts /p?id=1 and /p?id=2 as one page, /p?id=1&sort=a as another', () => {
    const key = (url: string) => dedupeKey(linkRequest(url, 0));
    expect(key('http://h.test/p?id=1')).toBe(key('http://h.test/p?id=2'));
    expect(key('http://h.test/p?id=1&sort=a')).toBe(key('http://h.test/p?sort=b&id=9'));
    expect(key('http://h.test/p?id=1&sort=a')).not.toBe(key('http://h.test/p?id=1'));
  });
});
