// The reconciler end to end: the `aegis` command against a running server.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
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
      // Everything, for adopting a live account: no source, so no project file naming one.
      expect(existsSync(join(out, 'aegis.yaml'))).toBe(false);
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

describe('aegis dump --source', () => {
  // Two more sources beside SOURCE (whose objects the tests above left live) and objects made by
  // hand, one of them a rule labelled for ALPHA on BETA's site: config of ALPHA cannot hold it.
  const ALPHA = 'github.com/acme/alpha-shield';
  const BETA = 'github.com/acme/beta-shield';
  const dirs: string[] = [];
  let orphanId: string;
  const tempDir = (prefix: string) => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  const applied = async (dir: string, source: string) => {
    const result = await runAegis(['apply', dir, '--source', source, '--yes'], env);
    expect(result.code, result.stdout + result.stderr).toBe(0);
  };

  beforeAll(async () => {
    const alpha = tempDir('aegis-alpha-');
    cpSync('examples/gitops/openapi/api.yaml', join(alpha, 'alpha-openapi.yaml'));
    writeFileSync(
      join(alpha, 'alpha.yaml'),
      [
        'apiVersion: aegis/v1',
        'kind: ShieldSite',
        'metadata: { name: alpha }',
        'spec:',
        '  domain: alpha.example.com',
        '  origin_url: https://origin.alpha.example.com',
        '  mode: block',
        '  labels: { team: alpha }',
        '  virtual_patches:',
        "    - { name: search-sqli, url_pattern: /search, method: GET, match_param: q, match_regex: '(?i)union\\s+select', action: block }",
        '  ip_access:',
        '    - { type: cidr, value: 198.51.100.0/24, action: deny }',
        '  schema: { document_file: alpha-openapi.yaml, strictness: strict }',
        '---',
        'apiVersion: aegis/v1',
        'kind: Webhook',
        'metadata: { name: alpha-alerts }',
        'spec: { url: "https://hooks.example.com/alpha", events: [vulnerability.created] }',
        '',
      ].join('\n'),
    );
    await applied(alpha, ALPHA);

    const beta = tempDir('aegis-beta-');
    mkdirSync(join(beta, 'sites'));
    writeFileSync(
      join(beta, 'sites/beta.yaml'),
      [
        'apiVersion: aegis/v1',
        'kind: ShieldSite',
        'metadata: { name: beta }',
        'spec:',
        '  domain: beta.example.com',
        '  origin_url: https://origin.beta.example.com',
        '  mode: block',
        '  rate_limits:',
        '    - { name: login, identity: ip, url_pattern: /login, method: POST, budget: 5, window_seconds: 60, action: block }',
        '---',
        'apiVersion: aegis/v1',
        'kind: ScanSchedule',
        'metadata: { name: beta-nightly }',
        'spec: { scan_type: dast, target: "https://beta.example.com", cron: "0 4 * * *" }',
        '',
      ].join('\n'),
    );
    await applied(beta, BETA);

    const betaSite = (await t.call('GET', '/api/v1/shield/sites?domain=beta.example.com')).body.data[0];
    const orphan = await t.call('POST', `/api/v1/shield/sites/${betaSite.id}/virtual-patches`, {
      body: { url_pattern: '/admin/*', method: 'ANY', match_param: 'cmd', match_regex: ';\\s*rm', action: 'block', labels: { 'aegis.dev/source': ALPHA, 'aegis.dev/name': 'beta/orphan' } },
    });
    expect(orphan.status, orphan.text).toBe(201);
    orphanId = orphan.body.id;

    const manual = await t.call('POST', '/api/v1/shield/sites', { body: { domain: 'manual.example.com', origin_url: 'https://origin.manual.example.com', mode: 'log' } });
    expect(manual.status, manual.text).toBe(201);
    const manualRule = await t.call('POST', `/api/v1/shield/sites/${manual.body.id}/ip-access`, { body: { type: 'ip', value: '192.0.2.9', action: 'deny' } });
    expect(manualRule.status, manualRule.text).toBe(201);
  });
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("writes only that source's objects and an aegis.yaml naming it, and warns about a rule it cannot express", async () => {
    const out = tempDir('aegis-dump-alpha-');
    const dumped = await runAegis(['dump', '--source', ALPHA, '--out', out], env);
    expect(dumped.code, dumped.stderr).toBe(0);
    expect(dumped.stderr).toContain(`VirtualPatch beta/orphan (${orphanId})`);
    expect(dumped.stderr.trim().split('\n')).toHaveLength(1);

    expect(readdirSync(out).sort()).toEqual(['aegis.yaml', 'alpha.openapi.yaml', 'alpha.yaml', 'webhooks.yaml']);
    expect(parse(readFileSync(join(out, 'aegis.yaml'), 'utf8'))).toEqual({ source: ALPHA });
    const site = parse(readFileSync(join(out, 'alpha.yaml'), 'utf8'));
    expect(site).toMatchObject({ kind: 'ShieldSite', metadata: { name: 'alpha' }, spec: { domain: 'alpha.example.com', labels: { team: 'alpha' } } });
    expect(site.spec.virtual_patches.map((p: { name: string }) => p.name)).toEqual(['search-sqli']);
    expect(site.spec.ip_access.map((r: { name: string }) => r.name)).toEqual(['cidr-198.51.100.0-24']);
    expect(site.spec.schema).toEqual({ document_file: 'alpha.openapi.yaml', strictness: 'strict' });
    expect(readFileSync(join(out, 'alpha.openapi.yaml'), 'utf8')).toBe(readFileSync('examples/gitops/openapi/api.yaml', 'utf8'));
    const webhooks = readFileSync(join(out, 'webhooks.yaml'), 'utf8');
    expect(webhooks).toContain('name: alpha-alerts');
    const everything = readdirSync(out).map((file) => readFileSync(join(out, file), 'utf8')).join('\n');
    for (const foreign of ['beta', 'manual.example.com', 'shop.example.com', '192.0.2.9', 'aegis.dev/']) expect(everything).not.toContain(foreign);

    // A plan of the dump, with no --source (and AEGIS_SOURCE empty): aegis.yaml names the source.
    const plain = await runAegis(['plan', out], env);
    expect(plain.code, plain.stdout + plain.stderr).toBe(0);
    expect(plain.stdout).toContain('No changes');
    const json = await runAegis(['plan', out, '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    const plan = JSON.parse(json.stdout) as { source: string; changes: unknown[]; conflicts: unknown[]; summary: { unchanged: number }; unmanaged: { id: string; description: string }[] };
    expect(plan.source).toBe(ALPHA);
    expect(plan.changes).toEqual([]);
    expect(plan.conflicts).toEqual([]);
    // The site, its patch, IP rule and schema, and the webhook.
    expect(plan.summary.unchanged).toBe(5);
    // The orphan is left alone (it is on a site another source manages), and said so.
    expect(plan.unmanaged.find((u) => u.id === orphanId)?.description).toContain('on a site it does not own');
    expect((await t.call('GET', `/api/v1/shield/sites/${(await t.call('GET', '/api/v1/shield/sites?domain=beta.example.com')).body.data[0].id}/virtual-patches/${orphanId}`)).status).toBe(200);
  });

  it('of another source leaves the first one out, and the orphan with it', async () => {
    const out = tempDir('aegis-dump-beta-');
    const dumped = await runAegis(['dump', '--source', BETA, '--out', out], env);
    expect(dumped.code, dumped.stderr).toBe(0);
    expect(dumped.stderr).toBe('');
    expect(readdirSync(out).sort()).toEqual(['aegis.yaml', 'beta.yaml', 'scan-schedules.yaml']);
    const site = parse(readFileSync(join(out, 'beta.yaml'), 'utf8'));
    expect(site.spec.rate_limits.map((r: { name: string }) => r.name)).toEqual(['login']);
    expect(site.spec.virtual_patches).toBeUndefined();
    const plan = await runAegis(['plan', out], env);
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
  });
});
