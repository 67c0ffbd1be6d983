// A ShieldSite's `tls` through the reconciler, end to end against a running server: plan, apply, a
// second plan that is empty, config that leaves tls out (left alone), drift, weakening warnings,
// and `dump` (which plans to nothing). Like managed_rules, `tls` has no default of its own (the
// server picks the mode); given, it is compared after its nested defaults are filled in.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigDir } from '../../reconciler/config/load.ts';
import { loadTerraformJsonText } from '../../reconciler/config/terraform-json.ts';
import type { Plan, PlannedChange } from '../../reconciler/plan/plan.ts';
import { weakeningWarnings } from '../../reconciler/plan/safety.ts';
import { runAegis } from '../support/cli.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let env: Record<string, string>;
const dirs: string[] = [];
const SOURCE = 'git.example.com/acme/site-tls';

beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 1_000_000, shieldTlsPort: 8443 });
  env = { AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey };
});
afterAll(async () => {
  await t.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'aegis-tls-'));
  dirs.push(dir);
  return dir;
}

interface JsonPlan {
  changes: { action: string; kind: string; name: string; diff: { field: string; before: unknown; after: unknown }[]; fields: Record<string, unknown> | null }[];
  warnings: string[];
}

const site = (name: string, domain: string, tls = '') => `apiVersion: aegis/v1
kind: ShieldSite
metadata:
  name: ${name}
spec:
  domain: ${domain}
  origin_url: http://10.0.0.5:8080
  mode: block
${tls ? `  tls:\n${tls}` : ''}`;

describe('tls in config', () => {
  const repo = tempDir();
  const file = join(repo, 'sites.yaml');
  const plan = (...extra: string[]) => runAegis(['plan', repo, '--source', SOURCE, ...extra], env);
  const planJson = async () => {
    const result = await plan('--json');
    expect([0, 2], result.stderr).toContain(result.code);
    return { code: result.code, plan: JSON.parse(result.stdout) as JsonPlan };
  };
  const apply = (...extra: string[]) => runAegis(['apply', repo, '--source', SOURCE, '--yes', ...extra], env);
  const live = async (domain: string) => (await t.call('GET', `/api/v1/shield/sites?domain=${domain}`)).body.data[0];
  const strict = `    mode: acme
    redirect_http: true
    min_version: "1.3"
    hsts:
      max_age: 63072000
      include_subdomains: true
      preload: true
`;

  it('creates sites with tls given and left out; the second plan is empty', async () => {
    writeFileSync(file, `${site('shop', 'shop.tls.example.com', strict)}---\n${site('blog', 'blog.tls.example.com')}`);
    const validated = await runAegis(['validate', repo], env);
    expect(validated.code, validated.stdout + validated.stderr).toBe(0);
    const first = await planJson();
    const created = Object.fromEntries(first.plan.changes.map((c) => [c.name, c.fields]));
    expect(created.shop?.tls).toEqual({ mode: 'acme', redirect_http: true, min_version: '1.3', hsts: { max_age: 63072000, include_subdomains: true, preload: true } });
    expect(created.blog).not.toHaveProperty('tls');
    const applied = await apply();
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect((await live('shop.tls.example.com')).tls).toEqual(created.shop?.tls);
    // Left out: the server's default for a new site (it has a TLS port).
    expect((await live('blog.tls.example.com')).tls).toEqual({ mode: 'acme', redirect_http: false, hsts: null, min_version: '1.2' });
    const again = await plan();
    expect(again.code, again.stdout).toBe(0);
    expect(again.stdout).toContain('No changes');
  });

  it('leaves tls alone when config omits it, and compares a partial tls after filling its defaults', async () => {
    const blog = await live('blog.tls.example.com');
    expect((await t.call('PATCH', `/api/v1/shield/sites/${blog.id}`, { body: { tls: { mode: 'off', redirect_http: true } } })).status).toBe(200);
    expect((await planJson()).code).toBe(0);
    writeFileSync(file, `${site('shop', 'shop.tls.example.com', strict)}---\n${site('blog', 'blog.tls.example.com', '    mode: custom\n')}`);
    const { code, plan: p } = await planJson();
    expect(code).toBe(2);
    expect(p.changes).toEqual([
      expect.objectContaining({
        action: 'update',
        name: 'blog',
        diff: [{ field: 'tls', before: { mode: 'off', redirect_http: true, hsts: null, min_version: '1.2' }, after: { mode: 'custom', redirect_http: false, hsts: null, min_version: '1.2' } }],
      }),
    ]);
    // redirect_http going back to its default false is a weakening.
    expect(p.warnings).toEqual(['ShieldSite/blog: weakened (tls.redirect_http turned off)']);
    expect((await apply()).code).toBe(0);
    expect((await live('blog.tls.example.com')).tls).toEqual({ mode: 'custom', redirect_http: false, hsts: null, min_version: '1.2' });
    expect((await plan()).code).toBe(0);
  });

  it('drops HSTS in place (hsts: null reaches the API), warns, and converges', async () => {
    writeFileSync(file, `${site('shop', 'shop.tls.example.com', '    mode: acme\n    redirect_http: true\n    min_version: "1.3"\n')}---\n${site('blog', 'blog.tls.example.com', '    mode: custom\n')}`);
    const { plan: p } = await planJson();
    expect(p.changes).toEqual([expect.objectContaining({ action: 'update', name: 'shop' })]);
    expect(p.warnings).toEqual(['ShieldSite/shop: weakened (tls.hsts removed)']);
    expect((await apply('--deny-weakening')).code).toBe(1);
    expect((await live('shop.tls.example.com')).tls.hsts).not.toBeNull();
    expect((await apply()).code).toBe(0);
    expect((await live('shop.tls.example.com')).tls).toEqual({ mode: 'acme', redirect_http: true, hsts: null, min_version: '1.3' });
    expect((await plan()).code).toBe(0);
  });

  it('reports drift in a tls that config gives, and restores it', async () => {
    const shop = await live('shop.tls.example.com');
    await t.call('PATCH', `/api/v1/shield/sites/${shop.id}`, { body: { tls: { min_version: '1.2' } } });
    const { code, plan: p } = await planJson();
    expect(code).toBe(2);
    expect(p.changes).toEqual([expect.objectContaining({ action: 'update', name: 'shop', diff: [expect.objectContaining({ field: 'tls' })] })]);
    expect((await apply()).code).toBe(0);
    expect((await live('shop.tls.example.com')).tls.min_version).toBe('1.3');
    expect((await plan()).code).toBe(0);
  });

  it('dump writes tls without nulls, and planning the dump shows no changes', async () => {
    const out = tempDir();
    const dumped = await runAegis(['dump', '--out', out], env);
    expect(dumped.code, dumped.stderr).toBe(0);
    const text = readFileSync(join(out, 'shop.yaml'), 'utf8');
    expect(text).toContain('  tls:\n    mode: acme\n    redirect_http: true\n');
    expect(text).not.toContain('null');
    expect(text).not.toMatch(/status|domain_verification|certificate/);
    const { objects } = await loadConfigDir(out);
    expect(objects.find((o) => o.spec.domain === 'shop.tls.example.com')?.spec.tls).toEqual((await live('shop.tls.example.com')).tls);
    const roundTrip = await runAegis(['plan', out, '--source', SOURCE], env);
    expect(roundTrip.code, roundTrip.stdout + roundTrip.stderr).toBe(0);
  });

  it('validate reports bad tls values by their path; the API refuses HSTS preload without a year at apply', async () => {
    const broken = tempDir();
    writeFileSync(join(broken, 'site.yaml'), site('bad', 'bad.tls.example.com', '    mode: letsencrypt\n'));
    const invalid = await runAegis(['validate', broken], env);
    expect(invalid.code).toBe(1);
    expect(invalid.stdout + invalid.stderr).toContain('ShieldSite/bad: spec.tls.mode: must be one of acme, custom, off');
    writeFileSync(join(broken, 'site.yaml'), site('bad', 'bad.tls.example.com', '    mode: acme\n    hsts:\n      preload: true\n'));
    const refused = await runAegis(['apply', broken, '--source', 'git.example.com/acme/bad', '--yes'], env);
    expect(refused.code).toBe(1);
    expect(refused.stdout + refused.stderr).toContain('tls.hsts.preload');
  });
});

