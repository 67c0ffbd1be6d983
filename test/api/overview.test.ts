// GET /api/v1/overview: counts made by the server over the caller's organisation and environment.
// Findings (of known status, severity, false-positive flag and age), scans and Shield rollups are
// written to the database; the overview must count exactly the open ones by severity and by age,
// list the latest scans, and sum blocks of the last 24 hours per site — not another organisation's,
// not the sandbox's, not older traffic. A key without a section's read scope gets that section null.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../platform/ids.ts';
import { ensureSandbox } from '../../platform/db/environments.ts';
import { setPlan } from '../../api/accounts/people/plans.ts';
import { keyInOrganization } from '../support/orgs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let orgId: string;
const DAY = 86_400_000;
const now = Date.now();

async function finding(org: string, severity: string, ageDays: number, status = 'open', falsePositive = false) {
  const id = newId('vuln');
  const seen = new Date(now - ageDays * DAY - 60_000);
  await t.server.database.db
    .insertInto('vulnerabilities')
    .values({
      id,
      org_id: org,
      scan_type: 'secrets',
      target: 'https://git.example.com/app.git',
      fingerprint: `fp-${id}`,
      rule_id: 'aws-key',
      title: 'AWS key',
      severity,
      location: JSON.stringify({ kind: 'file', path: 'a.js', line: 1 }),
      evidence: '***',
      details: JSON.stringify({}),
      status,
      false_positive: falsePositive,
      first_scan_id: 'scan_seed',
      last_scan_id: 'scan_seed',
      first_seen_at: seen,
      last_seen_at: seen,
    })
    .execute();
}

async function scan(org: string, status: string) {
  await t.server.database.db
    .insertInto('scans')
    .values({ id: newId('scan'), org_id: org, scan_type: 'secrets', status, target: 'https://git.example.com/app.git', source: JSON.stringify({ kind: 'git' }), config: JSON.stringify({}), summary: JSON.stringify({}) })
    .execute();
}

async function rollup(siteId: string, minutesAgo: number, action: string, requests: number) {
  const minute = new Date(Math.floor((now - minutesAgo * 60_000) / 60_000) * 60_000);
  await t.server.database.db.insertInto('shield_event_rollups').values({ site_id: siteId, minute, action, rule_kind: action === 'block' ? 'ip' : '', requests, recorded: requests }).execute();
}

beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 100_000 });
  orgId = (await t.call('GET', '/api/v1/me')).body.organization.id;
  // Open: critical new, high 10 d, high 40 d, medium 100 d, acknowledged low 3 d.
  await finding(orgId, 'critical', 1);
  await finding(orgId, 'high', 10);
  await finding(orgId, 'high', 40);
  await finding(orgId, 'medium', 100);
  await finding(orgId, 'low', 3, 'acknowledged');
  // Not open: resolved, accepted risk, a false positive.
  await finding(orgId, 'critical', 2, 'resolved');
  await finding(orgId, 'high', 2, 'accepted_risk');
  await finding(orgId, 'critical', 2, 'open', true);
  // Another organisation and this organisation's sandbox.
  const other = await keyInOrganization(t, 'overview-other', ['admin']);
  const otherOrg = (await t.call('GET', '/api/v1/me', { key: other })).body.organization.id as string;
  await finding(otherOrg, 'critical', 1);
  const sandbox = await ensureSandbox(t.server.database.db, orgId);
  await finding(sandbox, 'critical', 1);

  for (const status of ['completed', 'running', 'queued', 'failed']) await scan(orgId, status);
  await scan(otherOrg, 'running');

  const a = await t.call('POST', '/api/v1/shield/sites', { body: { domain: 'a.overview.test', origin_url: 'https://origin.example.net', mode: 'block' } });
  const b = await t.call('POST', '/api/v1/shield/sites', { body: { domain: 'b.overview.test', origin_url: 'https://origin.example.net', mode: 'log' } });
  const c = await t.call('POST', '/api/v1/shield/sites', { body: { domain: 'c.overview.test', origin_url: 'https://origin.example.net', mode: 'block' } });
  expect([a.status, b.status, c.status]).toEqual([201, 201, 201]);
  await rollup(a.body.id, 5, 'block', 7);
  await rollup(a.body.id, 5, 'allow', 100);
  await rollup(a.body.id, 60 * 23, 'block', 3);
  await rollup(a.body.id, 60 * 25, 'block', 1000); // older than 24 h
  await rollup(b.body.id, 30, 'block', 12);
  const o = await t.call('POST', '/api/v1/shield/sites', { key: other, body: { domain: 'o.overview.test', origin_url: 'https://origin.example.net', mode: 'block' } });
  expect(o.status, o.text).toBe(201);
  await rollup(o.body.id, 5, 'block', 50);
}, 60_000);

afterAll(() => t?.close());

describe('GET /api/v1/overview', () => {
  it('counts open findings by severity and age, the latest scans and blocks of the last 24 h per site', async () => {
    const res = await t.call('GET', '/api/v1/overview');
    expect(res.status, res.text).toBe(200);
    expect(res.body.livemode).toBe(true);
    expect(res.body.findings).toEqual({
      total: 8,
      open: 5,
      by_severity: { critical: 1, high: 2, medium: 1, low: 1, info: 0 },
      by_age: { under_7_days: 2, days_7_to_30: 1, days_30_to_90: 1, over_90_days: 1 },
    });
    expect(res.body.scans.total).toBe(4);
    expect(res.body.scans.active).toBe(2);
    expect(res.body.scans.recent.map((s: { status: string }) => s.status)).toEqual(['failed', 'queued', 'running', 'completed']);
    expect(res.body.shield).toMatchObject({ blocked: 22, requests: 122, sites_total: 3 });
    expect(res.body.shield.sites.map((s: { domain: string; blocked: number }) => [s.domain, s.blocked])).toEqual([
      ['b.overview.test', 12],
      ['a.overview.test', 10],
      ['c.overview.test', 0],
    ]);
  });

  it('leaves out the sections a key cannot read, and counts the sandbox apart', async () => {
    const scansOnly = await keyInOrganization(t, 'overview-scans-only', ['scans:read']);
    const res = await t.call('GET', '/api/v1/overview', { key: scansOnly });
    expect(res.status, res.text).toBe(200);
    expect(res.body.findings).toBeNull();
    expect(res.body.shield).toBeNull();
    expect(res.body.scans).toMatchObject({ total: 0, active: 0, recent: [] });

    await setPlan(t.server.database.db, undefined, orgId, 'pro');
    const testKey = await t.call('POST', '/api/v1/api-keys', { body: { name: 'overview test', scopes: ['admin'], environment: 'test' } });
    expect(testKey.status, testKey.text).toBe(201);
    const sandbox = await t.call('GET', '/api/v1/overview', { key: testKey.body.key });
    expect(sandbox.body).toMatchObject({ livemode: false, findings: { total: 1, open: 1, by_severity: { critical: 1 } }, scans: { total: 0 }, shield: { blocked: 0, sites_total: 0 } });
  });
});
