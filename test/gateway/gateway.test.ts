// The Shield gateway end to end: a real API server (which runs the gateway), a real local origin,
// rules written through the API, requests sent through the gateway.
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOrigin, type Echo, type Origin } from '../support/origin.ts';
import { eventually, viaGateway } from '../support/gateway.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { openSse } from '../support/sse.ts';

let t: TestServer;
let origin: Origin;
let gateway: string;

beforeAll(async () => {
  origin = await startOrigin();
  t = await startTestServer({
    rateLimitPerMinute: 100_000,
    shieldEnabled: true,
    shieldPort: 0,
    asnDbPath: 'test/fixtures/ip2asn/ip2asn-small.tsv',
    trustedProxies: ['127.0.0.1', '::1'],
    upstreamTimeoutMs: 500,
    shieldAllowSampleRate: 1,
  });
  gateway = t.server.gateway!.url;
});
afterAll(async () => {
  await t?.close();
  await origin?.close();
});

let siteCount = 0;
/** A site whose only rules are the ones a test adds: managed rules (on by default) are off here. */
async function createSite(mode: 'log' | 'block' | 'challenge', originUrl = origin.url): Promise<{ id: string; host: string }> {
  const host = `site${++siteCount}.gateway.test`;
  const res = await t.call('POST', '/api/v1/shield/sites', { body: { domain: host, origin_url: originUrl, mode, managed_rules: { enabled: false } } });
  expect(res.status).toBe(201);
  await t.server.gateway!.registry.refresh();
  return { id: res.body.id, host };
}

const addRule = async (siteId: string, collection: string, body: unknown) => {
  const res = await t.call('POST', `/api/v1/shield/sites/${siteId}/${collection}`, { body });
  expect(res.status, res.text).toBe(201);
  await t.server.gateway!.registry.refresh();
  return res.body.id as string;
};

async function events(siteId: string): Promise<{ action: string; rule_kind: string | null; rule_id: string | null; would: string | null; client_ip: string; asn: number | null; status: number }[]> {
  await t.server.shieldEvents.recorder.flush();
  const rows = await t.server.database.db.selectFrom('shield_events').selectAll().where('site_id', '=', siteId).orderBy('id').execute();
  return rows;
}

describe('proxying', () => {
  it('forwards to the origin with X-Forwarded-* set and hop-by-hop headers removed, both ways', async () => {
    const site = await createSite('block');
    // node:http rather than undici: undici refuses to send hop-by-hop headers such as Keep-Alive.
    const res = await new Promise<{ status: number; headers: IncomingHttpHeaders; text: string }>((resolve, reject) => {
      const req = httpRequest(`${gateway}/hello?x=1`, {
        headers: { host: site.host, 'x-forwarded-for': '198.51.100.20', connection: 'keep-alive, x-private', 'x-private': 'secret', 'keep-alive': 'timeout=5', te: 'trailers' },
      });
      req.on('response', (r) => {
        let text = '';
        r.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => resolve({ status: r.statusCode ?? 0, headers: r.headers, text }));
      });
      req.on('error', reject).end();
    });
    expect(res.status).toBe(200);
    const echo = JSON.parse(res.text) as Echo;
    expect(echo.url).toBe('/hello?x=1');
    expect(echo.headers['x-forwarded-for']).toBe('198.51.100.20, 127.0.0.1');
    expect(echo.headers['x-forwarded-host']).toBe(site.host);
    expect(echo.headers['x-forwarded-proto']).toBe('http');
    expect(echo.headers['x-private']).toBeUndefined();
    expect(echo.headers['keep-alive']).toBeUndefined();
    expect(echo.headers.te).toBeUndefined();
    expect(echo.headers['x-request-id']).toMatch(/^req_/);
    expect(res.headers['x-origin-private']).toBeUndefined();
    expect(res.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2; Path=/']);
  });

  it('streams large bodies in both directions', async () => {
    const site = await createSite('block');
    const upload = Buffer.alloc(3 * 1024 * 1024, 7);
    const res = await viaGateway(gateway, '/upload', { host: site.host, method: 'POST', body: upload, headers: { 'content-type': 'application/octet-stream' } });
    expect(res.json<Echo>().bodyLength).toBe(upload.length);
    const big = await viaGateway(gateway, '/big', { host: site.host });
    expect(big.text.length).toBe(64 * 16 * 1024);
  });

  it('answers 421 for an unknown host, 502 for an unreachable origin and 504 for a slow one', async () => {
    expect((await viaGateway(gateway, '/', { host: 'nobody.gateway.test' })).status).toBe(421);
    const dead = await createSite('block', 'http://127.0.0.1:9');
    const bad = await viaGateway(gateway, '/', { host: dead.host, headers: { accept: 'application/json' } });
    expect(bad.status).toBe(502);
    expect(bad.json<{ error: { code: string; request_id: string } }>().error.code).toBe('bad_gateway');
    const site = await createSite('block');
    expect((await viaGateway(gateway, '/slow', { host: site.host })).status).toBe(504);
  });
});

