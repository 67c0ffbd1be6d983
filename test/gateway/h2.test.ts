// HTTP/2 to clients (docs/shield-edge.md, "HTTP/2"): the same request handler, inspection, rules and
// decision records as HTTP/1.1. The inspection bypass corpus (bypass-shapes.ts) is sent once as raw
// HTTP/1.1 and once as raw HTTP/2 frames (test/support/raw-h2.ts: nothing tidied by a client
// library); each shape must get the same verdict and the same decision records both ways. Shapes
// HTTP/2 cannot express are listed with the reason. Then: what the origin receives from an HTTP/2
// request, the advertised limits, and rapid-reset protection (CVE-2023-44487) with node:http2 as
// the attacker.
import { connect as h2Connect, constants, type ClientHttp2Session } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCa, makeLeaf, setSiteTls, storeTestCertificate, testServerKey, type TestCa } from '../support/certificates.ts';
import { eventually } from '../support/gateway.ts';
import { startOrigin, type Echo, type Origin } from '../support/origin.ts';
import { rawH2Request, type RawH2Request } from '../support/raw-h2.ts';
import { rawRequest } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { SHAPES } from './bypass-shapes.ts';

let t: TestServer;
let origin: Origin;
let ca: TestCa;
let serverKey: Buffer;
let tlsPort: number;
let plainPort: number;

beforeAll(async () => {
  origin = await startOrigin();
  ca = makeCa();
  t = await startTestServer({
    rateLimitPerMinute: 1_000_000,
    shieldEnabled: true,
    shieldPort: 0,
    shieldTlsPort: 0,
    trustedProxies: [],
    shieldAllowSampleRate: 1,
    acmeDirectoryUrl: 'http://127.0.0.1:9/directory',
  });
  serverKey = await testServerKey(t.database.dataDir);
  tlsPort = t.server.gateway!.tlsPort!;
  plainPort = t.server.gateway!.port;
}, 60_000);
afterAll(async () => {
  await t?.close();
  await origin?.close();
  ca?.close();
});

/** A site with a certificate for its domain, in block mode; `patches` as the bypass corpus's. */
async function createSite(host: string, options: { managed?: boolean; patches?: boolean } = {}): Promise<string> {
  const res = await t.call('POST', '/api/v1/shield/sites', { body: { domain: host, origin_url: origin.url, mode: 'block', managed_rules: { enabled: options.managed ?? false }, tls: { mode: 'off' } } });
  expect(res.status, res.text).toBe(201);
  const id = res.body.id as string;
  const { org_id: orgId } = await t.server.database.db.selectFrom('shield_sites').select('org_id').where('id', '=', id).executeTakeFirstOrThrow();
  await setSiteTls(t.server.database.db, id, { mode: 'custom' });
  const leaf = makeLeaf(ca, [host]);
  await storeTestCertificate(t.server.database.db, serverKey, { siteId: id, orgId, chainPem: leaf.chainPem, keyPem: leaf.keyPem });
  if (options.patches) {
    for (const patch of [
      { url_pattern: '/search', method: 'GET', match_param: 'q', match_regex: '(?i)union\\s+select' },
      { url_pattern: '/api/orders', method: 'POST', match_param: 'note', match_regex: '<script' },
    ]) {
      const created = await t.call('POST', `/api/v1/shield/sites/${id}/virtual-patches`, { body: patch });
      expect(created.status, created.text).toBe(201);
    }
  }
  await t.server.gateway!.registry.refresh();
  await t.server.gateway!.certificates!.refresh();
  return id;
}

const received = (tag: string): Echo | undefined => origin.received.find((echo) => echo.headers['x-shape'] === tag);

/** Decision records written for the site since `from` (the records' count before the request). */
async function recordsOf(siteId: string): Promise<{ action: string; rule_kind: string | null; rule_id: string | null; status: number }[]> {
  await t.server.shieldEvents.recorder.flush();
  return t.server.database.db.selectFrom('shield_events').select(['action', 'rule_kind', 'rule_id', 'status']).where('site_id', '=', siteId).orderBy('id').execute();
}