describe('tls weakening', () => {
  const change = (before: unknown, after: unknown): Plan => ({
    source: 's',
    changes: [{ action: 'update', kind: 'ShieldSite', name: 'shop', id: 'site_1', diff: [{ field: 'tls', before, after }] as PlannedChange['diff'] }],
    unchanged: 0,
    unmanaged: [],
    conflicts: [],
    incomplete: [],
    ownedCount: 1,
    reads: 0,
    checksum: '',
  });
  const tls = (mode: string, redirect_http: boolean, max_age: number | null, min_version: string) => ({ mode, redirect_http, hsts: max_age === null ? null : { max_age, include_subdomains: false, preload: false }, min_version });

  it('calls out TLS turned off, the redirect or HSTS dropped, a shorter HSTS and TLS 1.2 let back in; the reverse is no warning', () => {
    expect(weakeningWarnings(change(tls('acme', true, 100, '1.3'), tls('off', true, 100, '1.3')))).toEqual(['ShieldSite/shop: weakened (tls turned off)']);
    expect(weakeningWarnings(change(tls('acme', true, 100, '1.3'), tls('custom', false, 50, '1.2')))).toEqual([
      'ShieldSite/shop: weakened (tls.redirect_http turned off)',
      'ShieldSite/shop: weakened (tls.hsts.max_age 100 → 50)',
      'ShieldSite/shop: weakened (tls.min_version 1.3 → 1.2)',
    ]);
    expect(weakeningWarnings(change(tls('acme', false, 100, '1.2'), tls('acme', false, null, '1.2')))).toEqual(['ShieldSite/shop: weakened (tls.hsts removed)']);
    expect(weakeningWarnings(change(tls('off', false, null, '1.2'), tls('acme', true, 600, '1.3')))).toEqual([]);
  });
});

describe('tls in Terraform JSON', () => {
  it('loads like its YAML twin: null nested attributes are unset, nested defaults filled in', async () => {
    const text = JSON.stringify({
      resource: { aegis_shield_site: { shop: { domain: 'shop.example.com', origin_url: 'http://10.0.0.5:8080', mode: 'block', tls: { mode: 'acme', redirect_http: null, hsts: { max_age: 600, include_subdomains: null, preload: null }, min_version: null } } } },
    });
    const { objects, problems } = loadTerraformJsonText(text, 'cdk.tf.json');
    expect(problems).toEqual([]);
    expect(objects[0]?.spec.tls).toEqual({ mode: 'acme', redirect_http: false, hsts: { max_age: 600, include_subdomains: false, preload: false }, min_version: '1.2' });
  });
});