describe('IP access rules', () => {
  it('deny an address, a network and an ASN in block mode, and only record them in log mode', async () => {
    const site = await createSite('block');
    await addRule(site.id, 'ip-access', { type: 'ip', value: '198.51.100.7', action: 'deny' });
    await addRule(site.id, 'ip-access', { type: 'cidr', value: '203.0.113.0/24', action: 'deny' });
    await addRule(site.id, 'ip-access', { type: 'asn', value: 'AS64502', action: 'deny' });
    const denied = ['198.51.100.7', '203.0.113.99', '2001:db8::5'];
    for (const from of denied) {
      const res = await viaGateway(gateway, '/', { host: site.host, from });
      expect(res.status, from).toBe(403);
      expect(res.text).toContain('Request id');
    }
    expect((await viaGateway(gateway, '/', { host: site.host, from: '198.51.100.8' })).status).toBe(200);

    await t.call('PATCH', `/api/v1/shield/sites/${site.id}`, { body: { mode: 'log' } });
    await t.server.gateway!.registry.refresh();
    for (const from of denied) expect((await viaGateway(gateway, '/', { host: site.host, from })).status).toBe(200);

    const recorded = await events(site.id);
    expect(recorded.filter((e) => e.action === 'block').map((e) => e.client_ip)).toEqual(denied);
    const logged = recorded.filter((e) => e.action === 'log');
    expect(logged.map((e) => [e.client_ip, e.would, e.rule_kind])).toEqual(denied.map((ip) => [ip, 'block', 'ip_access']));
    expect(logged.find((e) => e.client_ip === '2001:db8::5')?.asn).toBe(64502);
  });

  it('an allow rule lets a client past every other rule', async () => {
    const site = await createSite('block');
    await addRule(site.id, 'ip-access', { type: 'cidr', value: '198.51.100.0/24', action: 'deny' });
    await addRule(site.id, 'ip-access', { type: 'ip', value: '198.51.100.9', action: 'allow' });
    await addRule(site.id, 'virtual-patches', { url_pattern: '/*', method: 'ANY', match_param: 'q', match_regex: 'evil', action: 'block' });
    expect((await viaGateway(gateway, '/?q=evil', { host: site.host, from: '198.51.100.9' })).status).toBe(200);
    expect((await viaGateway(gateway, '/', { host: site.host, from: '198.51.100.10' })).status).toBe(403);
  });

  it('a rule created through the API takes effect, and a deleted one stops, without a restart', async () => {
    const site = await createSite('block');
    const ruleId = (await t.call('POST', `/api/v1/shield/sites/${site.id}/ip-access`, { body: { type: 'ip', value: '198.51.100.50', action: 'deny' } })).body.id;
    const tookEffect = await eventually(async () => (await viaGateway(gateway, '/', { host: site.host, from: '198.51.100.50' })).status === 403);
    await t.call('DELETE', `/api/v1/shield/sites/${site.id}/ip-access/${ruleId}`);
    const stopped = await eventually(async () => (await viaGateway(gateway, '/', { host: site.host, from: '198.51.100.50' })).status === 200);
    // The refresh interval (250 ms) bounds both; bench:shield reports the distribution.
    console.log(`rule took effect after ${tookEffect} ms, stopped after ${stopped} ms`);
  });
});

