// GET /api/v1/shield/sites/:id/analytics with `start`/`end` instants (the dashboard's "last hour"
// and "last 24 hours"): the granularity the span calls for, rounding outwards to whole buckets,
// counts and top lists over exactly those minutes, and the validation of the parameters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecisionEvent } from '../../gateway/decision.ts';
import { newId } from '../../platform/ids.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

let t: TestServer;
let site: { id: string; orgId: string };
beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 10_000, shieldAllowSampleRate: 1, shieldEventRetentionDays: 0 });
  const res = await t.call('POST', '/api/v1/shield/sites', { body: { domain: 'instants.example.com', origin_url: 'https://origin.example.net', mode: 'block' } });
  expect(res.status).toBe(201);
  const row = await t.server.database.db.selectFrom('shield_sites').select('org_id').where('id', '=', res.body.id).executeTakeFirstOrThrow();
  site = { id: res.body.id, orgId: row.org_id };
});
afterAll(() => t?.close());

function decision(time: Date, fields: Partial<DecisionEvent> = {}): DecisionEvent {
  return {
    id: newId('dec'),
    time: time.toISOString(),
    site_id: site.id,
    org_id: site.orgId,
    action: 'block',
    rule_kind: 'ip_access',
    rule_id: 'ipr_1',
    would: null,
    client_ip: '203.0.113.20',
    asn: null,
    country: null,
    method: 'GET',
    host: 'instants.example.com',
    path: '/x',
    status: 403,
    request_id: newId('req'),
    ...fields,
  };
}

const get = (query: string) => t.call('GET', `/api/v1/shield/sites/${site.id}/analytics?${query}`);

describe('Shield analytics over instants', () => {
  it('gives minute points for a short range, rounded outwards, counting only those minutes', async () => {
    // Two days back, so that no other test's "now" reaches it.
    const base = new Date(Math.floor(Date.now() / DAY) * DAY - 2 * DAY + 10 * HOUR);
    const events = [
      decision(new Date(base.getTime() + 5 * MINUTE + 10_000)),
      decision(new Date(base.getTime() + 5 * MINUTE + 20_000), { action: 'allow', rule_kind: null, rule_id: null, status: 200, client_ip: '198.51.100.3' }),
      decision(new Date(base.getTime() + 59 * MINUTE + 59_000), { action: 'challenge', client_ip: '198.51.100.4' }),
      // Just outside: the minute before the rounded start and the minute of the rounded end.
      decision(new Date(base.getTime() - 1), { client_ip: '192.0.2.1' }),
      decision(new Date(base.getTime() + 60 * MINUTE), { client_ip: '192.0.2.2' }),
    ];
    for (const event of events) t.server.shieldEvents.recorder.record(event);
    await t.server.shieldEvents.recorder.flush();

    const start = new Date(base.getTime() + 30_000).toISOString();
    const end = new Date(base.getTime() + 59 * MINUTE + 30_000).toISOString();
    const res = await get(`start=${encodeURIComponent(start)}&end=${encodeURIComponent(end)}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ granularity: 'minute', start: base.toISOString(), end: new Date(base.getTime() + HOUR).toISOString(), from: base.toISOString().slice(0, 10) });
    expect(res.body.timeseries).toHaveLength(60);
    expect(res.body.timeseries[5]).toEqual({ start: new Date(base.getTime() + 5 * MINUTE).toISOString(), requests: 2, allow: 1, block: 1, challenge: 0, log: 0 });
    expect(res.body.timeseries[59]).toMatchObject({ requests: 1, challenge: 1 });
    expect(res.body.totals).toEqual({ requests: 3, allow: 1, block: 1, challenge: 1, log: 0 });
    const ips = res.body.top.client_ips.map((r: { client_ip: string }) => r.client_ip).sort();
    expect(ips).toEqual(['198.51.100.3', '198.51.100.4', '203.0.113.20']);

    // A day's span gets hours; a month's gets days.
    const day = await get(`start=${encodeURIComponent(new Date(base.getTime() - 23 * HOUR + 5 * MINUTE).toISOString())}&end=${encodeURIComponent(new Date(base.getTime() + HOUR + 5 * MINUTE).toISOString())}`);
    expect(day.status, day.text).toBe(200);
    expect(day.body.granularity).toBe('hour');
    expect(day.body.timeseries).toHaveLength(25);
    expect(day.body.totals.requests).toBe(5);
    const month = await get(`start=${encodeURIComponent(new Date(base.getTime() - 30 * DAY).toISOString())}&end=${encodeURIComponent(base.toISOString())}`);
    expect(month.status, month.text).toBe(200);
    expect(month.body.granularity).toBe('day');
    expect(month.body.timeseries).toHaveLength(31);
  });

  it('defaults end to now', async () => {
    const res = await get(`start=${encodeURIComponent(new Date(Date.now() - HOUR).toISOString())}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.granularity).toBe('minute');
    expect(new Date(res.body.end).getTime()).toBeGreaterThanOrEqual(Date.now() - MINUTE);
    expect(res.body.timeseries.length).toBeGreaterThanOrEqual(60);
    expect(res.body.timeseries.length).toBeLessThanOrEqual(62);
  });

  it('refuses mixed, inverted, too long or malformed ranges in the error envelope', async () => {
    const now = Date.now();
    const iso = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
    const cases: [string, string][] = [
      [`start=${iso(now - HOUR)}&from=2025-01-01`, 'start'],
      [`end=${iso(now)}`, 'start'],
      [`start=${iso(now)}&end=${iso(now - HOUR)}`, 'start'],
      [`start=${iso(now - 91 * DAY)}&end=${iso(now)}`, 'end'],
    ];
    for (const [query, field] of cases) {
      const res = await get(query);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code, query).toBe('invalid_request');
      expect(res.body.error.details.fields[0].field, query).toBe(field);
    }
    const malformed = await get('start=yesterday');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('invalid_request');
  });
});
