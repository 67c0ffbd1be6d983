// The traffic record impact previews replay (docs/impact-preview.md): through a real API server
// running the gateway, a real origin answering 200 and 404, requests recorded one row each, values
// kept for flagged and sampled requests only, sealed, and never a credential.
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServerKey, open } from '../../platform/crypto/secret-box.ts';
import { readTraffic } from '../../gateway/traffic/traffic-reader.ts';
import { ensureTrafficPartition, pruneTraffic, trafficPartitionDay, trafficPartitionDays } from '../../gateway/traffic/partitions.ts';
import type { RecordedValues } from '../../gateway/traffic/traffic-record.ts';
import { routeOf, ValueSampler } from '../../gateway/traffic/value-sampler.ts';
import { isCredentialName } from '../../gateway/traffic/capture.ts';
import { ALLOW } from '../../gateway/pipeline.ts';
import { viaGateway } from '../support/gateway.ts';
import { listenOnLoopback } from '../support/loopback.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let origin: { url: string; close(): Promise<void> };
let gateway: string;

beforeAll(async () => {
  // 404 under /missing, 200 elsewhere.
  origin = await listenOnLoopback(createServer((req, res) => req.resume().on('end', () => res.writeHead(req.url?.startsWith('/missing') ? 404 : 200).end('ok'))));
  t = await startTestServer({
    rateLimitPerMinute: 100_000,
    shieldEnabled: true,
    shieldPort: 0,
    asnDbPath: 'test/fixtures/ip2asn/ip2asn-small.tsv',
    trustedProxies: ['127.0.0.1', '::1'],
    // No uniform sample: which requests keep values is then exact (flagged ones, and the per-route floor).
    shieldTrafficValueSampleRate: 0,
  });
  gateway = t.server.gateway!.url;
});
afterAll(async () => {
  await t?.close();
  await origin?.close();
});

async function createSite(host: string): Promise<string> {
  const res = await t.call('POST', '/api/v1/shield/sites', { body: { domain: host, origin_url: origin.url, mode: 'block', managed_rules: { enabled: true, paranoia_level: 1 } } });
  expect(res.status, res.text).toBe(201);
  await t.server.gateway!.registry.refresh();
  return res.body.id as string;
}

async function rows(siteId: string) {
  await t.server.shieldEvents.traffic!.flush();
  return t.server.database.db.selectFrom('shield_traffic').selectAll().where('site_id', '=', siteId).orderBy('at').execute();
}

describe('traffic record', () => {
  it('records every request once with its origin status and decision, values only for flagged and floor requests, sealed', async () => {
    const host = 'record.traffic.test';
    const siteId = await createSite(host);
    const sent: { path: string; status: number; from: string }[] = [];
    // Ten benign pages on one route (the floor keeps five), two that the origin answers 404, two attacks.
    for (let i = 0; i < 10; i++) {
      const res = await viaGateway(gateway, `/products/${i + 1}?q=shoes&password=hunter2`, { host, from: `198.51.100.${i}` });
      sent.push({ path: `/products/${i + 1}`, status: res.status, from: `198.51.100.${i}` });
    }
    for (const path of ['/missing/a', '/missing/b']) sent.push({ path, status: (await viaGateway(gateway, path, { host, from: '203.0.113.9' })).status, from: '203.0.113.9' });
    const attack = await viaGateway(gateway, `/search?q=${encodeURIComponent("' UNION SELECT password FROM users--")}&token=abc123secret`, { host, from: '203.0.113.66', headers: { cookie: 'sid=s3ss10n', 'user-agent': 'sqlmap/1.7' } });
    expect(attack.status).toBe(403);
    const login = await viaGateway(gateway, '/login', { host, from: '203.0.113.66', method: 'POST', json: { user: 'bob', password: 'hunter2', comment: '<script>alert(1)</script>' } });
    expect(login.status).toBe(403);

    const recorded = await rows(siteId);
    expect(recorded).toHaveLength(14);
    expect(recorded.filter((r) => r.status === 200)).toHaveLength(10);
    expect(recorded.filter((r) => r.status === 404).map((r) => r.path)).toEqual(['/missing/a', '/missing/b']);
    expect(recorded.filter((r) => r.action === 'block').map((r) => r.rule_kind)).toEqual(['managed', 'managed']);
    expect(recorded.find((r) => r.client_ip === '198.51.100.3')).toMatchObject({ network: '198.51.100.0/24', method: 'GET', path: '/products/4', has_session: false, values_reason: 'floor' });
    expect(recorded.find((r) => r.path === '/search')).toMatchObject({ has_session: true, values_reason: 'flagged' });
    // The floor: five requests of the route /products/:id this hour keep values, the other five do not.
    expect(recorded.filter((r) => r.path.startsWith('/products/') && r.values_sealed !== null)).toHaveLength(5);

    const key = await loadServerKey(t.database.dataDir, undefined);
    for (const row of recorded) {
      // Nothing in clear: neither the parameters nor the credentials.
      expect(JSON.stringify(row)).not.toMatch(/hunter2|abc123secret|s3ss10n|UNION/);
      if (row.values_sealed === null) continue;
      expect(() => open(key, row.values_sealed!, 'another-site')).toThrow();
      const values = JSON.parse(open(key, row.values_sealed, siteId)) as RecordedValues;
      expect(JSON.stringify(values)).not.toMatch(/hunter2|abc123secret|s3ss10n/);
      expect(values.query).not.toMatch(/(^|&)(password|token)=/);
      expect(Object.keys(values.headers)).not.toContain('cookie');
      if (row.path === '/search') {
        expect(values.query).toBe(`q=${encodeURIComponent("' UNION SELECT password FROM users--")}`);
        expect(values.headers['user-agent']).toBe('sqlmap/1.7');
      }
      if (row.path === '/login') expect(JSON.parse(values.body!)).toEqual({ user: 'bob', comment: '<script>alert(1)</script>' });
    }
  });

  it('keeps days as partitions and drops whole days past retention, values sooner', async () => {
    const db = t.server.database.db;
    const siteId = await createSite('retention.traffic.test');
    await viaGateway(gateway, '/a', { host: 'retention.traffic.test', from: '192.0.2.1' });
    await rows(siteId);
    const today = trafficPartitionDay(Date.now());
    expect(await trafficPartitionDays(db)).toContain(today);
    // A row from ten days ago, in its own day's partition.
    const old = Date.now() - 10 * 86_400_000;
    const writer = t.server.shieldEvents.traffic!;
    await ensureTrafficPartition(db, trafficPartitionDay(old));
    await db
      .insertInto('shield_traffic')
      .values({ site_id: siteId, at: new Date(old), client_ip: '192.0.2.1', network: '192.0.2.0/24', asn: null, country: null, method: 'GET', path: '/old', status: 200, latency_ms: 1, has_session: false, api_keys: null, action: 'allow', rule_kind: null, rule_id: null, would: null, values_reason: 'sample', values_sealed: 'v1.x.y.z' })
      .execute();
    const dropped = await pruneTraffic(db, { days: 7, valueHours: 0 });
    expect(dropped).toContain(trafficPartitionDay(old));
    expect(await trafficPartitionDays(db)).not.toContain(trafficPartitionDay(old));
    const left = await rows(siteId);
    expect(left.map((r) => r.path)).toEqual(['/a']);
    expect(left[0]!.values_sealed).toBeNull();
    expect(writer.stats()).toMatchObject({ shed: 0, queued: 0 });
    // A deleted site takes its recorded requests with it.
    expect((await t.call('DELETE', `/api/v1/shield/sites/${siteId}`)).status).toBeLessThan(300);
    expect(await db.selectFrom('shield_traffic').select('path').where('site_id', '=', siteId).execute()).toEqual([]);
  });
});

