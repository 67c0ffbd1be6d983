// The impact preview end to end (docs/impact-preview.md): traffic sent through the real gateway to a
// real origin (some answered 200, some 404), recorded, then proposals previewed through the API —
// a new virtual patch, an IP rule, a rate limit, a paranoia-level raise, a mode change — each
// checked exactly against what was sent. A preview stores nothing and crosses no organisation.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { viaGateway, recordingGateway } from '../support/gateway.ts';
import { listenOnLoopback } from '../support/loopback.ts';
import { keyInOrganization } from '../support/orgs.ts';
import { request, startTestServer, type TestServer } from '../support/server.ts';

interface ChangeStats {
  requests: number;
  clients: number;
  networks: number;
  top_clients: { value: string; requests: number }[];
  origin_statuses: { classes: Record<string, number>; exact: Record<string, number> };
  with_session: number;
  first_seen: string | null;
  hourly: { hour: string; requests: number }[];
  examples: { method: string; path: string; query: string | null; status: number; network: string; has_values: boolean }[];
  warning?: string;
}
interface Group {
  coverage: { records: number; with_values: number; exact: boolean };
  newly_blocked: ChangeStats;
  newly_challenged: ChangeStats;
  newly_allowed: ChangeStats;
}
interface Impact {
  site_id: string;
  covered: { since: string | null; recorded_since: string | null };
  mode: { current: string; proposed: string };
  totals: Group & { unchanged: number };
  objects: (Group & { object: { kind: string; id: string | null; operation?: number } })[];
  differs_from_recorded: number;
}

let t: TestServer;
let origin: { url: string; close(): Promise<void> };
let siteId: string;
const host = 'shop.impact.test';
type Sent = { path: string; from: string; method?: string; json?: unknown };
/** Every request sent to the site, in order: replayed against sites at other levels to check the previews. */
const traffic: Sent[] = [];
/** Every request sent, as the test counts them. */
const SENT = 20 + 5 + 3 + 4 + 6 + 2 + 3;

beforeAll(async () => {
  origin = await listenOnLoopback(createServer((req, res) => req.resume().on('end', () => res.writeHead(req.url?.startsWith('/missing') ? 404 : 200).end('ok'))));
  t = await startTestServer({
    rateLimitPerMinute: 100_000,
    ...recordingGateway(),
  });
  const site = await t.call('POST', '/api/v1/shield/sites', { body: { domain: host, origin_url: origin.url, mode: 'block', managed_rules: { enabled: true, paranoia_level: 1 } } });
  expect(site.status, site.text).toBe(201);
  siteId = site.body.id as string;
  await t.server.gateway!.registry.refresh();
  const gateway = t.server.gateway!.url;
  const send = async (path: string, from: string, expected: number, options: { method?: string; json?: unknown } = {}) => {
    traffic.push({ path, from, ...options });
    const res = await viaGateway(gateway, path, { host, from, ...options });
    expect(res.status, `${path} from ${from}`).toBe(expected);
  };
  for (let i = 1; i <= 20; i++) await send(`/products/${i}?q=shoes`, `198.51.100.${i}`, 200);
  for (let i = 1; i <= 5; i++) await send(`/missing/${i}`, '203.0.113.9', 404);
  for (let i = 0; i < 3; i++) await send('/admin/export?format=csv', '192.0.2.50', 200);
  for (let i = 0; i < 4; i++) await send(`/search?q=${encodeURIComponent('<script>alert(1)</script>')}`, '203.0.113.66', 403);
  for (let i = 0; i < 6; i++) await send('/api/login', '198.51.100.77', 200, { method: 'POST', json: { user: 'bob' } });
  for (let i = 0; i < 2; i++) await send('/page?debug=1', '198.51.100.88', 200);
  // Passes at paranoia level 1, flagged from level 2.
  for (let i = 0; i < 3; i++) await send(`/search?q=${encodeURIComponent('eval(x)')}`, '198.51.100.99', 200);
  await t.server.shieldEvents.traffic!.flush();
}, 60_000);
afterAll(async () => {
  await t?.close();
  await origin?.close();
});

