// Issue 45, finding by finding: what a virtual patch and the managed rules block in plain form must
// not reach the origin because the gateway and the origin read the same bytes differently, and no
// proxy behaviour may leak or starve. Each test sends the attack through the real gateway (raw
// bytes where a client library would tidy them) to an echo origin that records what it received.
// The parser-differential harness (parser-differential.test.ts) runs a wider corpus against
// Express, Flask and PHP; these are the findings as they were reported.
import { connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasEnoughWork } from '../../gateway/challenge/tokens.ts';
import { DEFAULT_BODY_ADMISSION } from '../../gateway/proxy/body-admission.ts';
import { eventually, viaGateway } from '../support/gateway.ts';
import { startOrigin, type Echo, type Origin } from '../support/origin.ts';
import { rawRequest } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let origin: Origin;
let gatewayPort: number;
const XSS = '<script>alert(1)</script>';

beforeAll(async () => {
  origin = await startOrigin();
  t = await startTestServer({
    rateLimitPerMinute: 1_000_000,
    shieldEnabled: true,
    shieldPort: 0,
    // 127.0.0.1 is a trusted proxy (tests name clients in X-Forwarded-For); 127.0.0.2 is a client.
    trustedProxies: ['127.0.0.1'],
    challengeDifficultyBits: 4,
    shieldAllowSampleRate: 1,
    shieldBodyBudget: { ...DEFAULT_BODY_ADMISSION, graceMs: 1_000, minBytesPerSecond: 1024, bytesPerClient: 4 * 1024 * 1024 },
  });
  gatewayPort = t.server.gateway!.port;
}, 60_000);
afterAll(async () => {
  await t?.close();
  await origin?.close();
});

let siteCount = 0;
async function createSite(mode: 'block' | 'challenge' = 'block', managed = false): Promise<{ id: string; host: string }> {
  const host = `site${++siteCount}.hardening.test`;
  const res = await t.call('POST', '/api/v1/shield/sites', { body: { domain: host, origin_url: origin.url, mode, managed_rules: { enabled: managed } } });
  expect(res.status, res.text).toBe(201);
  await t.server.gateway!.registry.refresh();
  return { id: res.body.id, host };
}

async function addRule(siteId: string, collection: string, body: unknown): Promise<string> {
  const res = await t.call('POST', `/api/v1/shield/sites/${siteId}/${collection}`, { body });
  expect(res.status, res.text).toBe(201);
  await t.server.gateway!.registry.refresh();
  return res.body.id as string;
}

const notePatch = { url_pattern: '/api/*', method: 'ANY', match_param: 'note', match_regex: '<script' };

/**
 * One raw request from `localAddress` (127.0.0.2: an untrusted client), its final response. With
 * `body`, the headers go first and the body after the gateway's `100 Continue`.
 */
function rawFrom(localAddress: string, request: Buffer | string, body?: Buffer | string): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port: gatewayPort, host: '127.0.0.1', localAddress });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => {
      if (body !== undefined && c.toString('latin1').startsWith('HTTP/1.1 100 ')) {
        socket.write(body);
        return;
      }
      chunks.push(c);
    });
    socket.on('error', reject);
    // The request says Connection: close, so the gateway closes once it has answered.
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), head: text.slice(0, split), body: text.slice(split + 4) });
    });
    socket.write(request);
  });
}

const head = (lines: string[], body: Buffer | string = ''): Buffer => {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1');
  return Buffer.concat([Buffer.from(`${[...lines, 'Connection: close', `Content-Length: ${bytes.length}`].join('\r\n')}\r\n\r\n`, 'latin1'), bytes]);
};

const received = (tag: string): Echo | undefined => origin.received.find((e) => e.headers['x-tag'] === tag);

