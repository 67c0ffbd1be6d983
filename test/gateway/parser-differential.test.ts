// The parser-differential harness (issue 45, "Build 2"). Principle: the origin receives a request
// that every mainstream parser reads the way the gateway inspected it, or the request is refused.
//
// Every request of the corpus (test/fixtures/shield/differential/corpus.ts) goes as raw bytes through
// the real gateway to real origins — Express 5, Flask (Werkzeug) and PHP — each an echo that answers
// what its framework parsed (test/support/origins/). Each carries a marker the gateway blocks when it
// is sent plainly (checked below, per site, before anything else is believed). A request is:
//   - fine when the gateway refuses it (any answer that is not the echo's),
//   - fine when it reaches the framework and nothing the framework parsed holds a marker,
//   - a bypass when the framework's view (a parameter, a parameter name, a file name, the method
//     it dispatches, the host it builds URLs with) holds a marker the gateway would have blocked.
// A bypass fails the test as `framework: shape → what the framework saw`. Nothing is expected to
// fail: a leaking shape is the gateway's to fix, not the corpus's to excuse.
//
// Flask and PHP are Debian packages (python3-flask, php-cli); a missing one skips its part with the
// reason, unless AEGIS_REQUIRE_PARSER_ORIGINS=1 (CI), where it is an error.
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHAPES } from '../fixtures/shield/differential/corpus.ts';
import { COUPON, crlf, EVIL_HOST, multipartBody, raw, ROLE, SQLI, XSS, XSS_FILENAME, type Target } from '../fixtures/shield/differential/raw.ts';
import { echoOriginFactories, REQUIRE_PARSER_ORIGINS, type EchoOrigin } from '../support/origins/index.ts';
import { readParsedView, type Pair, type ParsedView } from '../support/origins/parsed-view.ts';
import { rawRequest, type RawResponse } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const factories = echoOriginFactories();
const missing = factories.filter((f) => f.missing !== null);
if (missing.length > 0) {
  const reasons = missing.map((f) => `${f.framework}: ${f.missing}`).join('; ');
  if (REQUIRE_PARSER_ORIGINS) throw new Error(`parser-differential origins missing (AEGIS_REQUIRE_PARSER_ORIGINS=1): ${reasons}`);
  console.warn(`parser-differential: skipping ${reasons}`);
}

let t: TestServer;
let gatewayPort: number;
const origins = new Map<string, EchoOrigin>();
const hosts = new Map<string, string>();

/** Rules of every site: the routes and markers of corpus.ts. */
const PATCHES = [
  { url_pattern: '/api/orders', method: 'POST', match_param: 'note', match_regex: '<script' },
  { url_pattern: '/api/orders', method: 'POST', match_param: 'coupon', match_regex: '(?i)staff-only' },
  { url_pattern: '/search', method: 'GET', match_param: 'q', match_regex: '(?i)union\\s+select' },
  { url_pattern: '/api/account', method: 'PUT', match_param: 'role', match_regex: '(?i)superuser' },
];

beforeAll(async () => {
  // No trusted proxies: the test's client is a client on the internet, whose X-Forwarded-* the gateway replaces.
  t = await startTestServer({ rateLimitPerMinute: 100_000, shieldEnabled: true, shieldPort: 0, trustedProxies: [], shieldAllowSampleRate: 0 });
  gatewayPort = t.server.gateway!.port;
  for (const factory of factories) {
    if (factory.missing !== null) continue;
    const origin = await factory.start();
    origins.set(factory.framework, origin);
    const domain = `${factory.framework}.differential.test`;
    const site = await t.call('POST', '/api/v1/shield/sites', { body: { domain, origin_url: origin.url, mode: 'block', managed_rules: { enabled: true } } });
    expect(site.status, site.text).toBe(201);
    for (const patch of PATCHES) {
      const created = await t.call('POST', `/api/v1/shield/sites/${site.body.id as string}/virtual-patches`, { body: patch });
      expect(created.status, created.text).toBe(201);
    }
    hosts.set(factory.framework, domain);
  }
  await t.server.gateway!.registry.refresh();
});

afterAll(async () => {
  if (leakReport.length > 0) console.log(`parser-differential: ${leakReport.length} bypasses\n${leakReport.join('\n')}`);
  // Every outcome, for whoever fixes the gateway: AEGIS_DIFFERENTIAL_REPORT=file.json.
  const reportFile = process.env.AEGIS_DIFFERENTIAL_REPORT;
  if (reportFile) writeFileSync(reportFile, `${JSON.stringify(outcomes, null, 2)}\n`);
  await t?.close();
  await Promise.all([...origins.values()].map((o) => o.close()));
});