/** A raw HTTP/1.1 request as the HTTP/2 request with the same semantics, or why there is none. */
function asHttp2(bytes: Buffer): RawH2Request | { cannot: string } {
  const split = bytes.indexOf('\r\n\r\n');
  const lines = bytes.subarray(0, split).toString('latin1').split('\r\n');
  let body = bytes.subarray(split + 4);
  const requestLine = /^(\S+) (.*) HTTP\/1\.1$/.exec(lines[0]!);
  if (!requestLine) throw new Error(`not a request line: ${lines[0]}`);
  const [, method, target] = requestLine as unknown as [string, string, string];
  if (!target.startsWith('/')) return { cannot: 'HTTP/2 has no absolute-form: the target is :scheme, :authority and :path, and an absolute URI in :path is malformed (RFC 9113 §8.3.1)' };
  const fields = lines.slice(1);
  if (fields.some((line) => line.startsWith(' ') || line.startsWith('\t'))) return { cannot: 'HTTP/2 header fields cannot be folded across lines (obs-fold is HTTP/1.1 syntax)' };
  const headers: [string, string][] = fields.map((line) => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
  });
  const te = headers.filter(([name]) => name === 'transfer-encoding');
  let chunkBytes: number | undefined;
  if (te.length > 0) {
    if (te.length > 1 || te[0]![1].toLowerCase() !== 'chunked' || headers.some(([name]) => name === 'content-length')) {
      return { cannot: 'HTTP/2 has no Transfer-Encoding: DATA frames delimit the body, so a second, conflicting length cannot be written (a Content-Length that disagrees with them is a stream error)' };
    }
    // Chunked framing is what DATA frames do: the same body, in 7-byte frames, without Content-Length.
    const parts: Buffer[] = [];
    for (let at = 0; ; ) {
      const eol = body.indexOf('\r\n', at);
      const size = parseInt(body.subarray(at, eol).toString('latin1'), 16);
      if (size === 0) break;
      parts.push(body.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    body = Buffer.concat(parts);
    chunkBytes = 7;
  }
  const host = headers.find(([name]) => name === 'host')![1];
  // Connection-specific fields do not exist in HTTP/2; Host becomes :authority.
  const rest = headers.filter(([name]) => !['host', 'connection', 'transfer-encoding'].includes(name));
  return { authority: host, method, path: target, headers: rest, ...(body.length > 0 ? { body } : {}), ...(chunkBytes ? { chunkBytes } : {}) };
}

/** The shapes HTTP/2 cannot carry, and why: listed, not silently dropped. */
const HTTP1_ONLY = ['absolute-form request target', 'Content-Type folded across lines (obs-fold)', 'Content-Length and Transfer-Encoding together', 'unknown Transfer-Encoding'];

describe('the bypass corpus over HTTP/2 and HTTP/1.1', () => {
  let siteId: string;
  const host = 'corpus.h2.test';
  let count = 0;
  beforeAll(async () => {
    siteId = await createSite(host, { managed: true, patches: true });
  });

  it('lists the shapes HTTP/2 cannot express, each with the reason', () => {
    const cannot = SHAPES.map((shape) => [shape.name, asHttp2(shape.request(host, 'probe'))] as const).filter(([, r]) => 'cannot' in r);
    expect(cannot.map(([name]) => name).sort()).toEqual([...HTTP1_ONLY].sort());
    for (const [, r] of cannot) expect('cannot' in r && r.cannot.length).toBeGreaterThan(20);
  });

  it.each(SHAPES.filter((shape) => !HTTP1_ONLY.includes(shape.name)).map((shape) => [shape.name, shape] as const))('%s: same verdict and records', async (_name, shape) => {
    const n = ++count;
    const tag1 = `h1-${n}`;
    const before1 = (await recordsOf(siteId)).length;
    const h1 = await rawRequest(plainPort, shape.request(host, tag1), 10_000);
    const records1 = (await recordsOf(siteId)).slice(before1);

    const tag2 = `h2-${n}`;
    const request = asHttp2(shape.request(host, tag2));
    if ('cannot' in request) throw new Error(request.cannot);
    const before2 = (await recordsOf(siteId)).length;
    const h2 = await rawH2Request(tlsPort, ca.certPem, request);
    const records2 = (await recordsOf(siteId)).slice(before2);

    const echo1 = received(tag1);
    const echo2 = received(tag2);
    expect(echo2 !== undefined, `forwarded over HTTP/1.1: ${echo1 !== undefined} (status ${h1.status}); over HTTP/2: ${echo2 !== undefined} (status ${h2.status}, reset ${h2.resetCode})`).toBe(echo1 !== undefined);
    expect(records2).toEqual(records1);
    // A refusal by the protocol layer itself (no record) may differ in form: a 400 over HTTP/1.1, a reset stream over HTTP/2.
    if (records1.length > 0) expect(h2.status).toBe(h1.status);
    if (echo1 && echo2) {
      expect({ method: echo2.method, url: echo2.url, body: echo2.bodySha256, type: echo2.headers['content-type'], coding: echo2.headers['content-encoding'] }).toEqual({
        method: echo1.method,
        url: echo1.url,
        body: echo1.bodySha256,
        type: echo1.headers['content-type'],
        coding: echo1.headers['content-encoding'],
      });
    }
  });
});

describe('HTTP/2 requests', () => {
  let client: ClientHttp2Session | undefined;
  beforeAll(async () => {
    await createSite('plain.h2.test');
  });
  afterAll(() => client?.close());

  const h2Get = (session: ClientHttp2Session, headers: Record<string, string | string[]>) =>
    new Promise<{ status: number; body: string; headers: Record<string, unknown> }>((resolve, reject) => {
      const req = session.request(headers);
      let body = '';
      let head: Record<string, unknown> = {};
      req.on('response', (h) => (head = h));
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => resolve({ status: Number(head[':status']), body, headers: head }));
      req.on('error', reject);
      req.end();
    });

  it('reaches the origin as an HTTP/1.1 request would: Host from :authority, cookies joined, no pseudo-headers', async () => {
    client = h2Connect(`https://127.0.0.1:${tlsPort}`, { ca: ca.certPem, servername: 'plain.h2.test' });
    const answer = await h2Get(client, { ':path': '/path?x=1', ':authority': 'plain.h2.test', cookie: ['a=1', 'b=2'], 'x-shape': 'h2-plain' });
    expect(answer.status).toBe(200);
    const echo = JSON.parse(answer.body) as Echo;
    const h1 = await rawRequest(plainPort, 'GET /path?x=1 HTTP/1.1\r\nHost: plain.h2.test\r\nCookie: a=1\r\nCookie: b=2\r\nX-Shape: h1-plain\r\nConnection: close\r\n\r\n');
    expect(h1.status).toBe(200);
    // What the origin received (the raw HTTP/1.1 answer's body is chunked, not JSON as it stands).
    const echo1 = received('h1-plain')!;
    expect(echo1).toBeDefined();
    expect(Object.keys(echo.headers).filter((name) => name.startsWith(':'))).toEqual([]);
    expect(echo.url).toBe(echo1.url);
    expect(echo.headers.cookie).toBe('a=1; b=2');
    expect(echo.headers.cookie).toBe(echo1.headers.cookie);
    expect(echo.headers['x-forwarded-host']).toBe(echo1.headers['x-forwarded-host']);
    expect(echo.headers['x-forwarded-proto']).toBe('https');
    expect(echo.headers.forwarded).toMatch(/proto=https;host="plain\.h2\.test"/);
    // The response carries nothing HTTP/2 forbids (the origin sent Connection and a hop header).
    expect(answer.headers['x-origin-private']).toBeUndefined();
  });

  it('advertises its limits: 100 streams, a 64 KiB header list, no push', async () => {
    client ??= h2Connect(`https://127.0.0.1:${tlsPort}`, { ca: ca.certPem, servername: 'plain.h2.test' });
    await eventually(async () => client!.remoteSettings.maxConcurrentStreams !== undefined && client!.remoteSettings.maxConcurrentStreams < 1000);
    expect(client.remoteSettings).toMatchObject({ maxConcurrentStreams: 100, maxHeaderListSize: 65_536, enablePush: false });
  });

  it('answers 400 when :authority and Host disagree', async () => {
    const answer = await rawH2Request(tlsPort, ca.certPem, { authority: 'plain.h2.test', method: 'GET', path: '/', headers: [['host', 'corpus.h2.test']] });
    expect(answer.status).toBe(400);
  });

  it('answers 431 to a header list past 64 KiB, as HTTP/1.1 does, even before the client acknowledged our settings', async () => {
    const big: [string, string][] = [['x-shape', 'h2-too-large'], ...[1, 2, 3].map((i): [string, string] => [`x-pad-${i}`, 'a'.repeat(24 * 1024)])];
    const answer = await rawH2Request(tlsPort, ca.certPem, { authority: 'plain.h2.test', method: 'GET', path: '/', headers: big });
    expect(answer.status).toBe(431);
    expect(received('h2-too-large')).toBeUndefined();
    const h1 = await rawRequest(plainPort, `GET / HTTP/1.1\r\nHost: plain.h2.test\r\n${big.map(([n, v]) => `${n}: ${v}\r\n`).join('')}Connection: close\r\n\r\n`);
    expect(h1.status).toBe(431);
  });

  it('answers 421 on a connection made for another site', async () => {
    const answer = await rawH2Request(tlsPort, ca.certPem, { servername: 'plain.h2.test', authority: 'corpus.h2.test', method: 'GET', path: '/' });
    expect(answer.status).toBe(421);
  });
});