describe('the origin reads what the gateway inspected', () => {
  it('1. a gzip body whose coding Connection lists is forwarded decoded: the header comment never reaches the origin', async () => {
    const site = await createSite();
    await addRule(site.id, 'virtual-patches', notePatch);
    // A gzip member with FCOMMENT carrying a form; the compressed data is harmless.
    const plain = gzipSync(Buffer.from('text=hello'));
    const comment = Buffer.from(`&note=${XSS}&\0`, 'latin1');
    const withComment = Buffer.concat([plain.subarray(0, 3), Buffer.from([plain[3]! | 0x10]), plain.subarray(4, 10), comment, plain.subarray(10)]);
    const res = await rawRequest(gatewayPort, head(['POST /api/orders HTTP/1.1', `Host: ${site.host}`, 'X-Tag: gzip-comment', 'Content-Type: application/x-www-form-urlencoded', 'Content-Encoding: gzip', 'Connection: keep-alive, Content-Encoding'], withComment));
    expect(res.status).toBe(200);
    const echo = received('gzip-comment')!;
    expect(echo.body).toBe('text=hello');
    expect(echo.headers['content-encoding']).toBeUndefined();
  });

  it('2. multipart parsers disagree on (padded delimiters, attachment parts, UTF-16 parts) is refused', async () => {
    const site = await createSite();
    await addRule(site.id, 'virtual-patches', notePatch);
    const bodies = [
      `--AAA   \r\nContent-Disposition: form-data; name="note"\r\n\r\n${XSS}\r\n--AAA--\r\n`,
      `--AAA\r\nContent-Disposition: attachment; name="note"\r\n\r\n${XSS}\r\n--AAA--\r\n`,
      `--AAA\r\nContent-Disposition: form-data; name="note"\r\nContent-Type: text/plain; charset=utf-16le\r\n\r\n${XSS}\r\n--AAA--\r\n`,
    ];
    for (const [i, body] of bodies.entries()) {
      const res = await rawRequest(gatewayPort, head(['POST /api/orders HTTP/1.1', `Host: ${site.host}`, `X-Tag: multipart-${i}`, 'Content-Type: multipart/form-data; boundary=AAA'], body));
      expect(res.status, `body ${i}`).toBe(400);
      expect(received(`multipart-${i}`)).toBeUndefined();
    }
  });

  it('3. a form in a charset frameworks ignore is refused', async () => {
    const site = await createSite();
    await addRule(site.id, 'virtual-patches', notePatch);
    const res = await rawRequest(gatewayPort, head(['POST /api/orders HTTP/1.1', `Host: ${site.host}`, 'X-Tag: utf16-form', 'Content-Type: application/x-www-form-urlencoded; charset=utf-16le'], `note=${XSS}`));
    expect(res.status).toBe(400);
    expect(received('utf16-form')).toBeUndefined();
  });

  it('5. a POST that overrides its method to PUT is judged by the PUT rule', async () => {
    const site = await createSite();
    await addRule(site.id, 'virtual-patches', { url_pattern: '/api/account', method: 'PUT', match_param: 'role', match_regex: 'superuser' });
    for (const [tag, lines, body] of [
      ['override-header', ['X-HTTP-Method-Override: PUT'], 'role=superuser'],
      ['override-field', [], '_method=PUT&role=superuser'],
    ] as const) {
      const res = await rawRequest(gatewayPort, head(['POST /api/account HTTP/1.1', `Host: ${site.host}`, `X-Tag: ${tag}`, 'Content-Type: application/x-www-form-urlencoded', ...lines], body));
      expect(res.status, tag).toBe(403);
      expect(received(tag)).toBeUndefined();
    }
    // Without the override the POST is not the PUT rule's business.
    expect((await rawRequest(gatewayPort, head(['POST /api/account HTTP/1.1', `Host: ${site.host}`, 'Content-Type: application/x-www-form-urlencoded'], 'role=superuser'))).status).toBe(200);
  });

  it('6. a Host with userinfo or a path is a 400; the origin is told the host that was routed', async () => {
    const site = await createSite();
    for (const host of [`${site.host}:@evil.example`, `${site.host}/x`, `evil.example@${site.host}`, `${site.host}:80:81`]) {
      const res = await rawRequest(gatewayPort, head(['GET /reset HTTP/1.1', `Host: ${host}`, 'X-Tag: bad-host']));
      expect(res.status, host).toBe(400);
    }
    expect(received('bad-host')).toBeUndefined();
    const ok = await rawFrom('127.0.0.2', head(['GET /reset HTTP/1.1', `Host: ${site.host.toUpperCase()}.:8080`, 'X-Tag: good-host', 'X-Forwarded-Host: evil.example']));
    expect(ok.status).toBe(200);
    expect(received('good-host')!.headers['x-forwarded-host']).toBe(`${site.host}:8080`);
  });

  it('7. forwarding and identity headers from a client are replaced, never passed on', async () => {
    const site = await createSite();
    const claims = ['X-Real-IP: 10.0.0.1', 'Forwarded: for=10.0.0.1;host=evil.example', 'True-Client-IP: 10.0.0.1', 'X-Original-URL: /admin', 'X-Rewrite-URL: /admin', 'X-Client-IP: 10.0.0.1', 'X-Forwarded-Port: 1', 'X_Forwarded_For: 10.0.0.1'];
    const res = await rawFrom('127.0.0.2', head(['GET /page HTTP/1.1', `Host: ${site.host}`, 'X-Tag: claims', ...claims]));
    expect(res.status).toBe(200);
    const seen = received('claims')!.headers;
    expect(seen['x-real-ip']).toBe('127.0.0.2');
    expect(seen.forwarded).toBe(`for=127.0.0.2;proto=http;host="${site.host}"`);
    expect(seen['x-forwarded-for']).toBe('127.0.0.2');
    for (const name of ['true-client-ip', 'x-original-url', 'x-rewrite-url', 'x-client-ip', 'x-forwarded-port', 'x_forwarded_for']) expect(seen[name], name).toBeUndefined();
  });
});

