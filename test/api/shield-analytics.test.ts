// GET /api/v1/shield/sites/:id/analytics against decisions written by the real recorder, checked
// against the stored rows themselves; and the retention that removes old decisions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecisionEvent } from '../../gateway/decision.ts';
import { pruneShieldEvents } from '../../api/housekeeping.ts';
import { newId } from '../../platform/ids.ts';
import { eventually } from '../support/gateway.ts';
import { keyInOrganization } from '../support/orgs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;

let t: TestServer;
beforeAll(async () => {
  // Half the allows stored: the counts must still include all of them. Retention off here; the
  // tests call it themselves (the timer would race them).
  t = await startTestServer({ rateLimitPerMinute: 10_000, shieldAllowSampleRate: 0.5, shieldEventRetentionDays: 0 });
});
afterAll(() => t.close());

/** Midnight UTC `n` days before today. */
const daysAgo = (n: number): Date => new Date(Math.floor(Date.now() / DAY) * DAY - n * DAY);
const day = (date: Date): string => date.toISOString().slice(0, 10);

interface Site {
  id: string;
  orgId: string;
}

let siteCount = 0;
async function createSite(): Promise<Site> {
  const res = await t.call('POST', '/api/v1/shield/sites', { body: { domain: `analytics${++siteCount}.example.com`, origin_url: 'https://origin.example.net', mode: 'block' } });
  expect(res.status).toBe(201);
  const row = await t.server.database.db.selectFrom('shield_sites').select('org_id').where('id', '=', res.body.id).executeTakeFirstOrThrow();
  return { id: res.body.id, orgId: row.org_id };
}

function decision(site: Site, time: Date, fields: Partial<DecisionEvent> = {}): DecisionEvent {
  return {
    id: newId('dec'),
    time: time.toISOString(),
    site_id: site.id,
    org_id: site.orgId,
    action: 'allow',
    rule_kind: null,
    rule_id: null,
    would: null,
    client_ip: '198.51.100.1',
    asn: null,
    country: null,
    method: 'GET',
    host: 'analytics.example.com',
    path: '/',
    status: 200,
    request_id: newId('req'),
    ...fields,
  };
}

async function record(events: DecisionEvent[]): Promise<void> {
  for (const event of events) t.server.shieldEvents.recorder.record(event);
  await t.server.shieldEvents.recorder.flush();
}

type Row = { value: string | number | null; rule_id?: string | null; count: number };