// --- Sending and reading -------------------------------------------------------------------------

/** The body of a chunked response, de-chunked (the echoes send Content-Length; gateway pages may not). */
function dechunk(body: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    if (eol < 0) return out;
    const size = parseInt(body.slice(at, eol), 16);
    if (!Number.isFinite(size) || size === 0) return out;
    out += body.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

/** The final response: interim 1xx answers (100 Continue) skipped. */
function finalResponse(res: RawResponse): RawResponse {
  let current = res;
  while (current.status >= 100 && current.status < 200) {
    const text = current.body;
    const split = text.indexOf('\r\n\r\n');
    const head = split < 0 ? text : text.slice(0, split);
    current = { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0), head, body: split < 0 ? '' : text.slice(split + 4) };
  }
  if (/\r\ntransfer-encoding: *chunked/i.test(current.head)) return { ...current, body: dechunk(current.body) };
  return current;
}

type Sent = { answered: true; status: number; view: ParsedView | null; body: string } | { answered: false; error: string };

let tagCount = 0;

async function send(framework: string, build: (to: Target) => Buffer): Promise<Sent> {
  const tag = `${framework}-${++tagCount}`;
  const host = hosts.get(framework)!;
  try {
    const res = finalResponse(await rawRequest(gatewayPort, build({ host, tag }), 8_000));
    // The response is read as latin1 by rawRequest; the echo's JSON is UTF-8.
    const body = Buffer.from(res.body, 'latin1').toString('utf8');
    const view = readParsedView(body);
    return { answered: true, status: res.status, view: view && view.framework === framework ? view : null, body };
  } catch (err) {
    return { answered: false, error: err instanceof Error ? err.message : String(err) };
  }
}

// --- The oracle: what in a framework's view the gateway would have blocked ----------------------------

/** Blocked by managed rules in any parameter, parameter name or file name (checked in "the markers"). */
const MANAGED_MARKER = /<script|onerror\s*=\s*alert|union\s+(all\s+)?select/i;

const short = (text: string): string => (text.length > 80 ? `${text.slice(0, 77)}…` : text);
const show = ([name, value]: Pair): string => `${short(JSON.stringify(name))}=${short(JSON.stringify(value))}`;
/** The name application code reads a parameter by: `coupon[0]` (PHP, qs arrays) is `coupon`. */
const baseName = (name: string): string => name.split('[')[0]!;
const routePath = (path: string): string => path.toLowerCase().replace(/\/+$/, '');

/** Why the view holds something the gateway blocks when sent plainly; empty when it holds nothing. */
function bypasses(view: ParsedView): string[] {
  if (view.refused !== null) return [];
  const found: string[] = [];
  const sources: [string, Pair[]][] = [
    ['query', view.query],
    ['body', view.body],
    ['cookie', view.cookies],
    ['file', view.files.map((f): Pair => [f.field, f.filename])],
  ];
  for (const [where, pairs] of sources) {
    for (const pair of pairs) if (MANAGED_MARKER.test(pair[0]) || MANAGED_MARKER.test(pair[1])) found.push(`${where} ${show(pair)}`);
  }
  // Patches read query and body parameters (not cookies) of their method and path.
  const params = [...view.query, ...view.body];
  const patched = (method: string, path: string, name: string, marker: string) => {
    if (view.method !== method || routePath(view.path) !== path) return;
    for (const pair of params) if (baseName(pair[0]) === name && pair[1].toLowerCase().includes(marker.toLowerCase())) found.push(`${method} ${view.path} with ${show(pair)}`);
  };
  patched('POST', '/api/orders', 'coupon', COUPON);
  patched('PUT', '/api/account', 'role', ROLE);
  let hostname = '';
  try {
    hostname = new URL(view.baseUrl).hostname;
  } catch {
    // Not a URL at all: no host to be misled to.
  }
  if (hostname.includes(EVIL_HOST)) found.push(`builds URLs for ${hostname} (${view.baseUrl})`);
  return found;
}

function describeView(view: ParsedView): string {
  const parts = [`${view.method}${view.method !== view.wireMethod ? ` (sent as ${view.wireMethod})` : ''} ${view.path}`];
  if (view.query.length) parts.push(`query ${view.query.map(show).join(' ')}`);
  if (view.body.length) parts.push(`body ${view.body.map(show).join(' ')}`);
  if (view.files.length) parts.push(`files ${view.files.map((f) => `${f.field}:${short(JSON.stringify(f.filename))}`).join(' ')}`);
  return parts.join('; ');
}

