// shield.block / shield.challenge without a flood: 10 000 requests blocked by one rule through the
// real gateway become one event per alert window (500 ms here), whose counts add up to exactly the
// requests blocked, each carrying at most five samples; challenged requests become
// shield.challenge. A webhook on `shield.*` gets one delivery per event, not per request. On
// PostgreSQL, two servers (two gateways, two closers) on one database split the traffic: the
// counts still add up and no window is emitted twice.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecisionRecorder } from '../../gateway/events/recorder.ts';
import { newId } from '../../platform/ids.ts';
import { eventually } from '../support/gateway.ts';
import { startOrigin, type Origin } from '../support/origin.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const WINDOW_MS = 500;
const ATTACK = 10_000;
const IN_FLIGHT = 50;

interface Alert {
  object: string;
  site_id: string;
  action: string;
  rule_kind: string;
  rule_id: string;
  count: number;
  window_start: string;
  window_end: string;
  first_at: string;
  last_at: string;
  samples: { id: string; time: string; client_ip: string; method: string; host: string; path: string; status: number }[];
}

interface AlertEvent {
  id: string;
  type: string;
  version: number;
  organization_id: string;
  data: { object: Alert };
}

const serverOptions = { shieldEnabled: true, shieldPort: 0, shieldAlertWindowMs: WINDOW_MS, allowPrivateTargets: true, trustedProxies: ['127.0.0.1', '::1'], rateLimitPerMinute: 1_000_000 };

