// The reconciler end to end: the `aegis` command against a running server.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAegis } from '../support/cli.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let repo: string;
let env: Record<string, string>;
const SOURCE = 'git.example.com/acme/shield-config';

beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 1_000_000 });
  repo = mkdtempSync(join(tmpdir(), 'aegis-gitops-'));
  cpSync('examples/gitops', repo, { recursive: true });
  env = { AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey };
});
afterAll(async () => {
  await t.close();
  rmSync(repo, { recursive: true, force: true });
});

const plan = (...extra: string[]) => runAegis(['plan', repo, '--source', SOURCE, ...extra], env);
const apply = (...extra: string[]) => runAegis(['apply', repo, '--source', SOURCE, '--yes', ...extra], env);
const planJson = async (...extra: string[]) => {
  const result = await plan('--json', ...extra);
  return { code: result.code, plan: JSON.parse(result.stdout) as { checksum: string; summary: Record<string, number>; changes: { action: string; kind: string; name: string; diff: { field: string }[] }[]; unmanaged: { id: string }[] } };
};

describe('aegis plan / apply', () => {
  it('plans every object of the example repo, applies them, and then has nothing to do', async () => {
    const first = await plan();
    expect(first.code, first.stderr).toBe(2);
    for (const name of ['ShieldSite shop', 'ShieldSite api', 'VirtualPatch shop/search-sqli', 'IpAccessRule shop/office', 'RateLimitRule api/per-key', 'ShieldSchema api/public-api', 'ScanSchedule nightly-shop-dast', 'Webhook security-alerts']) {
      expect(first.stdout).toContain(name);
    }
    expect(first.stdout).toMatch(/Plan: 14 to create, 0 to update, 0 to replace, 0 to delete/);
    expect(first.stdout).toMatch(/Checksum: [0-9a-f]{16}/);

    const applied = await apply();
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect(applied.stdout).toContain('Applied 14 step(s)');
    const sites = await t.call('GET', '/api/v1/shield/sites');
    expect(sites.body.data.map((s: { domain: string }) => s.domain).sort()).toEqual(['api.example.com', 'shop.example.com']);
    expect(sites.body.data[0].labels['aegis.dev/source']).toBe(SOURCE);
    const byDomain = Object.fromEntries(sites.body.data.map((s: { domain: string }) => [s.domain, s]));
    // Given in config (nested defaults filled in, unset sub-fields absent) or left to the API's default.
    expect(byDomain['shop.example.com']).toMatchObject({
      path_case: 'insensitive',
      managed_rules: { enabled: true, paranoia_level: 2, exclusions: [{ rules: ['sqli.tautology'], url_pattern: '/cms/*' }, { rules: ['xss'], parameter: 'comment_html' }] },
    });
    expect(byDomain['api.example.com'].managed_rules).toEqual({ enabled: true, paranoia_level: 1, exclusions: [] });

    const again = await plan();
    expect(again.code, again.stdout).toBe(0);
    expect(again.stdout).toContain('No changes');
  });

  it('editing one rule updates exactly that object; an object made by hand survives', async () => {
    const shop = (await t.call('GET', '/api/v1/shield/sites?domain=shop.example.com')).body.data[0];
    const manual = await t.call('POST', `/api/v1/shield/sites/${shop.id}/ip-access`, { body: { type: 'ip', value: '192.0.2.200', action: 'deny', note: 'added by hand' } });
    expect(manual.status).toBe(201);

    const file = join(repo, 'sites/shop.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('budget: 10', 'budget: 20'));
    const { code, plan: p } = await planJson();
    expect(code).toBe(2);
    expect(p.changes).toEqual([expect.objectContaining({ action: 'update', kind: 'RateLimitRule', name: 'shop/login', diff: [expect.objectContaining({ field: 'budget', before: 10, after: 20 })] })]);
    expect(p.unmanaged.map((u) => u.id)).toContain(manual.body.id);
    expect((await apply()).code).toBe(0);
    expect((await plan()).code).toBe(0);
    expect((await t.call('GET', `/api/v1/shield/sites/${shop.id}/ip-access/${manual.body.id}`)).status).toBe(200);
  });

  it('deleting a file prunes exactly its objects', async () => {
    rmSync(join(repo, 'ops/webhooks.yaml'));
    const { plan: p } = await planJson();
    expect(p.changes.map((c) => `${c.action} ${c.kind} ${c.name}`)).toEqual(['delete Webhook security-alerts']);
    expect((await apply()).code).toBe(0);
    expect((await t.call('GET', '/api/v1/webhooks')).body.data).toEqual([]);
    expect((await plan('--no-prune')).code).toBe(0);
  });

  it('apply refuses a plan whose checksum differs from the reviewed one', async () => {
    const file = join(repo, 'sites/shop.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('mode: block', 'mode: challenge'));
    const { plan: reviewed } = await planJson();
    const refused = await apply('--checksum', '0000000000000000');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('checksum');
    expect((await apply('--checksum', reviewed.checksum)).code).toBe(0);
  });

  it('dump then plan on the result shows no changes', async () => {
    const out = mkdtempSync(join(tmpdir(), 'aegis-dump-'));
    try {
      const dumped = await runAegis(['dump', '--out', out], env);
      expect(dumped.code, dumped.stderr).toBe(0);
      const shop = readFileSync(join(out, 'shop.yaml'), 'utf8');
      expect(shop).toContain('path_case: insensitive');
      expect(shop).toMatch(/managed_rules:\n {4}enabled: true\n {4}paranoia_level: 2\n {4}exclusions:\n {6}- rules:\n {10}- sqli\.tautology\n {8}url_pattern: \/cms\/\*\n/);
      const roundTrip = await runAegis(['plan', out, '--source', SOURCE], env);
      // Objects made by hand are unowned: the dump names them, and plan reports them as collisions
      // unless adopted; everything this source owns must come back unchanged.
      const adopted = await runAegis(['plan', out, '--source', SOURCE, '--adopt', '--json'], env);
      const changes = (JSON.parse(adopted.stdout) as { changes: { action: string; adopted: boolean }[] }).changes;
      expect(changes.every((c) => c.action === 'update' && c.adopted), roundTrip.stdout).toBe(true);
      expect(changes).toHaveLength(1);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