const preview = (body: unknown, key = t.adminKey, site = siteId) => request<Impact>(t.url, 'POST', `/api/v1/shield/sites/${site}/impact`, { key, body });

async function expectPreview(body: unknown): Promise<Impact> {
  const res = await preview(body);
  expect(res.status, res.text).toBe(200);
  expect(res.body.totals.coverage.records).toBe(SENT);
  return res.body;
}

describe('impact preview', () => {
  it('the current configuration against itself changes nothing, and replays what was recorded', async () => {
    const impact = await expectPreview({});
    expect(impact.totals.unchanged).toBe(SENT);
    expect(impact.objects).toEqual([]);
    expect(impact.differs_from_recorded).toBe(0);
    expect(impact.covered.recorded_since).not.toBeNull();
  });

  it('a new virtual patch: the two requests it matches, which the origin had answered 200', async () => {
    const impact = await expectPreview({ operations: [{ op: 'create', kind: 'virtual_patch', spec: { url_pattern: '/*', method: 'ANY', match_param: 'debug', match_regex: '^1$', action: 'block' } }] });
    expect(impact.totals.newly_blocked.requests).toBe(2);
    expect(impact.objects).toHaveLength(1);
    const [patch] = impact.objects;
    expect(patch!.object).toEqual({ kind: 'virtual_patch', id: null, operation: 0 });
    expect(patch!.newly_blocked).toMatchObject({ requests: 2, clients: 1, networks: 1, origin_statuses: { classes: { '2xx': 2 } } });
    expect(patch!.newly_blocked.warning).toMatch(/2xx/);
    // Examples are redacted: the parameter's name, never its value.
    expect(patch!.newly_blocked.examples[0]).toMatchObject({ method: 'GET', path: '/page', query: 'debug=…', network: '198.51.100.0/24', has_values: true });
  });

  it('an IP deny: exactly the requests of that address', async () => {
    const impact = await expectPreview({ operations: [{ op: 'create', kind: 'ip_access_rule', spec: { type: 'ip', value: '192.0.2.50', action: 'deny' } }] });
    expect(impact.totals.newly_blocked).toMatchObject({ requests: 3, clients: 1, top_clients: [{ value: '192.0.2.50', requests: 3 }] });
    expect(impact.objects.map((o) => o.object.kind)).toEqual(['ip_access']);
    expect(impact.objects[0]!.coverage.exact).toBe(true); // an IP rule reads only what every record has
  });

  it('a rate limit replays its window over the recorded timestamps: 2 of 6 logins pass', async () => {
    const impact = await expectPreview({ operations: [{ op: 'create', kind: 'rate_limit_rule', spec: { identity: 'ip', url_pattern: '/api/login', method: 'POST', budget: 2, window_seconds: 60, action: 'block' } }] });
    expect(impact.totals.newly_blocked).toMatchObject({ requests: 4, clients: 1, top_clients: [{ value: '198.51.100.77', requests: 4 }] });
    expect(impact.objects[0]!.object).toMatchObject({ kind: 'rate_limit', operation: 0 });
  });

  it('a paranoia-level raise: the requests only level 2 flags', async () => {
    const impact = await expectPreview({ site: { managed_rules: { paranoia_level: 2 } } });
    expect(impact.totals.newly_blocked).toMatchObject({ requests: 3, top_clients: [{ value: '198.51.100.99', requests: 3 }] });
    expect(impact.objects.map((o) => o.object.kind)).toEqual(['managed']);
    // Answered from every request's recorded verdict at each level, not from a sample of values.
    expect(impact.objects[0]!.coverage.exact).toBe(true);
  });

  it('a raise to each level counts exactly what a site at that level blocks of the same traffic', async () => {
    const gateway = t.server.gateway!.url;
    for (const level of [2, 3, 4]) {
      const domain = `level${level}.impact.test`;
      const site = await t.call('POST', '/api/v1/shield/sites', { body: { domain, origin_url: origin.url, mode: 'block', managed_rules: { enabled: true, paranoia_level: level } } });
      expect(site.status, site.text).toBe(201);
      await t.server.gateway!.registry.refresh();
      let blocked = 0;
      for (const { path, from, ...options } of traffic) if ((await viaGateway(gateway, path, { host: domain, from, ...options })).status === 403) blocked++;
      const impact = await expectPreview({ site: { managed_rules: { paranoia_level: level } } });
      // The four script tags are blocked at level 1 already.
      expect(impact.totals.newly_blocked.requests, `level ${level}`).toBe(blocked - 4);
      expect(impact.totals.coverage.exact).toBe(true);
    }
  });

  it('block → log: what is blocked today would pass, attributed to the mode', async () => {
    const impact = await expectPreview({ site: { mode: 'log' } });
    expect(impact.mode).toEqual({ current: 'block', proposed: 'log' });
    expect(impact.totals.newly_allowed).toMatchObject({ requests: 4, top_clients: [{ value: '203.0.113.66', requests: 4 }] });
    expect(impact.totals.newly_blocked.requests).toBe(0);
    expect(impact.objects.map((o) => o.object.kind)).toEqual(['mode']);
  });

  it('stores nothing, refuses what apply would refuse, and is invisible to another organisation', async () => {
    const before = await t.call('GET', `/api/v1/shield/sites/${siteId}/virtual-patches`);
    const bad = await preview({ operations: [{ op: 'create', kind: 'virtual_patch', spec: { url_pattern: '/*', method: 'ANY', match_param: 'q', match_regex: '(?<=x)y', action: 'block' } }] });
    expect(bad.status, bad.text).toBe(422);
    expect(bad.text).toMatch(/match_regex/);
    const badLevel = await preview({ site: { managed_rules: { paranoia_level: 9 } } });
    expect(badLevel.status).toBe(422);
    const backwards = await preview({ since: new Date().toISOString(), until: new Date(Date.now() - 60_000).toISOString() });
    expect(backwards.status).toBe(422);

    await preview({ site: { mode: 'log' }, operations: [{ op: 'create', kind: 'virtual_patch', spec: { url_pattern: '/*', method: 'ANY', match_param: 'debug', match_regex: '^1$', action: 'block' } }] });
    expect((await t.call('GET', `/api/v1/shield/sites/${siteId}/virtual-patches`)).body).toEqual(before.body);
    expect((await t.call('GET', `/api/v1/shield/sites/${siteId}`)).body.mode).toBe('block');

    const stranger = await keyInOrganization(t, 'impact-stranger', ['shield:read', 'shield:write']);
    const res = await preview({}, stranger);
    expect(res.status).toBe(404);
  });
});