describe('rapid reset (CVE-2023-44487)', () => {
  it('sends GOAWAY ENHANCE_YOUR_CALM to a client that cancels streams as fast as it opens them, and closes its connection', async () => {
    const attacker = h2Connect(`https://127.0.0.1:${tlsPort}`, { ca: ca.certPem, servername: 'plain.h2.test' });
    attacker.on('error', () => undefined);
    const goaway = new Promise<{ code: number; debug: string }>((resolve) => attacker.once('goaway', (code: number, _last: number, data?: Buffer) => resolve({ code, debug: data?.toString('utf8') ?? '' })));
    const closed = new Promise<void>((resolve) => attacker.once('close', () => resolve()));
    await new Promise<void>((resolve) => attacker.once('connect', () => resolve()));
    for (let i = 0; i < 1_000 && !attacker.closed && !attacker.destroyed; i++) {
      const stream = attacker.request({ ':path': `/reset-${i}`, ':authority': 'plain.h2.test' });
      stream.on('error', () => undefined);
      stream.close(constants.NGHTTP2_CANCEL);
      if (i % 50 === 49) await new Promise((r) => setImmediate(r));
    }
    const got = await goaway;
    expect(got.code).toBe(constants.NGHTTP2_ENHANCE_YOUR_CALM);
    expect(got.debug).toContain('too many streams reset');
    await closed;
    await eventually(async () => t.logs.some((line) => line.includes('rapid reset')));
    // Other clients are not affected.
    const fresh = await rawH2Request(tlsPort, ca.certPem, { authority: 'plain.h2.test', method: 'GET', path: '/after' });
    expect(fresh.status).toBe(200);
  });
});