describe('4. a challenge clearance answers challenges, not blocks', () => {
  it('a solved challenge passes challenge rules, but IP denies, rate limits and patches still apply', async () => {
    const site = await createSite('challenge');
    const from = '198.51.100.44';
    await addRule(site.id, 'ip-access', { type: 'ip', value: from, action: 'challenge' });
    await addRule(site.id, 'virtual-patches', notePatch);
    await addRule(site.id, 'rate-limits', { identity: 'ip', url_pattern: '/limited', method: 'ANY', budget: 2, window_seconds: 60, action: 'block' });
    await addRule(site.id, 'ip-access', { type: 'ip', value: '198.51.100.45', action: 'deny' });

    const page = await viaGateway(t.server.gateway!.url, '/', { host: site.host, from });
    expect(page.status).toBe(403);
    const seed = /name="seed" value="([^"]*)"/.exec(page.text)![1]!.replace(/&amp;/g, '&');
    let nonce = 0;
    while (!hasEnoughWork(seed, String(nonce), 4)) nonce++;
    const solved = await viaGateway(t.server.gateway!.url, '/.aegis/challenge', {
      host: site.host,
      from,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ seed, nonce: String(nonce), return_to: '/' }).toString(),
    });
    expect(solved.status).toBe(303);
    const cookie = String(solved.headers['set-cookie']).split(';')[0]!;
    const cleared = (path: string, options: { from?: string; method?: string; body?: string } = {}) =>
      viaGateway(t.server.gateway!.url, path, { host: site.host, from: options.from ?? from, method: options.method ?? 'GET', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, ...(options.body ? { body: options.body } : {}) });

    expect((await cleared('/')).status).toBe(200);
    // The site's challenge mode softens this patch's block into a challenge; cleared, it blocks.
    expect((await cleared('/api/orders', { method: 'POST', body: `note=${encodeURIComponent(XSS)}` })).status).toBe(403);
    expect((await cleared('/limited')).status).toBe(200);
    expect((await cleared('/limited')).status).toBe(200);
    expect((await cleared('/limited')).status).toBe(429);
    expect((await cleared('/', { from: '198.51.100.45' })).status).toBe(403);
  });
});