/** Every event of `type` about `siteId`, all pages. */
async function alertEvents(t: TestServer, type: string, siteId: string): Promise<AlertEvent[]> {
  const all: AlertEvent[] = [];
  let cursor: string | null = null;
  do {
    const res: { status: number; text: string; body: { data: AlertEvent[]; pagination: { next: string | null } } } = await t.call('GET', `/api/v1/events?type=${type}&limit=200${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.status, res.text).toBe(200);
    all.push(...res.body.data);
    cursor = res.body.pagination.next;
  } while (cursor);
  return all.filter((e) => e.data.object.site_id === siteId);
}

const total = (events: AlertEvent[]) => events.reduce((n, e) => n + e.data.object.count, 0);

/** A site with managed rules off, denying 198.51.100.0/24 and challenging 203.0.113.0/24. */
async function createSite(t: TestServer, host: string, originUrl: string): Promise<{ id: string; denyRule: string; challengeRule: string }> {
  const site = await t.call('POST', '/api/v1/shield/sites', { body: { domain: host, origin_url: originUrl, mode: 'block', managed_rules: { enabled: false } } });
  expect(site.status, site.text).toBe(201);
  const deny = await t.call('POST', `/api/v1/shield/sites/${site.body.id}/ip-access`, { body: { type: 'cidr', value: '198.51.100.0/24', action: 'deny' } });
  expect(deny.status, deny.text).toBe(201);
  const challenge = await t.call('POST', `/api/v1/shield/sites/${site.body.id}/ip-access`, { body: { type: 'cidr', value: '203.0.113.0/24', action: 'challenge' } });
  expect(challenge.status, challenge.text).toBe(201);
  await t.server.gateway!.registry.refresh();
  return { id: site.body.id, denyRule: deny.body.id, challengeRule: challenge.body.id };
}

/** Sends `n` requests from `from` (X-Forwarded-For) with `inFlight` at once; returns the statuses seen. */
async function attack(gateways: string[], host: string, from: (i: number) => string, n: number, inFlight = IN_FLIGHT): Promise<Map<number, number>> {
  const pools = gateways.map((url) => new Pool(url, { connections: Math.ceil(inFlight / gateways.length), pipelining: 1 }));
  const statuses = new Map<number, number>();
  let next = 0;
  const lane = async () => {
    while (next < n) {
      const i = next++;
      const res = await pools[i % pools.length]!.request({ path: `/login?attempt=${i}`, method: 'GET', headers: { host, 'x-forwarded-for': from(i) } });
      await res.body.dump();
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    }
  };
  try {
    await Promise.all(Array.from({ length: inFlight }, lane));
  } finally {
    await Promise.all(pools.map((p) => p.close()));
  }
  return statuses;
}

function expectAlertShape(event: AlertEvent, site: string, action: 'block' | 'challenge', ruleId: string): void {
  const o = event.data.object;
  expect(event).toMatchObject({ type: `shield.${action}`, version: 1 });
  expect(o).toMatchObject({ object: 'shield_alert', site_id: site, action, rule_kind: 'ip_access', rule_id: ruleId });
  expect(Number.isInteger(o.count) && o.count > 0).toBe(true);
  expect(Date.parse(o.window_end) - Date.parse(o.window_start)).toBe(WINDOW_MS);
  expect(Date.parse(o.window_start) % WINDOW_MS).toBe(0);
  expect(Date.parse(o.first_at)).toBeLessThanOrEqual(Date.parse(o.last_at));
  // Counted at write time: a decision precedes the window end of the batch that stored it.
  expect(Date.parse(o.last_at)).toBeLessThanOrEqual(Date.parse(o.window_end));
  expect(o.samples.length).toBeGreaterThan(0);
  expect(o.samples.length).toBeLessThanOrEqual(Math.min(5, o.count));
  for (const s of o.samples) {
    expect(s).toEqual({ id: expect.stringMatching(/^dec_/), time: expect.any(String), client_ip: expect.any(String), method: 'GET', host: expect.any(String), path: '/login', status: expect.any(Number) });
  }
}

describe('shield alerts on one server', () => {
  let t: TestServer;
  let origin: Origin;
  let receiver: Server;
  const received: { type: string; body: string }[] = [];
  /** The site of the 10 000-request attack. */
  let attacked = '';

  beforeAll(async () => {
    origin = await startOrigin();
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ type: String(req.headers['x-service-event-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    t = await startTestServer(serverOptions);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await origin?.close();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('turns 10 000 blocked requests into a bounded number of shield.block events that add up', async () => {
    const hook = await t.call('POST', '/api/v1/webhooks', { body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`, events: ['shield.*'] } });
    expect(hook.status, hook.text).toBe(201);
    const site = await createSite(t, 'alerts.shield.test', origin.url);
    attacked = site.id;
    const gateway = t.server.gateway!.url;

    const started = Date.now();
    const statuses = await attack([gateway], 'alerts.shield.test', (i) => `198.51.100.${(i % 250) + 1}`, ATTACK);
    expect(statuses.get(403)).toBe(ATTACK);
    await t.server.shieldEvents.recorder.flush();
    const elapsed = Date.now() - started;
    expect(t.server.shieldEvents.recorder.stats().dropped).toBe(0);
    expect(origin.received).toHaveLength(0);

    let blocks: AlertEvent[] = [];
    await eventually(async () => total((blocks = await alertEvents(t, 'shield.block', site.id))) >= ATTACK, 15_000, 100);
    expect(total(blocks)).toBe(ATTACK);
    // Windows are aligned to the window length: the batches written during the attack touch at
    // most ceil(elapsed / window) + 1 of them; one more for a batch written after its window closed.
    const bound = Math.ceil(elapsed / WINDOW_MS) + 2;
    expect(blocks.length).toBeGreaterThan(0);
    expect(blocks.length).toBeLessThanOrEqual(bound);
    for (const event of blocks) expectAlertShape(event, site.id, 'block', site.denyRule);
    // One event per window.
    expect(new Set(blocks.map((e) => e.data.object.window_start)).size).toBe(blocks.length);
    // Nothing left open, nothing more arrives.
    await new Promise((r) => setTimeout(r, WINDOW_MS * 2));
    expect(total(await alertEvents(t, 'shield.block', site.id))).toBe(ATTACK);
    expect(await t.server.database.db.selectFrom('shield_alert_windows').select('site_id').where('site_id', '=', site.id).execute()).toEqual([]);

    // One delivery queued per event, not per request.
    const deliveries = await t.server.database.db.selectFrom('webhook_deliveries').select(['event_id', 'event_type']).where('webhook_id', '=', hook.body.id).execute();
    expect(deliveries.filter((d) => d.event_type === 'shield.block').map((d) => d.event_id).sort()).toEqual(blocks.map((e) => e.id).sort());
    console.log(`shield alerts: ${ATTACK} blocked in ${elapsed} ms -> ${blocks.length} shield.block events (bound ${bound})`);
  }, 120_000);

  it('counts challenged requests as shield.challenge', async () => {
    const site = await createSite(t, 'challenged.shield.test', origin.url);
    const statuses = await attack([t.server.gateway!.url], 'challenged.shield.test', (i) => `203.0.113.${(i % 3) + 1}`, 7, 3);
    expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBe(7);
    expect(origin.received).toHaveLength(0);
    await t.server.shieldEvents.recorder.flush();
    let challenges: AlertEvent[] = [];
    await eventually(async () => total((challenges = await alertEvents(t, 'shield.challenge', site.id))) >= 7, 10_000, 100);
    expect(total(challenges)).toBe(7);
    for (const event of challenges) expectAlertShape(event, site.id, 'challenge', site.challengeRule);
    expect(await alertEvents(t, 'shield.block', site.id)).toEqual([]);
  }, 60_000);

  it('counts blocks the recorder could not store (queue full) once each, sampling only stored ones', async () => {
    const site = await createSite(t, 'dropped.shield.test', origin.url);
    const orgId = (await t.server.database.db.selectFrom('shield_sites').select('org_id').where('id', '=', site.id).executeTakeFirstOrThrow()).org_id;
    // A recorder of its own whose queue holds 10: of 100 blocks recorded at once, 90 are dropped.
    const recorder = new DecisionRecorder({ db: t.server.database.db, bus: t.server.shieldEvents.bus, log: pino({ level: 'silent' }), maxQueue: 10, alertWindowMs: WINDOW_MS });
    for (let i = 0; i < 100; i++) {
      recorder.record({
        id: newId('dec'), time: new Date().toISOString(), site_id: site.id, org_id: orgId, action: 'block', rule_kind: 'ip_access', rule_id: site.denyRule, would: null,
        client_ip: '198.51.100.1', asn: null, country: null, method: 'GET', host: 'dropped.shield.test', path: '/login', status: 403, request_id: newId('req'),
      });
    }
    await recorder.close();
    expect(recorder.stats()).toMatchObject({ recorded: 10, dropped: 90 });
    let blocks: AlertEvent[] = [];
    await eventually(async () => total((blocks = await alertEvents(t, 'shield.block', site.id))) >= 100, 10_000, 100);
    expect(total(blocks)).toBe(100);
    const stored = new Set((await t.server.database.db.selectFrom('shield_events').select('id').where('site_id', '=', site.id).execute()).map((r) => r.id));
    expect(stored.size).toBe(10);
    for (const event of blocks) {
      expectAlertShape(event, site.id, 'block', site.denyRule);
      for (const sample of event.data.object.samples) expect(stored.has(sample.id)).toBe(true);
    }
  }, 30_000);

  it('delivers the alerts to the webhook receiver: a bounded number of calls whose counts add up', async () => {
    const delivered = () => received.filter((r) => r.type === 'shield.block').map((r) => JSON.parse(r.body) as AlertEvent).filter((e) => e.data.object.site_id === attacked);
    await eventually(async () => total(delivered()) >= ATTACK, 20_000, 100);
    const blocks = delivered();
    // One delivery per event (each sent once here: the receiver always answers 204).
    expect(new Set(blocks.map((b) => b.id)).size).toBe(blocks.length);
    expect(blocks.map((b) => b.id).sort()).toEqual((await alertEvents(t, 'shield.block', attacked)).map((e) => e.id).sort());
    expect(total(blocks)).toBe(ATTACK);
  }, 60_000);
});