describe('impact preview of schema enforcement', () => {
  it('standard → strict: exactly the requests with a query parameter the document does not declare', async () => {
    const schemaHost = 'pets.impact.test';
    const site = await t.call('POST', '/api/v1/shield/sites', { body: { domain: schemaHost, origin_url: origin.url, mode: 'block', managed_rules: { enabled: false } } });
    expect(site.status, site.text).toBe(201);
    const id = site.body.id as string;
    const upload = await t.call('PUT', `/api/v1/shield/sites/${id}/schema`, { raw: readFileSync('test/fixtures/openapi/petstore-3.0.yaml', 'utf8'), headers: { 'content-type': 'application/yaml' } });
    expect(upload.status, upload.text).toBeLessThan(300);
    await t.server.gateway!.registry.refresh();
    for (let i = 0; i < 2; i++) expect((await viaGateway(t.server.gateway!.url, '/pet/findByStatus?status=available', { host: schemaHost, from: '198.51.100.5' })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await viaGateway(t.server.gateway!.url, '/pet/findByStatus?status=available&debug=1', { host: schemaHost, from: '198.51.100.6' })).status).toBe(200);
    await t.server.shieldEvents.traffic!.flush();
    const res = await preview({ schema: { strictness: 'strict' } }, t.adminKey, id);
    expect(res.status, res.text).toBe(200);
    expect(res.body.totals.coverage.records).toBe(5);
    expect(res.body.totals.newly_blocked).toMatchObject({ requests: 3, top_clients: [{ value: '198.51.100.6', requests: 3 }] });
    expect(res.body.objects.map((o) => o.object.kind)).toEqual(['schema']);
    expect((await t.call('GET', `/api/v1/shield/sites/${id}/schema-config`)).body.strictness).toBe('standard');
  });
});