describe('reading the record back', () => {
  it('pages through requests that share a millisecond without losing or repeating one', async () => {
    const db = t.server.database.db;
    const siteId = await createSite('paging.traffic.test');
    const base = Date.now() - 60_000;
    await ensureTrafficPartition(db, trafficPartitionDay(base));
    await ensureTrafficPartition(db, trafficPartitionDay(Date.now()));
    // 50 requests, seven to a millisecond (and the last millisecond alone holding more than a page).
    const rows = Array.from({ length: 50 }, (_, i) => ({
      site_id: siteId, at: new Date(base + Math.floor(Math.min(i, 42) / 7)), client_ip: `192.0.2.${i}`, network: '192.0.2.0/24', asn: null, country: null,
      method: 'GET', path: `/r/${i}`, status: 200, latency_ms: 1, has_session: false, api_keys: null, action: 'allow', rule_kind: null, rule_id: null, would: null, values_reason: null, values_sealed: null,
    }));
    await db.insertInto('shield_traffic').values(rows).execute();
    const read: string[] = [];
    let previous = 0;
    for await (const record of readTraffic(db, siteId, { since: base - 1, until: Date.now() }, () => '', 5)) {
      expect(record.at).toBeGreaterThanOrEqual(previous);
      previous = record.at;
      read.push(record.path);
    }
    expect(read.sort()).toEqual(rows.map((r) => r.path).sort());
  });
});

describe('what keeps values', () => {
  it('drops credential-like names', () => {
    for (const name of ['password', 'user_password', 'passwd', 'access_token', 'csrf', 'X-CSRF-Token', 'api_key', 'apiKey', 'authorization', 'cookie', 'session_id', 'client_secret', 'card_number', 'cvv', 'otp'])
      expect(isCredentialName(name), name).toBe(true);
    for (const name of ['q', 'search', 'comment', 'user', 'email', 'page', 'sort', 'keyword', 'author', 'description']) expect(isCredentialName(name), name).toBe(false);
  });

  it('samples: flagged always, the floor per route per hour, then the uniform rate', () => {
    expect(routeOf('/users/42/orders/9f1c2d3e4a5b')).toBe('/users/:id/orders/:id');
    const sampler = new ValueSampler({ sampleRate: 0, floorPerRouteHour: 2 });
    const at = Date.UTC(2026, 10, 29, 10);
    const picks = [1, 2, 3].map((i) => sampler.pick('s', 'GET', `/users/${i}`, ALLOW, at));
    expect(picks).toEqual(['floor', 'floor', null]);
    expect(sampler.pick('s', 'GET', '/users/4', { ...ALLOW, action: 'log', ruleKind: 'virtual_patch', ruleId: 'p', would: 'block' }, at)).toBe('flagged');
    // A new hour, a new floor.
    expect(sampler.pick('s', 'GET', '/users/5', ALLOW, at + 3_600_000)).toBe('floor');
    const always = new ValueSampler({ sampleRate: 1, floorPerRouteHour: 0 });
    expect(always.pick('s', 'GET', '/x', ALLOW, at)).toBe('sample');
  });
});