describe.skipIf(!process.env.DATABASE_URL)('shield alerts from two servers on one PostgreSQL database', () => {
  let a: TestServer;
  let b: TestServer;
  let origin: Origin;

  beforeAll(async () => {
    origin = await startOrigin();
    a = await startTestServer(serverOptions);
    b = await startTestServer(serverOptions, a.database);
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await origin?.close();
  });

  it('adds up across gateways and emits each window once', async () => {
    const site = await createSite(a, 'pair.shield.test', origin.url);
    await b.server.gateway!.registry.refresh();
    const started = Date.now();
    const statuses = await attack([a.server.gateway!.url, b.server.gateway!.url], 'pair.shield.test', (i) => `198.51.100.${(i % 250) + 1}`, ATTACK);
    expect(statuses.get(403)).toBe(ATTACK);
    await Promise.all([a.server.shieldEvents.recorder.flush(), b.server.shieldEvents.recorder.flush()]);
    const elapsed = Date.now() - started;

    let blocks: AlertEvent[] = [];
    await eventually(async () => total((blocks = await alertEvents(a, 'shield.block', site.id))) >= ATTACK, 15_000, 100);
    await new Promise((r) => setTimeout(r, WINDOW_MS * 2));
    blocks = await alertEvents(a, 'shield.block', site.id);
    expect(total(blocks)).toBe(ATTACK);
    // Both gateways wrote into the same windows; each window became one event, by one closer.
    expect(new Set(blocks.map((e) => e.data.object.window_start)).size).toBe(blocks.length);
    expect(blocks.length).toBeLessThanOrEqual(Math.ceil(elapsed / WINDOW_MS) + 2);
    for (const event of blocks) expectAlertShape(event, site.id, 'block', site.denyRule);
  }, 120_000);
});
