// WebSockets through the Shield gateway end to end: a real API server running the gateway, a real
// `ws` origin (test/support/ws-origin.ts), the `ws` package as the client and raw sockets where the
// bytes matter. An upgrade is decided like any request (IP rules, rate limits, managed rules, the
// schema), recorded, and when allowed joined to the origin until either side closes or it idles.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { eventually } from '../support/gateway.ts';
import { rawRequest } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { serverTextFrame, startWsOrigin, type WsOrigin } from '../support/ws-origin.ts';

const IDLE_MS = 2_000;
const MAX_PER_SITE = 3;
const UPSTREAM_TIMEOUT_MS = 1_500;
const METRICS_TOKEN = 'ws-metrics-token';

let t: TestServer;
let origin: WsOrigin;
let gatewayPort: number;

beforeAll(async () => {
  origin = await startWsOrigin();
  t = await startTestServer({
    rateLimitPerMinute: 100_000,
    shieldEnabled: true,
    shieldPort: 0,
    // Loopback is a trusted proxy: tests name clients in X-Forwarded-For.
    trustedProxies: ['127.0.0.1'],
    shieldAllowSampleRate: 1,
    upstreamTimeoutMs: UPSTREAM_TIMEOUT_MS,
    shieldWsIdleMs: IDLE_MS,
    shieldWsMaxPerSite: MAX_PER_SITE,
    metricsPort: 0,
    metricsHost: '127.0.0.1',
    metricsToken: METRICS_TOKEN,
  });
  gatewayPort = t.server.gateway!.port;
}, 60_000);
afterAll(async () => {
  await t?.close();
  await origin?.close();
});

let siteCount = 0;
async function createSite(options: { managed?: boolean; mode?: 'block' | 'challenge'; originUrl?: string } = {}): Promise<{ id: string; host: string }> {
  const host = `site${++siteCount}.websocket.test`;
  const res = await t.call('POST', '/api/v1/shield/sites', { body: { domain: host, origin_url: options.originUrl ?? origin.url, mode: options.mode ?? 'block', managed_rules: { enabled: options.managed ?? false } } });
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

interface Recorded {
  action: string;
  rule_kind: string | null;
  rule_id: string | null;
  client_ip: string;
  method: string;
  path: string;
  status: number;
  request_id: string;
}

async function events(siteId: string): Promise<Recorded[]> {
  await t.server.shieldEvents.recorder.flush();
  return t.server.database.db.selectFrom('shield_events').selectAll().where('site_id', '=', siteId).orderBy('id').execute();
}

type Upgrade = { open: true; ws: WebSocket; headers: IncomingHttpHeaders } | { open: false; status: number; headers: IncomingHttpHeaders; body: string };

/** A `ws` client through the gateway: the open socket, or the HTTP answer that refused it. */
function openWs(host: string, path: string, options: { from?: string; headers?: Record<string, string> } = {}): Promise<Upgrade> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host, ...options.headers };
    if (options.from) headers['x-forwarded-for'] = options.from;
    const ws = new WebSocket(`ws://127.0.0.1:${gatewayPort}${path}`, { headers });
    let upgradeHeaders: IncomingHttpHeaders = {};
    ws.once('upgrade', (res) => (upgradeHeaders = res.headers));
    ws.once('open', () => resolve({ open: true, ws, headers: upgradeHeaders }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ open: false, status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    ws.once('error', reject);
  });
}

async function mustOpen(host: string, path: string, options: { from?: string } = {}): Promise<WebSocket> {
  const up = await openWs(host, path, options);
  if (!up.open) throw new Error(`upgrade refused: ${up.status} ${up.body}`);
  return up.ws;
}

async function refused(host: string, path: string, options: { from?: string; headers?: Record<string, string> } = {}): Promise<Extract<Upgrade, { open: false }>> {
  const up = await openWs(host, path, options);
  if (up.open) {
    up.ws.terminate();
    throw new Error(`upgrade to ${path} was not refused`);
  }
  return up;
}

