// The sandbox end to end with the real terraform binary: `terraform apply` of examples/terraform
// with a `svc_test_` key creates test objects only; the live gateway does not serve the test site;
// the sandbox listener does and enforces its rules. A live site may then take the same domain
// (uniqueness is per environment) and is served by the live gateway with its own (live) rules,
// and `terraform destroy` with the test key leaves it alone.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setPlan } from '../../api/accounts/people/plans.ts';
import { eventually, viaGateway } from '../support/gateway.ts';
import { startOrigin, type Echo, type Origin } from '../support/origin.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { applyClean, terraformWorkspace, type TerraformWorkspace } from '../support/terraform.ts';

const DOMAIN = 'shop.example.com';
// Matches the example's virtual patch (GET /search, q =~ (?i)union\s+select).
const UNION_SELECT = `/search?q=${encodeURIComponent('1 union select 2')}`;
// A request the example's schema (openapi.yaml, strictness standard) declares, and no rule refuses.
const HARMLESS = '/search?q=shoes';

let t: TestServer;
let testOrigin: Origin; // behind the terraform-made (test) site
let liveOrigin: Origin; // behind the live site of the same domain made through the API
let tf: TerraformWorkspace;
let testKey = '';
let siteId = ''; // the test site, from terraform state
let liveSiteId = '';
const terraform = (...args: string[]) => tf.run(...args);
const asLive = (method: string, path: string, body?: unknown) => t.call(method, path, body === undefined ? {} : { body });
const asTest = (method: string, path: string, body?: unknown) => t.call(method, path, body === undefined ? { key: testKey } : { key: testKey, body });
const live = () => t.server.gateway!;
const sandbox = () => t.server.sandboxGateway!;
const from = '203.0.113.50'; // a client outside the example's allow-listed office network
const seen = (origin: Origin, url: string) => origin.received.some((r) => r.url === url);

async function shieldEvents(id: string): Promise<{ action: string; rule_kind: string | null; rule_id: string | null; path: string; status: number }[]> {
  await t.server.shieldEvents.recorder.flush();
  return t.server.database.db.selectFrom('shield_events').select(['action', 'rule_kind', 'rule_id', 'path', 'status']).where('site_id', '=', id).orderBy('id').execute();
}

beforeAll(async () => {
  testOrigin = await startOrigin();
  liveOrigin = await startOrigin();
  t = await startTestServer({
    rateLimitPerMinute: 1_000_000,
    shieldEnabled: true,
    shieldPort: 0,
    sandboxShieldPort: 0,
    trustedProxies: ['127.0.0.1', '::1'],
    shieldAllowSampleRate: 1,
  });
  if (!t.server.gateway || !t.server.sandboxGateway) throw new Error('the test server should run both the live and the sandbox gateway');
  expect(t.server.sandboxGateway.url).not.toBe(t.server.gateway.url);

  // Admin keys need the pro plan; the test key is made by the live admin key, as a user would.
  const me = await asLive('GET', '/api/v1/me');
  expect(me.status, me.text).toBe(200);
  expect(await setPlan(t.server.database.db, undefined, me.body.organization.id, 'pro')).toBe(true);
  const created = await asLive('POST', '/api/v1/api-keys', { name: 'terraform sandbox', scopes: ['admin'], environment: 'test' });
  expect(created.status, created.text).toBe(201);
  expect(created.body).toMatchObject({ livemode: false });
  expect(created.body.key).toMatch(/^svc_test_/);
  testKey = created.body.key;

  tf = terraformWorkspace('examples/terraform', t.url, testKey);
  // Only the origin changes: the test site forwards to a local server this test watches.
  const mainTf = join(tf.dir, 'main.tf');
  const text = readFileSync(mainTf, 'utf8');
  expect(text).toContain('origin_url = "https://origin.shop.example.com"');
  writeFileSync(mainTf, text.replace('origin_url = "https://origin.shop.example.com"', `origin_url = "${testOrigin.url}"`));
}, 120_000);
afterAll(async () => {
  await t?.close();
  await testOrigin?.close();
  await liveOrigin?.close();
  tf?.remove();
});