describe('8. slow bodies starve nothing', () => {
  it('200 stalled uploads from one client hold no origin connection and do not delay another client', async () => {
    const site = await createSite();
    const before = origin.received.length;
    const timed = async () => {
      const started = performance.now();
      const res = await viaGateway(t.server.gateway!.url, '/fast', { host: site.host, from: '198.51.100.90' });
      expect(res.status).toBe(200);
      return performance.now() - started;
    };
    const median = async () => {
      const times = [];
      for (let i = 0; i < 7; i++) times.push(await timed());
      return times.sort((a, b) => a - b)[3]!;
    };
    const baseline = await median();

    const sockets: Socket[] = [];
    const answers: number[] = [];
    for (let i = 0; i < 200; i++) {
      const socket = connect({ port: gatewayPort, host: '127.0.0.1' });
      socket.on('error', () => undefined);
      socket.on('data', (chunk: Buffer) => answers.push(Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 0)));
      socket.write(`POST /upload HTTP/1.1\r\nHost: ${site.host}\r\nX-Forwarded-For: 198.51.100.66\r\nContent-Type: application/octet-stream\r\nContent-Length: 1048576\r\n\r\nx`);
      sockets.push(socket);
    }
    // Those past the client's share of concurrent uploads are turned away at once (429).
    await eventually(async () => answers.length >= 200 - DEFAULT_BODY_ADMISSION.uploadsPerClient, 10_000);
    expect(answers.every((status) => status === 429)).toBe(true);

    const underAttack = await median();
    expect(underAttack - baseline).toBeLessThan(100);
    // Nothing of the stalled uploads reached the origin: they hold sockets of the gateway only.
    expect(origin.received.slice(before).filter((e) => e.url === '/upload')).toEqual([]);

    // Too slow for the minimum rate once the grace period is over: 408, and the sockets are let go.
    await eventually(async () => answers.length >= 200, 10_000, 100);
    expect(answers.filter((status) => status === 408)).toHaveLength(DEFAULT_BODY_ADMISSION.uploadsPerClient);
    for (const socket of sockets) socket.destroy();
  }, 30_000);

  it('stalled multipart bodies hold at most the client’s share of memory', async () => {
    const site = await createSite('block', true);
    const sockets: Socket[] = [];
    const statuses: number[] = [];
    const part = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 12; i++) {
      const socket = connect({ port: gatewayPort, host: '127.0.0.1' });
      socket.on('error', () => undefined);
      socket.on('data', (chunk: Buffer) => statuses.push(Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 0)));
      socket.write(`POST /upload HTTP/1.1\r\nHost: ${site.host}\r\nX-Forwarded-For: 198.51.100.67\r\nContent-Type: multipart/form-data; boundary=AAA\r\nContent-Length: ${8 * 1024 * 1024}\r\n\r\n--AAA\r\nContent-Disposition: form-data; name="f"; filename="a"\r\n\r\n${part}`);
      sockets.push(socket);
    }
    await eventually(async () => statuses.length >= 8, 10_000);
    expect(statuses.every((status) => status === 429)).toBe(true);
    expect(t.server.gateway!.heldBodyBytes()).toBeLessThanOrEqual(4 * 1024 * 1024);
    for (const socket of sockets) socket.destroy();
    await eventually(async () => t.server.gateway!.heldBodyBytes() === 0, 10_000);
  }, 30_000);

  it('bodies that arrived whole and wait on a slow origin do not count as uploads: 50 small POSTs from one client all go through', async () => {
    const site = await createSite();
    const statuses: number[] = [];
    const sockets: Socket[] = [];
    for (let i = 0; i < 50; i++) {
      const socket = connect({ port: gatewayPort, host: '127.0.0.1' });
      socket.on('error', () => undefined);
      socket.on('data', (chunk: Buffer) => statuses.push(Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 0)));
      socket.write(`POST /slow/form/${i} HTTP/1.1\r\nHost: ${site.host}\r\nX-Forwarded-For: 198.51.100.83\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"n":"abc"}`);
      sockets.push(socket);
    }
    await eventually(async () => statuses.length >= 50, 15_000, 100);
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    for (const socket of sockets) socket.destroy();
  }, 30_000);

  it('one client holds its share of an origin and more only while a share stays free: past that 429, and another client still gets through', async () => {
    const site = await createSite();
    // Slow answers (3 s) from one client address, sent at once: the pool holds 128 connections, a share is 32.
    const slow = (client: string, count: number) => {
      const statuses: number[] = [];
      const sockets: Socket[] = [];
      for (let i = 0; i < count; i++) {
        const socket = connect({ port: gatewayPort, host: '127.0.0.1' });
        socket.on('error', () => undefined);
        socket.on('data', (chunk: Buffer) => statuses.push(Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 0)));
        socket.write(`GET /slow/${client}/${i} HTTP/1.1\r\nHost: ${site.host}\r\nX-Forwarded-For: ${client}\r\n\r\n`);
        sockets.push(socket);
      }
      return { statuses, sockets };
    };
    // On a quiet origin, 40 at once (past the share) all go through.
    const busy = slow('198.51.100.80', 40);
    await eventually(async () => busy.statuses.length >= 40, 15_000, 100);
    expect(busy.statuses.filter((s) => s === 200)).toHaveLength(40);
    // 110 at once: past 96 in flight (a share of the pool left), this client's extra requests are refused.
    const greedy = slow('198.51.100.81', 110);
    await eventually(async () => greedy.statuses.length >= 14, 10_000);
    expect(greedy.statuses.slice(0, 14).every((s) => s === 429)).toBe(true);
    const other = slow('198.51.100.82', 1);
    await eventually(async () => greedy.statuses.length >= 110 && other.statuses.length >= 1, 15_000, 100);
    expect(other.statuses).toEqual([200]);
    expect(greedy.statuses.filter((s) => s === 200)).toHaveLength(96);
    for (const socket of [...busy.sockets, ...greedy.sockets, ...other.sockets]) socket.destroy();
  }, 40_000);
});