const leakReport: string[] = [];
const outcomes: { framework: string; shape: string; outcome: string; saw?: string; bypasses?: string[] }[] = [];

// --- Benign requests: each origin must receive them as sent ---------------------------------------

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 7)]).toString('latin1');

interface Benign {
  name: string;
  request: (to: Target) => Buffer;
  method: string;
  query?: Pair[];
  body?: Pair[];
  files?: { field: string; filename: string; size: number }[];
}

const BENIGN: Benign[] = [
  { name: 'a query', request: (to) => raw(to, { target: '/search?q=running+shoes&page=2' }), method: 'GET', query: [['q', 'running shoes'], ['page', '2']] },
  {
    name: 'a form',
    request: (to) => raw(to, { method: 'POST', target: '/api/orders', headers: [['Content-Type', 'application/x-www-form-urlencoded']], body: 'item=book&qty=2&note=gift+wrap%2C+please' }),
    method: 'POST',
    body: [['item', 'book'], ['qty', '2'], ['note', 'gift wrap, please']],
  },
  {
    name: 'multipart with a file',
    request: (to) =>
      raw(to, {
        method: 'POST',
        target: '/api/orders',
        headers: [['Content-Type', 'multipart/form-data; boundary=----aegisBenign42']],
        body: multipartBody('----aegisBenign42', [{ name: 'note', value: 'deliver after 5pm' }, { name: 'photo', value: PNG, filename: 'photo.png', type: 'image/png' }]),
      }),
    method: 'POST',
    body: [['note', 'deliver after 5pm']],
    files: [{ field: 'photo', filename: 'photo.png', size: 72 }],
  },
  {
    name: 'JSON',
    request: (to) => raw(to, { method: 'POST', target: '/api/orders', headers: [['Content-Type', 'application/json']], body: JSON.stringify({ item: 'book', qty: 2, note: 'hello there' }) }),
    method: 'POST',
    body: [['item', 'book'], ['qty', '2'], ['note', 'hello there']],
  },
  {
    name: 'a PUT with JSON',
    request: (to) => raw(to, { method: 'PUT', target: '/api/account', headers: [['Content-Type', 'application/json']], body: JSON.stringify({ role: 'editor' }) }),
    method: 'PUT',
    body: [['role', 'editor']],
  },
  {
    name: 'the PUT-only marker on a POST (the patch is PUT only)',
    request: (to) => raw(to, { method: 'POST', target: '/api/account', headers: [['Content-Type', 'application/x-www-form-urlencoded']], body: `role=${ROLE}` }),
    method: 'POST',
    body: [['role', ROLE]],
  },
  {
    name: 'the coupon marker in another parameter (only the patch on coupon knows it)',
    request: (to) => raw(to, { method: 'POST', target: '/api/orders', headers: [['Content-Type', 'application/x-www-form-urlencoded']], body: `promo=${COUPON}` }),
    method: 'POST',
    body: [['promo', COUPON]],
  },
];

// --- The markers: sent plainly, each is refused by the gateway --------------------------------------