function nextMessage(ws: WebSocket): Promise<{ data: Buffer; isBinary: boolean }> {
  return new Promise((resolve) => ws.once('message', (data, isBinary) => resolve({ data: Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer), isBinary })));
}

function closed(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function scrape(): Promise<string> {
  const res = await fetch(`${t.server.metricsServer!.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  return res.text();
}

function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)\{(.*)\}\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...m[2]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

/** A masked client text frame (RFC 6455 §5.3) of a short payload. */
function clientTextFrame(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  const mask = randomBytes(4);
  const masked = Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]!));
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]);
}

/** A raw socket to the gateway, and everything it has received so far. */
function rawSocket(): { socket: Socket; received: () => Buffer } {
  const socket = connect(gatewayPort, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.on('error', () => undefined);
  return { socket, received: () => Buffer.concat(chunks) };
}

const handshake = (host: string, path: string, extra: string[] = []): string =>
  [`GET ${path} HTTP/1.1`, `Host: ${host}`, 'Upgrade: websocket', 'Connection: Upgrade', `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`, 'Sec-WebSocket-Version: 13', ...extra].join('\r\n') + '\r\n\r\n';

describe('echo through the gateway', () => {
  it('carries text, binary and a large message both ways, and records the upgrade with the origin’s 101', async () => {
    const site = await createSite();
    const ws = await mustOpen(site.host, '/echo?room=1', { from: '198.51.100.30' });

    ws.send('hello');
    expect(await nextMessage(ws)).toEqual({ isBinary: false, data: Buffer.from('hello') });
    const binary = Buffer.from([0, 1, 2, 253, 254, 255]);
    ws.send(binary);
    expect(await nextMessage(ws)).toEqual({ isBinary: true, data: binary });
    const large = randomBytes(8 * 1024 * 1024);
    ws.send(large);
    const echoed = await nextMessage(ws);
    expect(echoed.data.length).toBe(large.length);
    expect(sha(echoed.data)).toBe(sha(large));

    const done = closed(ws);
    ws.close(4000, 'client bye');
    expect(await done).toEqual({ code: 4000, reason: 'client bye' });
    await eventually(async () => origin.closes.some((c) => c.url === '/echo?room=1' && c.code === 4000 && c.reason === 'client bye'));

    const recorded = await events(site.id);
    expect(recorded.map((e) => [e.action, e.method, e.path, e.status, e.client_ip])).toEqual([['allow', 'GET', '/echo', 101, '198.51.100.30']]);
  });

  it('passes the origin’s close code to the client', async () => {
    const site = await createSite();
    const ws = await mustOpen(site.host, '/echo?room=2');
    const done = closed(ws);
    ws.send('close:4001');
    expect(await done).toEqual({ code: 4001, reason: 'origin bye' });
  });

  it('forwards the Upgrade/Connection pair with the gateway’s forwarding headers, drops other hop-by-hop headers, and relays bytes sent with either handshake', async () => {
    const site = await createSite();
    const { socket, received } = rawSocket();
    // The handshake and a first frame in one write: node hands the frame over as the upgrade's `head`.
    socket.write(
      Buffer.concat([
        Buffer.from(handshake(site.host, '/echo?raw=1', ['Connection: keep-alive, Upgrade, X-Private', 'X-Private: secret', 'Keep-Alive: timeout=5', 'X-Real-IP: 6.6.6.6', 'X-Forwarded-For: 203.0.113.9']), 'latin1'),
        clientTextFrame('early'),
      ]),
    );
    await eventually(async () => received().includes(Buffer.from('early')));
    const text = received().toString('latin1');
    expect(text).toMatch(/^HTTP\/1\.1 101 /);
    const head = text.slice(0, text.indexOf('\r\n\r\n'));
    expect(head).toMatch(/\r\nupgrade: websocket/i);
    expect(head).toMatch(/\r\nconnection: upgrade/i);
    expect(head).toMatch(/\r\nsec-websocket-accept: /i);
    expect(head).toMatch(/\r\nx-request-id: req_/i);
    socket.destroy();

    const seen = origin.handshakes.find((h) => h.url === '/echo?raw=1')!;
    expect(seen.headers.upgrade).toBe('websocket');
    expect(seen.headers.connection).toBe('Upgrade');
    expect(seen.headers['sec-websocket-key']).toBeTruthy();
    expect(seen.headers['x-private']).toBeUndefined();
    expect(seen.headers['keep-alive']).toBeUndefined();
    expect(seen.headers['x-forwarded-for']).toBe('203.0.113.9, 127.0.0.1');
    expect(seen.headers['x-real-ip']).toBe('203.0.113.9');
    expect(seen.headers['x-forwarded-host']).toBe(site.host);
    expect(seen.headers['x-request-id']).toMatch(/^req_/);
    expect(seen.headers.host).toBe(`127.0.0.1:${origin.port}`);

    // A frame the origin wrote in the same packet as its 101 reaches the client: byte for byte,
    // right after the 101's head...
    const greeted = rawSocket();
    greeted.socket.write(handshake(site.host, '/greet'));
    const frame = serverTextFrame('welcome');
    await eventually(async () => greeted.received().includes(frame));
    const bytes = greeted.received();
    expect(bytes.toString('latin1')).toMatch(/^HTTP\/1\.1 101 /);
    expect(bytes.subarray(bytes.indexOf('\r\n\r\n') + 4)).toEqual(frame);
    greeted.socket.destroy();
    // ...and decoded by a real client. It listens from the start: `ws` emits a frame that came in
    // the same read as the 101 on the tick after 'open', before a caller awaiting the open could listen.
    const ws = new WebSocket(`ws://127.0.0.1:${gatewayPort}/greet`, { headers: { host: site.host } });
    const welcome = nextMessage(ws);
    expect((await welcome).data.toString()).toBe('welcome');
    ws.terminate();
  });

  it('serves a request with another Upgrade (h2c) as an ordinary request, its Upgrade ignored', async () => {
    const site = await createSite();
    const res = await rawRequest(gatewayPort, [`GET /plain HTTP/1.1`, `Host: ${site.host}`, 'Connection: Upgrade, HTTP2-Settings', 'Upgrade: h2c', 'HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA'].join('\r\n') + '\r\n\r\n');
    expect(res.status).toBe(200);
    expect(res.head).toMatch(/\r\nconnection: close/i);
    const seen = origin.requests.find((r) => r.url === '/plain')!;
    expect(seen.headers.upgrade).toBeUndefined();
    expect(seen.headers['http2-settings']).toBeUndefined();
  });
});