describe('terraform with a test key: the sandbox', () => {
  it('init and apply with the test key create the example (8 resources); an immediate plan has no changes', async () => {
    await applyClean(tf, 8);
    const output = await terraform('output', '-raw', 'shop_site_id');
    expect(output.status, output.stderr).toBe(0);
    siteId = output.stdout.trim();
    expect(siteId).toMatch(/^\S+$/);
  }, 180_000);

  it('the live key sees nothing of it: no sites, webhooks or schedules, and the site id is 404', async () => {
    expect((await asLive('GET', '/api/v1/shield/sites')).body.data).toEqual([]);
    expect((await asLive('GET', `/api/v1/shield/sites?domain=${DOMAIN}`)).body.data).toEqual([]);
    expect((await asLive('GET', '/api/v1/webhooks')).body.data).toEqual([]);
    expect((await asLive('GET', '/api/v1/scan-schedules')).body.data).toEqual([]);
    expect((await asLive('GET', `/api/v1/shield/sites/${siteId}`)).status).toBe(404);
    expect((await asLive('GET', `/api/v1/shield/sites/${siteId}/virtual-patches`)).status).toBe(404);
    expect((await asLive('GET', `/api/v1/shield/sites/${siteId}/ip-access`)).status).toBe(404);
  });

  it('the test key sees the site and its rules, all with livemode false', async () => {
    const sites = await asTest('GET', '/api/v1/shield/sites');
    expect(sites.status, sites.text).toBe(200);
    expect(sites.body.data).toHaveLength(1);
    expect(sites.body.data[0]).toMatchObject({ id: siteId, domain: DOMAIN, origin_url: testOrigin.url, mode: 'block', livemode: false });
    expect((await asTest('GET', `/api/v1/shield/sites/${siteId}`)).body).toMatchObject({ id: siteId, livemode: false });

    const patches = (await asTest('GET', `/api/v1/shield/sites/${siteId}/virtual-patches`)).body.data;
    expect(patches).toHaveLength(1);
    expect(patches[0]).toMatchObject({ url_pattern: '/search', match_param: 'q', livemode: false });
    const ipRules = (await asTest('GET', `/api/v1/shield/sites/${siteId}/ip-access`)).body.data;
    expect(ipRules).toHaveLength(2);
    for (const rule of ipRules) expect(rule.livemode).toBe(false);
    const rateLimits = (await asTest('GET', `/api/v1/shield/sites/${siteId}/rate-limits`)).body.data;
    expect(rateLimits).toHaveLength(1);
    expect(rateLimits[0].livemode).toBe(false);
    const schema = (await asTest('GET', `/api/v1/shield/sites/${siteId}/schema`)).body;
    expect(schema).toMatchObject({ livemode: false, site_id: siteId });
    expect(schema.operations).toHaveLength(2);
    const webhooks = (await asTest('GET', '/api/v1/webhooks')).body.data;
    expect(webhooks).toHaveLength(1);
    expect(webhooks[0].livemode).toBe(false);
    const schedules = (await asTest('GET', '/api/v1/scan-schedules')).body.data;
    expect(schedules).toHaveLength(1);
    expect(schedules[0].livemode).toBe(false);
  });

  it('the live gateway does not serve the test site: 421 unknown host, the origin sees nothing', async () => {
    // The configuration is loaded (the sandbox registry has the site) before the live one is asked.
    await eventually(async () => {
      await sandbox().registry.refresh();
      return sandbox().registry.lookup(DOMAIN)?.id === siteId;
    });
    await live().registry.refresh();
    expect(live().registry.lookup(DOMAIN)).toBeUndefined();
    for (const path of [HARMLESS, UNION_SELECT]) {
      const res = await viaGateway(live().url, path, { host: DOMAIN, from, headers: { accept: 'application/json' } });
      expect(res.status, res.text).toBe(421);
      expect(res.text).toContain('misdirected_request');
      const page = await viaGateway(live().url, path, { host: DOMAIN, from });
      expect(page.status).toBe(421);
      expect(page.text).toContain('Unknown site');
    }
    expect(testOrigin.received).toEqual([]);
    expect(liveOrigin.received).toEqual([]);
  });

  it('the sandbox gateway forwards to the origin and enforces the virtual patch', async () => {
    expect(sandbox().registry.lookup(DOMAIN)?.id).toBe(siteId);
    const ok = await viaGateway(sandbox().url, HARMLESS, { host: DOMAIN, from });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json<Echo>().url).toBe(HARMLESS);
    expect(seen(testOrigin, HARMLESS)).toBe(true);

    const blocked = await viaGateway(sandbox().url, UNION_SELECT, { host: DOMAIN, from });
    expect(blocked.status, blocked.text).toBe(403);
    expect(seen(testOrigin, UNION_SELECT)).toBe(false);
    expect(liveOrigin.received).toEqual([]);

    // It was the virtual patch (step 6 of the pipeline) that blocked, not a managed rule.
    const [patch] = (await asTest('GET', `/api/v1/shield/sites/${siteId}/virtual-patches`)).body.data;
    const events = await shieldEvents(siteId);
    expect(events).toContainEqual(expect.objectContaining({ action: 'block', rule_kind: 'virtual_patch', rule_id: patch.id, path: '/search', status: 403 }));
  });

  it('a live site may take the same domain; the live gateway then serves it, without the test virtual patch', async () => {
    // Managed rules off and mode block: only a live rule could block, and the live site has none,
    // so the union-select probe (which the test site blocks by its virtual patch) must pass.
    const created = await asLive('POST', '/api/v1/shield/sites', { domain: DOMAIN, origin_url: liveOrigin.url, mode: 'block', managed_rules: { enabled: false } });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ domain: DOMAIN, livemode: true });
    liveSiteId = created.body.id;
    expect(liveSiteId).not.toBe(siteId);
    expect((await asLive('GET', `/api/v1/shield/sites/${liveSiteId}/virtual-patches`)).body.data).toEqual([]);
    // Neither environment sees the other's site of that domain.
    expect((await asLive('GET', '/api/v1/shield/sites')).body.data.map((s: { id: string }) => s.id)).toEqual([liveSiteId]);
    expect((await asTest('GET', '/api/v1/shield/sites')).body.data.map((s: { id: string }) => s.id)).toEqual([siteId]);
    expect((await asTest('GET', `/api/v1/shield/sites/${liveSiteId}`)).status).toBe(404);

    await eventually(async () => {
      await live().registry.refresh();
      return live().registry.lookup(DOMAIN)?.id === liveSiteId;
    });
    const ok = await viaGateway(live().url, HARMLESS, { host: DOMAIN, from });
    expect(ok.status, ok.text).toBe(200);
    expect(seen(liveOrigin, HARMLESS)).toBe(true);
    const probe = await viaGateway(live().url, UNION_SELECT, { host: DOMAIN, from });
    expect(probe.status, probe.text).toBe(200);
    expect(probe.json<Echo>().url).toBe(UNION_SELECT);
    expect(seen(liveOrigin, UNION_SELECT)).toBe(true);
    expect(seen(testOrigin, UNION_SELECT)).toBe(false);
    expect(await shieldEvents(liveSiteId)).not.toContainEqual(expect.objectContaining({ rule_kind: 'virtual_patch' }));

    // …and the sandbox gateway still serves the test site, still blocking.
    await sandbox().registry.refresh();
    expect(sandbox().registry.lookup(DOMAIN)?.id).toBe(siteId);
    const before = liveOrigin.received.length;
    expect((await viaGateway(sandbox().url, UNION_SELECT, { host: DOMAIN, from })).status).toBe(403);
    const again = await viaGateway(sandbox().url, HARMLESS, { host: DOMAIN, from });
    expect(again.status, again.text).toBe(200);
    expect(liveOrigin.received.length).toBe(before);
    expect(seen(testOrigin, UNION_SELECT)).toBe(false);
  });

  it('destroy with the test key removes the test objects and leaves the live site in place', async () => {
    const destroy = await terraform('destroy', '-auto-approve');
    expect(destroy.status, destroy.stderr + destroy.stdout).toBe(0);
    expect(destroy.stdout).toMatch(/Destroy complete! Resources: 8 destroyed/);

    expect((await asTest('GET', '/api/v1/shield/sites')).body.data).toEqual([]);
    expect((await asTest('GET', '/api/v1/webhooks')).body.data).toEqual([]);
    expect((await asTest('GET', '/api/v1/scan-schedules')).body.data).toEqual([]);

    const liveSites = (await asLive('GET', '/api/v1/shield/sites')).body.data;
    expect(liveSites).toHaveLength(1);
    expect(liveSites[0]).toMatchObject({ id: liveSiteId, domain: DOMAIN, origin_url: liveOrigin.url, livemode: true });

    await eventually(async () => {
      await sandbox().registry.refresh();
      return sandbox().registry.lookup(DOMAIN) === undefined;
    });
    const gone = await viaGateway(sandbox().url, HARMLESS, { host: DOMAIN, from });
    expect(gone.status, gone.text).toBe(421);
    await live().registry.refresh();
    const stillLive = await viaGateway(live().url, HARMLESS, { host: DOMAIN, from });
    expect(stillLive.status, stillLive.text).toBe(200);
  }, 120_000);
});