const FORM_TYPE = ['Content-Type', 'application/x-www-form-urlencoded'] as const;
const MARKERS: { name: string; request: (to: Target) => Buffer; status: number }[] = [
  { name: 'SQL injection in q on GET /search', request: (to) => raw(to, { target: `/search?q=${encodeURIComponent(SQLI)}` }), status: 403 },
  { name: 'SQL injection in another query parameter', request: (to) => raw(to, { target: `/api/orders?x=${encodeURIComponent(SQLI)}` }), status: 403 },
  { name: 'XSS in note (form)', request: (to) => raw(to, { method: 'POST', target: '/api/orders', headers: [FORM_TYPE], body: `note=${encodeURIComponent(XSS)}` }), status: 403 },
  { name: 'XSS in another form field', request: (to) => raw(to, { method: 'POST', target: '/api/account', headers: [FORM_TYPE], body: `text=${encodeURIComponent(XSS)}` }), status: 403 },
  { name: 'XSS in a parameter name', request: (to) => raw(to, { method: 'POST', target: '/api/account', headers: [FORM_TYPE], body: `${encodeURIComponent(XSS)}=1` }), status: 403 },
  { name: 'the XSS file name', request: (to) => raw(to, { method: 'POST', target: '/api/account', headers: [['Content-Type', 'multipart/form-data; boundary=m']], body: multipartBody('m', [{ name: 'upload', value: 'x', filename: XSS_FILENAME }]) }), status: 403 },
  { name: 'XSS in a multipart field', request: (to) => raw(to, { method: 'POST', target: '/api/account', headers: [['Content-Type', 'multipart/form-data; boundary=m']], body: crlf('--m', 'Content-Disposition: form-data; name="text"', '', XSS, '--m--', '') }), status: 403 },
  { name: 'XSS in a JSON key', request: (to) => raw(to, { method: 'POST', target: '/api/account', headers: [['Content-Type', 'application/json']], body: JSON.stringify({ [XSS]: 1 }) }), status: 403 },
  { name: 'XSS in a cookie', request: (to) => raw(to, { target: '/api/orders', headers: [['Cookie', `note=${encodeURIComponent(XSS)}`]] }), status: 403 },
  { name: 'coupon on POST /api/orders', request: (to) => raw(to, { method: 'POST', target: '/api/orders', headers: [FORM_TYPE], body: `coupon=${COUPON}` }), status: 403 },
  { name: 'role on PUT /api/account', request: (to) => raw(to, { method: 'PUT', target: '/api/account', headers: [FORM_TYPE], body: `role=${ROLE}` }), status: 403 },
  { name: 'role on PUT /api/account (JSON)', request: (to) => raw(to, { method: 'PUT', target: '/api/account', headers: [['Content-Type', 'application/json']], body: JSON.stringify({ role: ROLE }) }), status: 403 },
  { name: 'Host: evil.example', request: (to) => raw(to, { target: '/api/orders', host: EVIL_HOST }), status: 421 },
];

it('has at least 60 ambiguous shapes, each named once', () => {
  expect(SHAPES.length).toBeGreaterThanOrEqual(60);
  expect(new Set(SHAPES.map((s) => s.name)).size).toBe(SHAPES.length);
});

for (const factory of factories) {
  const framework = factory.framework;
  const title = factory.missing === null ? `${framework} origin` : `${framework} origin (skipped: ${factory.missing})`;

  describe.skipIf(factory.missing !== null)(title, () => {
    it('the markers are refused by the gateway when sent plainly', async () => {
      const wrong: string[] = [];
      for (const marker of MARKERS) {
        const sent = await send(framework, marker.request);
        if (!sent.answered || sent.status !== marker.status || sent.view !== null) wrong.push(`${marker.name}: ${sent.answered ? `${sent.status}${sent.view ? ' from the origin' : ''}` : sent.error}`);
      }
      expect(wrong).toEqual([]);
    });

    it.each(BENIGN.map((b) => [b.name, b] as const))('benign: %s reaches the origin as sent', async (_name, benign) => {
      const sent = await send(framework, benign.request);
      expect(sent.answered && sent.status, sent.answered ? sent.body : sent.error).toBe(200);
      const view = sent.answered ? sent.view : null;
      expect(view, 'the echo answered').not.toBeNull();
      expect(view!.refused).toBeNull();
      expect(view!.method).toBe(benign.method);
      for (const pair of benign.query ?? []) expect(view!.query).toContainEqual(pair);
      for (const pair of benign.body ?? []) expect(view!.body).toContainEqual(pair);
      expect(view!.files).toEqual(benign.files ?? []);
      expect(bypasses(view!)).toEqual([]);
    });

    it.each(SHAPES.map((shape) => [shape.name, shape] as const))('%s', async (_name, shape) => {
      const sent = await send(framework, shape.request);
      // No answer in time is no bypass: the origin's answer would have come back through the gateway.
      if (!sent.answered) return void outcomes.push({ framework, shape: shape.name, outcome: `no answer: ${sent.error}` });
      // Not the echo's answer: the gateway refused it (or the framework did before the app ran).
      if (sent.view === null) return void outcomes.push({ framework, shape: shape.name, outcome: `refused: ${sent.status}` });
      const found = bypasses(sent.view);
      const outcome = sent.view.refused !== null ? `origin refused: ${sent.view.refused}` : found.length > 0 ? 'BYPASS' : 'reached the origin, no marker';
      outcomes.push({ framework, shape: shape.name, outcome, saw: describeView(sent.view), ...(found.length > 0 ? { bypasses: found } : {}) });
      const leaks = found.length === 0 ? [] : [`${framework}: ${shape.name} → ${found.join('; ')} (saw ${describeView(sent.view)})`];
      leakReport.push(...leaks);
      expect(leaks, shape.differential).toEqual([]);
    });
  });
}