describe('upgrades are decided like any request', () => {
  it('managed rules in block mode refuse an upgrade whose query carries SQL injection or path traversal, with 403 and a record', async () => {
    const site = await createSite({ managed: true });
    const sqli = await refused(site.host, `/ws?id=${encodeURIComponent("1' UNION SELECT password FROM users--")}`, { headers: { accept: 'application/json' } });
    expect(sqli.status).toBe(403);
    expect(sqli.headers.connection).toBe('close');
    expect(JSON.parse(sqli.body)).toMatchObject({ error: { code: 'forbidden' } });
    const traversal = await refused(site.host, `/ws?file=${encodeURIComponent('../../../../etc/passwd')}`);
    expect(traversal.status).toBe(403);
    expect(traversal.body).toContain('Request id');
    expect(origin.handshakes.some((h) => h.url.startsWith('/ws?id=') || h.url.startsWith('/ws?file='))).toBe(false);
    // A harmless upgrade on the same site goes through.
    (await mustOpen(site.host, '/ws?id=42')).terminate();

    const recorded = await events(site.id);
    const blocks = recorded.filter((e) => e.action === 'block');
    expect(blocks.map((e) => [e.rule_kind, e.path, e.status])).toEqual([
      ['managed', '/ws', 403],
      ['managed', '/ws', 403],
    ]);
    expect(blocks[0]!.request_id).toBe(sqli.headers['x-request-id']);
  });

  it('an IP deny rule refuses the upgrade', async () => {
    const site = await createSite();
    const rule = await addRule(site.id, 'ip-access', { type: 'ip', value: '198.51.100.7', action: 'deny' });
    expect((await refused(site.host, '/echo', { from: '198.51.100.7' })).status).toBe(403);
    (await mustOpen(site.host, '/echo', { from: '198.51.100.8' })).terminate();
    const recorded = await events(site.id);
    expect(recorded.map((e) => [e.action, e.rule_kind, e.rule_id, e.client_ip, e.status])).toEqual([
      ['block', 'ip_access', rule, '198.51.100.7', 403],
      ['allow', null, null, '198.51.100.8', 101],
    ]);
  });

  it('a rate limit counts upgrades: past the budget, 429 with Retry-After', async () => {
    const site = await createSite();
    const rule = await addRule(site.id, 'rate-limits', { identity: 'ip', url_pattern: '/echo', method: 'GET', budget: 2, window_seconds: 10, action: 'block' });
    for (let i = 0; i < 2; i++) (await mustOpen(site.host, '/echo', { from: '198.51.100.40' })).terminate();
    const limited = await refused(site.host, '/echo', { from: '198.51.100.40' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    const blocks = (await events(site.id)).filter((e) => e.action === 'block');
    expect(blocks.map((e) => [e.rule_kind, e.rule_id, e.status])).toEqual([['rate_limit', rule, 429]]);
  });

  it('a challenge verdict refuses the upgrade with 403 and records a challenge', async () => {
    const site = await createSite();
    await addRule(site.id, 'ip-access', { type: 'ip', value: '198.51.100.50', action: 'challenge' });
    const res = await refused(site.host, '/echo', { from: '198.51.100.50' });
    expect(res.status).toBe(403);
    expect(res.body).not.toContain('<script');
    const recorded = await events(site.id);
    expect(recorded.map((e) => [e.action, e.rule_kind, e.status])).toEqual([['challenge', 'ip_access', 403]]);
  });

  it('schema enforcement applies to a GET the OpenAPI document declares, and refuses an undeclared path', async () => {
    const site = await createSite();
    const document = readFileSync('test/fixtures/openapi/petstore-3.0.yaml', 'utf8');
    const upload = await t.call('PUT', `/api/v1/shield/sites/${site.id}/schema`, { raw: document, headers: { 'content-type': 'application/yaml' } });
    expect(upload.status, upload.text).toBeLessThan(300);
    await t.server.gateway!.registry.refresh();
    (await mustOpen(site.host, '/pet/findByStatus?status=available')).terminate();
    expect((await refused(site.host, '/not/declared')).status).toBe(403);
    expect((await events(site.id)).filter((e) => e.action === 'block').map((e) => e.rule_kind)).toEqual(['schema']);
  });
});

describe('the origin’s side', () => {
  it('relays an origin that refuses the upgrade (403), body and headers, and records its status', async () => {
    const site = await createSite();
    const res = await refused(site.host, '/refuse');
    expect(res.status).toBe(403);
    expect(res.body).toBe('origin says no');
    expect(res.headers['x-origin']).toBe('yes');
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    expect((await events(site.id)).map((e) => [e.action, e.status])).toEqual([['allow', 403]]);
  });

  it('answers 504 when the origin does not answer the handshake in the upstream timeout, 502 when it is unreachable', async () => {
    const site = await createSite();
    const started = Date.now();
    expect((await refused(site.host, '/silent')).status).toBe(504);
    expect(Date.now() - started).toBeGreaterThanOrEqual(UPSTREAM_TIMEOUT_MS - 100);
    const dead = await createSite({ originUrl: 'http://127.0.0.1:9' });
    expect((await refused(dead.host, '/echo')).status).toBe(502);
    expect((await events(dead.id)).map((e) => e.status)).toEqual([502]);
  });

  it('never connects to a metadata-address origin', async () => {
    const site = await createSite();
    const stored = `http://[::ffff:169.254.169.254]:${origin.port}/`;
    await t.server.database.db.updateTable('shield_sites').set({ origin_url: stored }).where('id', '=', site.id).execute();
    await t.server.gateway!.registry.refresh();
    const before = origin.handshakes.length;
    expect((await refused(site.host, '/metadata')).status).toBe(502);
    expect(origin.handshakes.length).toBe(before);
  });

  it('records a client that leaves during the handshake (499), and the gateway keeps serving', async () => {
    const site = await createSite();
    const { socket } = rawSocket();
    socket.write(handshake(site.host, '/silent?leaving=1'));
    await eventually(async () => origin.handshakes.some((h) => h.url === '/silent?leaving=1'));
    socket.destroy();
    await eventually(async () => (await events(site.id)).some((e) => e.status === 499));
    (await mustOpen(site.host, '/echo')).terminate();
  });
});

describe('limits', () => {
  it('closes both sides of a connection idle for AEGIS_SHIELD_WS_IDLE_MS', async () => {
    const site = await createSite();
    const ws = await mustOpen(site.host, '/echo?idle=1');
    const started = Date.now();
    const done = await closed(ws);
    const took = Date.now() - started;
    expect(done.code).toBe(1006);
    expect(took).toBeGreaterThanOrEqual(IDLE_MS - 200);
    expect(took).toBeLessThan(IDLE_MS + 3_000);
    await eventually(async () => origin.closes.some((c) => c.url === '/echo?idle=1'));
  });

  it('keeps a connection with traffic open past the idle time', async () => {
    const site = await createSite();
    const ws = await mustOpen(site.host, '/echo?busy=1');
    for (let i = 0; i < 6; i++) {
      await new Promise((r) => setTimeout(r, IDLE_MS / 2));
      ws.send(`tick ${i}`);
      expect((await nextMessage(ws)).data.toString()).toBe(`tick ${i}`);
    }
    expect(ws.readyState).toBe(WebSocket.OPEN);
    ws.close();
  });

  it('answers 503 past the per-site cap, counts open connections in the gauge, and admits again once one closes', async () => {
    const site = await createSite();
    const other = await createSite();
    const open = [];
    for (let i = 0; i < MAX_PER_SITE; i++) open.push(await mustOpen(site.host, '/echo'));
    await eventually(async () => sample(await scrape(), 'aegis_shield_websockets_open', { site: site.id }) === MAX_PER_SITE);
    const full = await refused(site.host, '/echo', { headers: { accept: 'application/json' } });
    expect(full.status).toBe(503);
    expect(JSON.parse(full.body)).toMatchObject({ error: { code: 'unavailable' } });
    // The cap is per site.
    (await mustOpen(other.host, '/echo')).terminate();

    const gone = closed(open[0]!);
    open[0]!.close();
    await gone;
    await eventually(async () => sample(await scrape(), 'aegis_shield_websockets_open', { site: site.id }) === MAX_PER_SITE - 1);
    open.push(await mustOpen(site.host, '/echo'));
    for (const ws of open) ws.terminate();

    const text = await scrape();
    expect(sample(text, 'aegis_shield_websocket_upgrades_total', { site: site.id, result: 'over_capacity' })).toBe(1);
    expect(sample(text, 'aegis_shield_websocket_upgrades_total', { site: site.id, result: 'upgraded' })).toBe(MAX_PER_SITE + 1);
    expect((await events(site.id)).filter((e) => e.status === 503)).toHaveLength(1);
  });
});
