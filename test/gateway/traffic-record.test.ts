// The traffic record impact previews replay (docs/impact-preview.md): through a real API server
// running the gateway, a real origin answering 200 and 404, requests recorded one row each, values
// kept for flagged and sampled requests only, sealed, and never a credential.
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServerKey, open } from '../../platform/crypto/secret-box.ts';
import { readTraffic } from '../../gateway/traffic/traffic-reader.ts';
import { ensureTrafficPartition, pruneTraffic, trafficPartitionDay, trafficPartitionDays } from '../../gateway/traffic/partitions.ts';
import type { TrafficRecord } from '../../gateway/traffic/traffic-record.ts';
import { BatchBuilder, type RecordRun } from '../../gateway/traffic/record-batch.ts';
import { routeOf, ValueSampler } from '../../gateway/traffic/value-sampler.ts';
import { isCredentialName } from '../../gateway/traffic/capture.ts';
import { ALLOW } from '../../gateway/pipeline.ts';
import { viaGateway } from '../support/gateway.ts';
import { listenOnLoopback } from '../support/loopback.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** The requests of a page the reader handed out, built whole. */
const recordsOf = (page: readonly RecordRun[]): TrafficRecord[] => page.flatMap(({ requests, from, to }) => Array.from({ length: to - from }, (_, k) => requests.record(from + k)));

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

/** The stored batch rows of a site, as the database holds them. */
async function rows(siteId: string) {
  await t.server.shieldEvents.traffic!.flush();
  return t.server.database.db.selectFrom('shield_traffic').selectAll().where('site_id', '=', siteId).orderBy('at').execute();
}

/** The site's recorded requests, read back as a preview reads them. */
async function records(siteId: string, key: Buffer): Promise<TrafficRecord[]> {
  await t.server.shieldEvents.traffic!.flush();
  const out: TrafficRecord[] = [];
  for await (const page of readTraffic(t.server.database.db, siteId, { since: 0, until: Date.now() + 60_000 }, (sealed, site) => open(key, sealed, site))) out.push(...recordsOf(page));
  return out;
}