describe('9. the smaller findings', () => {
  it('an upload with Expect: 100-continue reaches the origin', async () => {
    const site = await createSite();
    const headers = `POST /api/expect HTTP/1.1\r\nHost: ${site.host}\r\nX-Tag: expect\r\nContent-Type: text/plain\r\nExpect: 100-continue\r\nContent-Length: 5\r\nConnection: close\r\n\r\n`;
    const res = await rawFrom('127.0.0.2', headers, 'hello');
    expect(res.status).toBe(200);
    expect(received('expect')).toMatchObject({ body: 'hello' });
    expect(received('expect')!.headers.expect).toBeUndefined();
  });

  it('a junk Authorization rotated beside a fixed X-Api-Key is not a fresh identity for an api_key rate limit', async () => {
    const site = await createSite();
    await addRule(site.id, 'rate-limits', { identity: 'api_key', url_pattern: '/api/*', method: 'ANY', budget: 3, window_seconds: 60, action: 'block' });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await viaGateway(t.server.gateway!.url, '/api/data', { host: site.host, from: '198.51.100.70', headers: { authorization: `Bearer junk-${i}`, 'x-api-key': 'the-real-key' } });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
  });

  it('a client’s X-Request-Id is neither shown on our pages nor recorded as ours; it travels on as X-Client-Request-Id', async () => {
    const site = await createSite();
    await addRule(site.id, 'virtual-patches', { url_pattern: '/blocked', method: 'ANY', match_param: 'q', match_regex: 'attack' });
    const blocked = await rawFrom('127.0.0.2', head(['GET /blocked?q=attack HTTP/1.1', `Host: ${site.host}`, 'X-Request-Id: forged-request-id-1234']));
    expect(blocked.status).toBe(403);
    expect(blocked.body).not.toContain('forged-request-id-1234');
    const ours = /x-request-id: (\S+)/i.exec(blocked.head)![1]!;
    expect(ours).toMatch(/^req_/);
    await t.server.shieldEvents.recorder.flush();
    const row = await t.server.database.db.selectFrom('shield_events').select('request_id').where('site_id', '=', site.id).executeTakeFirstOrThrow();
    expect(row.request_id).toBe(ours);

    const passed = await rawFrom('127.0.0.2', head(['GET /page HTTP/1.1', `Host: ${site.host}`, 'X-Tag: client-id', 'X-Request-Id: forged-request-id-1234']));
    expect(passed.status).toBe(200);
    const echo = received('client-id')!;
    expect(echo.headers['x-request-id']).toMatch(/^req_/);
    expect(echo.headers['x-client-request-id']).toBe('forged-request-id-1234');
  });
});