/** The top list computed here, from every stored row of the site in the range. */
async function expectedTop(siteId: string, start: Date, end: Date, key: (e: { client_ip: string; path: string; rule_kind: string | null; rule_id: string | null; asn: number | null }) => string | null): Promise<Map<string, number>> {
  const rows = await t.server.database.db.selectFrom('shield_events').selectAll().where('site_id', '=', siteId).where('occurred_at', '>=', start).where('occurred_at', '<', end).execute();
  const counts = new Map<string, number>();
  for (const row of rows) {
    const k = key(row);
    if (k !== null) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return counts;
}

const asMap = (items: Row[]) => new Map(items.map((i) => [String(i.value), i.count]));

describe('Shield analytics', () => {
  it('counts every decision from the rollups and agrees exactly with the stored events', async () => {
    const site = await createSite();
    const other = await createSite();
    const first = daysAgo(3);
    const second = daysAgo(2);
    const events: DecisionEvent[] = [];
    for (let i = 0; i < 40; i++) events.push(decision(site, new Date(first.getTime() + 10 * HOUR + i * 1000), { client_ip: `198.51.100.${i % 12}`, path: `/page/${i % 10}`, asn: 64_510 + (i % 10) }));
    for (let i = 0; i < 7; i++)
      events.push(decision(site, new Date(first.getTime() + 11 * HOUR + i * 1000), { action: 'block', rule_kind: 'virtual_patch', rule_id: 'vp_login', client_ip: '203.0.113.5', path: '/login', asn: 64_500, status: 403 }));
    for (let i = 0; i < 3; i++)
      events.push(decision(site, new Date(second.getTime() + 2 * HOUR + i * 1000), { action: 'challenge', rule_kind: 'rate_limit', rule_id: 'rl_api', client_ip: '203.0.113.6', path: '/api', asn: 64_501, status: 403 }));
    for (let i = 0; i < 2; i++)
      events.push(decision(site, new Date(second.getTime() + 23 * HOUR + 59 * 60_000), { action: 'log', rule_kind: 'ip_access', rule_id: 'ipr_x', would: 'block', client_ip: '203.0.113.7', path: '/admin' }));
    // Outside the range (the day before and the day after), and another site: none of it counts.
    events.push(decision(site, new Date(first.getTime() - 1), { action: 'block', rule_kind: 'schema', rule_id: 'sch', status: 403 }));
    events.push(decision(site, new Date(second.getTime() + DAY), { action: 'block', rule_kind: 'schema', rule_id: 'sch', status: 403 }));
    events.push(decision(other, new Date(first.getTime() + HOUR), { action: 'block', rule_kind: 'schema', rule_id: 'sch', status: 403 }));
    await record(events);

    const res = await t.call('GET', `/api/v1/shield/sites/${site.id}/analytics?from=${day(first)}&to=${day(second)}`);
    expect(res.status, res.text).toBe(200);
    const body = res.body;
    const start = first;
    const end = new Date(second.getTime() + DAY);
    expect(body).toMatchObject({ site_id: site.id, from: day(first), to: day(second), start: start.toISOString(), end: end.toISOString(), granularity: 'hour' });
    expect(body.totals).toEqual({ requests: 52, allow: 40, block: 7, challenge: 3, log: 2 });

    // `recorded` is exactly what shield_events holds for the range, action by action.
    const stored = await t.server.database.db
      .selectFrom('shield_events')
      .select(['action', (eb) => eb.fn.countAll<number>().as('n')])
      .where('site_id', '=', site.id)
      .where('occurred_at', '>=', start)
      .where('occurred_at', '<', end)
      .groupBy('action')
      .execute();
    const storedBy = Object.fromEntries(stored.map((r) => [r.action, Number(r.n)]));
    for (const action of ['allow', 'block', 'challenge', 'log'] as const) expect(body.recorded[action], action).toBe(storedBy[action] ?? 0);
    for (const action of ['block', 'challenge', 'log'] as const) expect(body.totals[action], action).toBe(storedBy[action]);
    expect(body.recorded.requests).toBe(stored.reduce((sum, r) => sum + Number(r.n), 0));
    expect(body.recorded.allow).toBeLessThan(40);
    expect(body.sampled).toEqual(['allow']);

    // One point per hour, zeros included, summing to the totals.
    expect(body.timeseries).toHaveLength(48);
    expect(body.timeseries[0].start).toBe(start.toISOString());
    expect(body.timeseries[47].start).toBe(new Date(end.getTime() - HOUR).toISOString());
    expect(body.timeseries[10]).toEqual({ start: new Date(start.getTime() + 10 * HOUR).toISOString(), requests: 40, allow: 40, block: 0, challenge: 0, log: 0 });
    expect(body.timeseries[11]).toMatchObject({ requests: 7, block: 7 });
    expect(body.timeseries[24 + 2]).toMatchObject({ requests: 3, challenge: 3 });
    expect(body.timeseries[47]).toMatchObject({ requests: 2, log: 2 });
    const summed = body.timeseries.reduce((sum: number, p: { requests: number }) => sum + p.requests, 0);
    expect(summed).toBe(52);

    // The top lists are the stored events' own counts.
    const tops: [string, string, (e: { client_ip: string; path: string; rule_kind: string | null; rule_id: string | null; asn: number | null }) => string | null][] = [
      ['client_ips', 'client_ip', (e) => e.client_ip],
      ['paths', 'path', (e) => e.path],
      ['asns', 'asn', (e) => (e.asn === null ? null : String(e.asn))],
      ['rules', 'rule_kind', (e) => (e.rule_kind === null ? null : `${e.rule_kind}/${e.rule_id}`)],
    ];
    for (const [list, field, key] of tops) {
      const items = body.top[list] as Record<string, string | number | null>[];
      expect(items.length, list).toBeLessThanOrEqual(10);
      const expected = await expectedTop(site.id, start, end, key);
      const got = asMap(items.map((i) => ({ value: list === 'rules' ? `${i.rule_kind}/${i.rule_id}` : (i[field] ?? null), count: Number(i.count) })));
      for (const [value, count] of got) expect(count, `${list} ${value}`).toBe(expected.get(value));
      // Sorted by count, and nothing left out that counts more than the last one listed.
      const counts = items.map((i) => Number(i.count));
      expect(counts, list).toEqual([...counts].sort((a, b) => b - a));
      const smallest = counts.at(-1) ?? 0;
      for (const [value, count] of expected) if (!got.has(value)) expect(count, `${list} ${value} left out`).toBeLessThanOrEqual(smallest);
    }
    expect(body.top.client_ips[0]).toEqual({ client_ip: '203.0.113.5', count: 7 });
    expect(body.top.paths[0]).toEqual({ path: '/login', count: 7 });
    expect(body.top.rules).toEqual([
      { rule_kind: 'virtual_patch', rule_id: 'vp_login', count: 7 },
      { rule_kind: 'rate_limit', rule_id: 'rl_api', count: 3 },
      { rule_kind: 'ip_access', rule_id: 'ipr_x', count: 2 },
    ]);
    expect(body.top.asns[0]).toEqual({ asn: 64_500, count: 7 });
  });

  it('defaults to the last 7 days by the hour, and goes daily for longer ranges', async () => {
    const site = await createSite();
    await record([decision(site, new Date(daysAgo(0).getTime() + 60_000), { action: 'block', rule_kind: 'schema', rule_id: 'sch', status: 403 }), decision(site, new Date(daysAgo(20).getTime() + 5 * HOUR), { action: 'challenge', rule_kind: 'rate_limit', rule_id: 'rl' })]);

    const recent = await t.call('GET', `/api/v1/shield/sites/${site.id}/analytics`);
    expect(recent.status).toBe(200);
    expect(recent.body).toMatchObject({ from: day(daysAgo(6)), to: day(daysAgo(0)), granularity: 'hour', totals: { requests: 1, block: 1, challenge: 0 } });
    expect(recent.body.timeseries).toHaveLength(7 * 24);

    const month = await t.call('GET', `/api/v1/shield/sites/${site.id}/analytics?from=${day(daysAgo(29))}&to=${day(daysAgo(0))}`);
    expect(month.status).toBe(200);
    expect(month.body.granularity).toBe('day');
    expect(month.body.timeseries).toHaveLength(30);
    expect(month.body.timeseries[9]).toEqual({ start: daysAgo(20).toISOString(), requests: 1, allow: 0, block: 0, challenge: 1, log: 0 });
    expect(month.body.timeseries[29]).toMatchObject({ start: daysAgo(0).toISOString(), block: 1 });
    expect(month.body.totals).toEqual({ requests: 2, allow: 0, block: 1, challenge: 1, log: 0 });
    expect(month.body.sampled).toEqual([]);

    // `to` alone: the 7 days ending there.
    const week = await t.call('GET', `/api/v1/shield/sites/${site.id}/analytics?to=${day(daysAgo(17))}`);
    expect(week.body).toMatchObject({ from: day(daysAgo(23)), to: day(daysAgo(17)), totals: { challenge: 1 } });
  });

  it('rejects malformed dates, reversed and overlong ranges with 400 in the error envelope', async () => {
    const site = await createSite();
    const base = `/api/v1/shield/sites/${site.id}/analytics`;
    const cases: [string, string][] = [
      ['?from=2025-1-01&to=2025-01-02', 'from'],
      ['?from=20250101', 'from'],
      ['?from=2025-02-30&to=2025-03-01', 'from'],
      ['?from=2025-01-01&to=2025-13-01', 'to'],
      ['?from=2025-03-02&to=2025-03-01', 'from'],
      ['?from=2025-01-01&to=2025-04-01', 'to'], // 91 days
    ];
    for (const [query, field] of cases) {
      const res = await t.call('GET', base + query);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code, query).toBe('invalid_request');
      expect(res.body.error.details.fields[0].field, query).toBe(field);
    }
    expect((await t.call('GET', `${base}?from=2025-01-01&to=2025-03-31`)).status).toBe(200); // 90 days
    expect((await t.call('GET', `${base}?from=2024-02-29&to=2024-02-29`)).status).toBe(200);
  });

  it('needs shield:read and hides other organisations’ sites (404)', async () => {
    const site = await createSite();
    const path = `/api/v1/shield/sites/${site.id}/analytics`;
    const foreign = await keyInOrganization(t, 'analytics-other', ['shield:read']);
    const res = await t.call('GET', path, { key: foreign });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'not_found', message: 'Shield site not found' });
    const scans = await keyInOrganization(t, 'analytics-other', ['scans:read']);
    const denied = await t.call('GET', path, { key: scans });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('forbidden');
    expect((await t.call('GET', path, { key: null })).status).toBe(401);
    expect((await t.call('GET', '/api/v1/shield/sites/site_nope/analytics')).status).toBe(404);
  });

  it('allows 30 requests per minute per key', async () => {
    const site = await createSite();
    const key = await keyInOrganization(t, 'default', ['shield:read']);
    const path = `/api/v1/shield/sites/${site.id}/analytics`;
    for (let i = 0; i < 30; i++) {
      const res = await t.call('GET', path, { key });
      expect(res.status, `request ${i + 1}`).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBe('30');
    }
    const limited = await t.call('GET', path, { key });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Other routes keep the general budget.
    expect((await t.call('GET', `/api/v1/shield/sites/${site.id}`, { key })).status).toBe(200);
  });

  it('is documented in the OpenAPI document with its scope', async () => {
    const doc = (await t.call('GET', '/api/v1/openapi.json', { key: null })).body;
    const op = doc.paths['/api/v1/shield/sites/{id}/analytics'].get;
    expect(op['x-required-scope']).toBe('shield:read');
    expect(op.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['end', 'from', 'id', 'start', 'to']);
    expect(Object.keys(op.responses['200'].content['application/json'].schema.properties)).toEqual(expect.arrayContaining(['totals', 'recorded', 'sampled', 'timeseries', 'top']));
  });
});