/** A stored batch of requests (for rows a test writes itself). */
function batchRow(siteId: string, requests: { at: number; path: string }[]) {
  const batch = new BatchBuilder(siteId);
  for (const r of requests)
    batch.add({ siteId, at: r.at, clientIp: '192.0.2.1', asn: null, country: null, method: 'GET', path: r.path, status: 200, latencyMs: 1, hasSession: false, apiKeys: [], action: 'allow', ruleKind: null, ruleId: null, would: null, managedByLevel: null, values: null, valuesReason: null });
  return { site_id: siteId, at: new Date(batch.first), until_at: new Date(batch.last), requests: batch.size, columns: batch.encode(), values_sealed: null };
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
    // Passes the site's level 1, flagged from level 2; the route's floor is spent, so no values are kept.
    expect((await viaGateway(gateway, `/products/11?q=${encodeURIComponent('eval(x)')}`, { host, from: '198.51.100.20' })).status).toBe(200);

    const key = await loadServerKey(t.database.dataDir, undefined);
    const recorded = await records(siteId, key);
    expect(recorded).toHaveLength(15);
    expect(recorded.filter((r) => r.status === 200)).toHaveLength(11);
    expect(recorded.filter((r) => r.status === 404).map((r) => r.path)).toEqual(['/missing/a', '/missing/b']);
    expect(recorded.filter((r) => r.action === 'block').map((r) => r.ruleKind)).toEqual(['managed', 'managed']);
    expect(recorded.find((r) => r.clientIp === '198.51.100.3')).toMatchObject({ network: '198.51.100.0/24', method: 'GET', path: '/products/4', hasSession: false, valuesReason: 'floor' });
    expect(recorded.find((r) => r.path === '/search')).toMatchObject({ hasSession: true, valuesReason: 'flagged' });
    // The floor: five requests of the route /products/:id this hour keep values, the other five do not.
    expect(recorded.filter((r) => r.path.startsWith('/products/') && r.values !== null)).toHaveLength(5);
    // Managed rules are judged at every paranoia level, whatever the site's own, values kept or not:
    // these requests carry no User-Agent, which level 3 refuses; the attacks are refused at every
    // level; eval(x) from level 2 on, though nothing of it but its metadata is kept.
    const noUserAgent = [null, null, 'protocol.missing_user_agent', 'protocol.missing_user_agent'];
    for (const r of recorded.filter((r) => r.status !== 403 && r.path !== '/products/11')) expect(r.managedByLevel, r.path).toEqual(noUserAgent);
    expect(recorded.filter((r) => r.status === 403).map((r) => r.managedByLevel)).toEqual([Array(4).fill('sqli.union_select'), Array(4).fill('xss.script_tag')]);
    expect(recorded.find((r) => r.path === '/products/11')).toMatchObject({ action: 'allow', values: null, managedByLevel: [null, 'xss.dom_sink', 'xss.dom_sink', 'xss.dom_sink'] });

    // In the database nothing is in clear: neither the parameters nor the credentials, and the values
    // open only with the server key and for this site.
    const stored = await rows(siteId);
    expect(stored.reduce((sum, row) => sum + row.requests, 0)).toBe(15);
    for (const row of stored) {
      // The columns' strings (addresses, paths) are UTF-8 inside the base64 of the batch: decoded, they would show.
      const columns = Buffer.from(row.columns!, 'base64').toString('utf8');
      expect(JSON.stringify({ ...row, columns })).not.toMatch(/hunter2|abc123secret|s3ss10n|UNION|alert/);
      if (row.values_sealed !== null) expect(() => open(key, row.values_sealed!, 'another-site')).toThrow();
    }
    expect(stored.map((row) => Buffer.from(row.columns!, 'base64').toString('utf8')).join('')).toContain('/missing/a');
    for (const { values, path } of recorded) {
      if (values === null) continue;
      expect(JSON.stringify(values)).not.toMatch(/hunter2|abc123secret|s3ss10n/);
      expect(values.query).not.toMatch(/(^|&)(password|token)=/);
      expect(Object.keys(values.headers)).not.toContain('cookie');
      if (path === '/search') {
        expect(values.query).toBe(`q=${encodeURIComponent("' UNION SELECT password FROM users--")}`);
        expect(values.headers['user-agent']).toBe('sqlmap/1.7');
      }
      if (path === '/login') expect(JSON.parse(values.body!)).toEqual({ user: 'bob', comment: '<script>alert(1)</script>' });
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
    await db.insertInto('shield_traffic').values({ ...batchRow(siteId, [{ at: old, path: '/old' }]), values_sealed: 'v1.x.y.z' }).execute();
    const dropped = await pruneTraffic(db, { days: 7, valueHours: 0 });
    expect(dropped).toContain(trafficPartitionDay(old));
    expect(await trafficPartitionDays(db)).not.toContain(trafficPartitionDay(old));
    const key = await loadServerKey(t.database.dataDir, undefined);
    expect((await records(siteId, key)).map((r) => r.path)).toEqual(['/a']);
    // The values sweep (0 hours here) cleared every batch's values.
    expect((await rows(siteId)).map((r) => r.values_sealed)).toEqual([null]);
    expect(writer.stats()).toMatchObject({ shed: 0, queued: 0 });
    // A deleted site takes its recorded requests with it.
    expect((await t.call('DELETE', `/api/v1/shield/sites/${siteId}`)).status).toBeLessThan(300);
    expect(await db.selectFrom('shield_traffic').select('at').where('site_id', '=', siteId).execute()).toEqual([]);
  });
});

describe('reading the record back', () => {
  it('merges overlapping batches into arrival order, across pages of batches that share a millisecond, losing and repeating none', async () => {
    const db = t.server.database.db;
    const siteId = await createSite('paging.traffic.test');
    const base = Date.now() - 60_000;
    await ensureTrafficPartition(db, trafficPartitionDay(base));
    await ensureTrafficPartition(db, trafficPartitionDay(Date.now()));
    // Twelve batches as several gateway processes write them: interleaved in time, and seven of
    // them starting in the same millisecond (more than a page of five).
    const batches = Array.from({ length: 12 }, (_, b) => batchRow(siteId, Array.from({ length: 4 }, (_, i) => ({ at: base + (b < 7 ? 0 : b) + i * 3, path: `/b${b}/r${i}` }))));
    await db.insertInto('shield_traffic').values(batches).execute();
    const read: { at: number; path: string }[] = [];
    for await (const page of readTraffic(db, siteId, { since: base - 1, until: Date.now() }, () => '', 5)) read.push(...recordsOf(page).map((record) => ({ at: record.at, path: record.path })));
    expect(read.map((r) => r.path).sort()).toEqual(batches.flatMap((_, b) => [0, 1, 2, 3].map((i) => `/b${b}/r${i}`)).sort());
    expect(read.map((r) => r.at)).toEqual([...read.map((r) => r.at)].sort((a, b) => a - b));
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
    const picks = [1, 2, 3].map((i) => sampler.pick('s', 'GET', `/users/${i}`, false, at));
    expect(picks).toEqual(['floor', 'floor', null]);
    expect(sampler.pick('s', 'GET', '/users/4', true, at)).toBe('flagged');
    // A new hour, a new floor.
    expect(sampler.pick('s', 'GET', '/users/5', false, at + 3_600_000)).toBe('floor');
    const always = new ValueSampler({ sampleRate: 1, floorPerRouteHour: 0 });
    expect(always.pick('s', 'GET', '/x', false, at)).toBe('sample');
  });
});