describe('virtual patches', () => {
  it('block a matching query parameter and JSON body field and let other requests through', async () => {
    const site = await createSite('block');
    const patch = await addRule(site.id, 'virtual-patches', { url_pattern: '/api/*', method: 'ANY', match_param: 'id', match_regex: '(?i)union\\s+select', action: 'block' });
    const blocked = await viaGateway(gateway, `/api/items?id=${encodeURIComponent('1 UNION SELECT password FROM users')}`, { host: site.host });
    expect(blocked.status).toBe(403);
    expect((await viaGateway(gateway, '/api/items', { host: site.host, method: 'POST', json: { id: '1 union  select 2' } })).status).toBe(403);
    expect((await viaGateway(gateway, '/api/items?id=42', { host: site.host })).status).toBe(200);
    expect((await viaGateway(gateway, '/api/items', { host: site.host, method: 'POST', json: { id: '42', note: 'union select' } })).status).toBe(200);
    expect((await viaGateway(gateway, `/other?id=${encodeURIComponent('1 union select')}`, { host: site.host })).status).toBe(200);
    const form = await viaGateway(gateway, '/api/items', { host: site.host, method: 'POST', body: 'id=1+union+select+1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(403);
    const blocks = (await events(site.id)).filter((e) => e.action === 'block');
    expect(blocks.map((e) => e.rule_id)).toEqual([patch, patch, patch]);
  });
});

describe('rate limits', () => {
  it('a budget of 5 per 10 s blocks the 6th request, and escalation denies the client for the configured minutes', async () => {
    const site = await createSite('block');
    const rule = await addRule(site.id, 'rate-limits', { identity: 'ip', url_pattern: '/login', method: 'POST', budget: 5, window_seconds: 10, action: 'block', escalate_to_deny_minutes: 2 });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await viaGateway(gateway, '/login', { host: site.host, method: 'POST', from: '198.51.100.60' })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const escalated = await viaGateway(gateway, '/anything-else', { host: site.host, from: '198.51.100.60' });
    expect(escalated.status).toBe(403);
    expect((await viaGateway(gateway, '/login', { host: site.host, method: 'POST', from: '198.51.100.61' })).status).toBe(200);
    const limited = (await events(site.id)).filter((e) => e.action === 'block');
    expect(limited.map((e) => [e.rule_kind, e.rule_id, e.status])).toEqual([
      ['rate_limit', rule, 429],
      ['escalation', rule, 403],
    ]);
  });
});

describe('schema enforcement', () => {
  it('at standard, rejects an undeclared path and a body of the wrong type', async () => {
    const site = await createSite('block');
    const document = readFileSync('test/fixtures/openapi/petstore-3.0.yaml', 'utf8');
    const upload = await t.call('PUT', `/api/v1/shield/sites/${site.id}/schema`, { raw: document, headers: { 'content-type': 'application/yaml' } });
    expect(upload.status, upload.text).toBeLessThan(300);
    await t.server.gateway!.registry.refresh();
    expect((await viaGateway(gateway, '/pet/findByStatus?status=available', { host: site.host })).status).toBe(200);
    expect((await viaGateway(gateway, '/not/declared', { host: site.host })).status).toBe(403);
    expect((await viaGateway(gateway, '/pet', { host: site.host, method: 'POST', json: { name: 'rex', photoUrls: ['x'] } })).status).toBe(200);
    expect((await viaGateway(gateway, '/pet', { host: site.host, method: 'POST', json: { name: 12, photoUrls: 'x' } })).status).toBe(403);
    expect((await events(site.id)).filter((e) => e.action === 'block').every((e) => e.rule_kind === 'schema')).toBe(true);
  });
});

describe('decision records', () => {
  it('a client on the live stream sees decisions as they happen, and analytics counts match', async () => {
    const site = await createSite('block');
    const rule = await addRule(site.id, 'ip-access', { type: 'cidr', value: '198.51.100.0/24', action: 'deny' });
    const live = await openSse(t, `/api/v1/shield/sites/${site.id}/live`);
    expect(live.status).toBe(200);
    const client = live.client!;
    try {
      const sent: [string, number][] = [];
      for (const [from, path] of [['198.51.100.70', '/a'], ['203.0.113.9', '/b'], ['198.51.100.71', '/c'], ['203.0.113.9', '/d'], ['198.51.100.70', '/e']] as const) {
        const res = await viaGateway(gateway, path, { host: site.host, from });
        sent.push([path, res.status]);
      }
      expect(sent.map(([, status]) => status)).toEqual([403, 200, 403, 200, 403]);
      await client.until((c) => c.decisions.length >= 5);
      const seen = client.decisions;
      expect(seen.map((e) => [e.path, e.action, e.status])).toEqual([
        ['/a', 'block', 403],
        ['/b', 'allow', 200],
        ['/c', 'block', 403],
        ['/d', 'allow', 200],
        ['/e', 'block', 403],
      ]);
      expect(seen.filter((e) => e.action === 'block').every((e) => e.rule_kind === 'ip_access' && e.rule_id === rule)).toBe(true);
      expect(client.messages.filter((m) => m.event === 'decision').map((m) => m.id)).toEqual(seen.map((e) => e.id));
    } finally {
      client.close();
    }

    const today = new Date().toISOString().slice(0, 10);
    const analytics = await t.call('GET', `/api/v1/shield/sites/${site.id}/analytics?from=${today}&to=${today}`);
    expect(analytics.status).toBe(200);
    expect(analytics.body.totals).toMatchObject({ requests: 5, allow: 2, block: 3, challenge: 0, log: 0 });
    expect(analytics.body.recorded).toMatchObject({ requests: 5, allow: 2, block: 3 });
    expect(analytics.body.top.client_ips).toEqual([
      { client_ip: '198.51.100.70', count: 2 },
      { client_ip: '203.0.113.9', count: 2 },
      { client_ip: '198.51.100.71', count: 1 },
    ]);
    expect(analytics.body.top.rules).toEqual([{ rule_kind: 'ip_access', rule_id: rule, count: 3 }]);
    const raw = await events(site.id);
    expect(raw).toHaveLength(5);
    const series = analytics.body.timeseries as { block: number; allow: number }[];
    expect(series.reduce((sum, bucket) => sum + bucket.block, 0)).toBe(raw.filter((e) => e.action === 'block').length);
  });
});