describe('Shield event retention', () => {
  const countRows = async (siteId: string) => {
    const db = t.server.database.db;
    const events = await db.selectFrom('shield_events').select((eb) => eb.fn.countAll<number>().as('n')).where('site_id', '=', siteId).executeTakeFirstOrThrow();
    const rollups = await db.selectFrom('shield_event_rollups').select((eb) => eb.fn.countAll<number>().as('n')).where('site_id', '=', siteId).executeTakeFirstOrThrow();
    return { events: Number(events.n), rollups: Number(rollups.n) };
  };

  it('deletes events and rollups older than the retention, in batches, and keeps the rest', async () => {
    const site = await createSite();
    const old = daysAgo(40);
    const events: DecisionEvent[] = [];
    // 9 old blocks over 3 minutes (3 rollup rows), 2 recent.
    for (let i = 0; i < 9; i++) events.push(decision(site, new Date(old.getTime() + Math.floor(i / 3) * 60_000), { action: 'block', rule_kind: 'schema', rule_id: 'sch', status: 403 }));
    for (let i = 0; i < 2; i++) events.push(decision(site, new Date(daysAgo(1).getTime() + i * 60_000), { action: 'block', rule_kind: 'schema', rule_id: 'sch', status: 403 }));
    await record(events);
    expect(await countRows(site.id)).toEqual({ events: 11, rollups: 5 });

    // Too small a budget stops early; the next run carries on.
    const partial = await pruneShieldEvents(t.server.database.db, 30, { batchSize: 2, maxBatches: 3 });
    expect(partial).toMatchObject({ events: 6, rollups: 0, more: true });
    const rest = await pruneShieldEvents(t.server.database.db, 30, { batchSize: 2 });
    expect(rest).toMatchObject({ events: 3, rollups: 3, more: false });
    expect(await countRows(site.id)).toEqual({ events: 2, rollups: 2 });
    expect(await pruneShieldEvents(t.server.database.db, 30)).toEqual({ events: 0, rollups: 0, more: false });
    expect(await pruneShieldEvents(t.server.database.db, 0)).toEqual({ events: 0, rollups: 0, more: false });

    const res = await t.call('GET', `/api/v1/shield/sites/${site.id}/analytics?from=${day(old)}&to=${day(old)}`);
    expect(res.body.totals.requests).toBe(0);
  });

  it('runs from the housekeeping timer', async () => {
    const s = await startTestServer({ sweepIntervalMs: 50, shieldEventRetentionDays: 30 });
    try {
      const res = await s.call('POST', '/api/v1/shield/sites', { body: { domain: 'retention.example.com', origin_url: 'https://origin.example.net', mode: 'block' } });
      const row = await s.server.database.db.selectFrom('shield_sites').select('org_id').where('id', '=', res.body.id).executeTakeFirstOrThrow();
      const site = { id: res.body.id as string, orgId: row.org_id };
      s.server.shieldEvents.recorder.record(decision(site, daysAgo(31), { action: 'block' }));
      s.server.shieldEvents.recorder.record(decision(site, daysAgo(29), { action: 'block' }));
      await s.server.shieldEvents.recorder.flush();
      const db = s.server.database.db;
      // Events go before their rollups (two statements): wait for both.
      await eventually(async () => {
        const rows = await db.selectFrom('shield_events').select('occurred_at').where('site_id', '=', site.id).execute();
        const rollups = await db.selectFrom('shield_event_rollups').select('minute').where('site_id', '=', site.id).execute();
        return rows.length === 1 && new Date(rows[0]!.occurred_at).getTime() === daysAgo(29).getTime() && rollups.length === 1;
      });
      const rollups = await db.selectFrom('shield_event_rollups').select('minute').where('site_id', '=', site.id).execute();
      expect(rollups.map((r) => new Date(r.minute).toISOString())).toEqual([daysAgo(29).toISOString()]);
    } finally {
      await s.close();
    }
  });
});
