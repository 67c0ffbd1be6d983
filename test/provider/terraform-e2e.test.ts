// The Aegis provider driven by the real terraform binary against a running server:
// examples/terraform applied through the API, then drift, in-place updates, replacements,
// import, a config error and destroy — as a Terraform user sees them. The shop site carries
// `path_case` and `managed_rules` (a nested attribute with a nested list of exclusions).
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { applyClean, terraformWorkspace, type TerraformWorkspace } from '../support/terraform.ts';

let t: TestServer;
let tf: TerraformWorkspace;
const terraform = (...args: string[]) => tf.run(...args);
const work = () => tf.dir;
const mainTf = () => join(work(), 'main.tf');
const edit = (from: string, to: string) => writeFileSync(mainTf(), readFileSync(mainTf(), 'utf8').replace(from, to));

beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 1_000_000 });
  tf = terraformWorkspace('examples/terraform', t.url, t.adminKey);
}, 120_000);
afterAll(async () => {
  await t?.close();
  tf?.remove();
});

describe('terraform with the Aegis provider', () => {
  it('init and apply create every object through the API; an immediate plan has no changes', async () => {
    await applyClean(tf, 8);
  }, 120_000);

  it('the objects exist in the API', async () => {
    const sites = (await t.call('GET', '/api/v1/shield/sites')).body.data;
    expect(sites.map((s: { domain: string }) => s.domain)).toEqual(['shop.example.com']);
    const siteId = sites[0].id as string;
    expect((await t.call('GET', `/api/v1/shield/sites/${siteId}/ip-access`)).body.data).toHaveLength(2);
    expect((await t.call('GET', `/api/v1/shield/sites/${siteId}/schema`)).body.operations).toHaveLength(2);
    expect((await t.call('GET', '/api/v1/webhooks')).body.data).toHaveLength(1);
    // Nested defaults filled in (enabled), null sub-attributes (parameter) never sent.
    expect(sites[0]).toMatchObject({ path_case: 'insensitive', managed_rules: { enabled: true, paranoia_level: 2, exclusions: [{ rules: ['sqli.tautology'], url_pattern: '/cms/*' }] } });
    expect(sites[0].managed_rules.exclusions[0]).not.toHaveProperty('parameter');
  });

  it("changing a site's mode updates in place; changing an immutable field replaces", async () => {
    edit('mode       = "block"', 'mode       = "challenge"');
    const update = await terraform('plan', '-detailed-exitcode');
    expect(update.status).toBe(2);
    expect(update.stdout).toMatch(/aegis_shield_site\.shop will be updated in-place/);
    expect(update.stdout).toMatch(/Plan: 0 to add, 1 to change, 0 to destroy/);
    edit('value   = "AS64511"', 'value   = "AS64512"');
    const replace = await terraform('apply', '-auto-approve');
    expect(replace.status, replace.stderr).toBe(0);
    expect(replace.stdout).toMatch(/Resources: 1 added, 1 changed, 1 destroyed/);
    expect((await terraform('plan', '-detailed-exitcode')).status).toBe(0);
  }, 120_000);

  it('an object deleted through the API is planned for creation again', async () => {
    const site = (await t.call('GET', '/api/v1/shield/sites')).body.data[0];
    const rules = (await t.call('GET', `/api/v1/shield/sites/${site.id}/rate-limits`)).body.data;
    expect((await t.call('DELETE', `/api/v1/shield/sites/${site.id}/rate-limits/${rules[0].id}`)).status).toBe(204);
    const plan = await terraform('plan', '-detailed-exitcode');
    expect(plan.status).toBe(2);
    expect(plan.stdout).toMatch(/aegis_rate_limit_rule\.login will be created/);
    expect((await terraform('apply', '-auto-approve')).status).toBe(0);
  }, 120_000);

  it('import of an existing rule, followed by plan, shows no changes', async () => {
    const site = (await t.call('GET', '/api/v1/shield/sites')).body.data[0];
    const rule = await t.call('POST', `/api/v1/shield/sites/${site.id}/ip-access`, { body: { type: 'ip', value: '203.0.113.9', action: 'deny', note: 'imported' } });
    writeFileSync(
      join(work(), 'imported.tf'),
      `resource "aegis_ip_access_rule" "imported" {\n  site_id = aegis_shield_site.shop.id\n  type    = "ip"\n  value   = "203.0.113.9"\n  action  = "deny"\n  note    = "imported"\n}\n`,
    );
    const imported = await terraform('import', 'aegis_ip_access_rule.imported', `${site.id}/${rule.body.id}`);
    expect(imported.status, imported.stderr + imported.stdout).toBe(0);
    const plan = await terraform('plan', '-detailed-exitcode');
    expect(plan.status, plan.stdout).toBe(0);
  }, 120_000);

  it('managed_rules changes in place: paranoia level and exclusions, nested nulls left out', async () => {
    edit(
      `    paranoia_level = 2
    exclusions = [
      { rules = ["sqli.tautology"], url_pattern = "/cms/*" },
    ]`,
      `    paranoia_level = 3
    exclusions = [
      { rules = ["sqli.tautology", "sqli.union_select"], url_pattern = "/cms/*" },
      { rules = ["xss"], parameter = "comment" },
    ]`,
    );
    const plan = await terraform('plan', '-detailed-exitcode');
    expect(plan.status, plan.stdout + plan.stderr).toBe(2);
    expect(plan.stdout).toMatch(/aegis_shield_site\.shop will be updated in-place/);
    expect(plan.stdout).toMatch(/paranoia_level = 2 -> 3/);
    expect(plan.stdout).toMatch(/Plan: 0 to add, 1 to change, 0 to destroy/);
    const apply = await terraform('apply', '-auto-approve');
    expect(apply.status, apply.stdout + apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(/Resources: 0 added, 1 changed, 0 destroyed/);
    const site = (await t.call('GET', '/api/v1/shield/sites?domain=shop.example.com')).body.data[0];
    expect(site.managed_rules).toEqual({
      enabled: true,
      paranoia_level: 3,
      exclusions: [
        { rules: ['sqli.tautology', 'sqli.union_select'], url_pattern: '/cms/*' },
        { rules: ['xss'], parameter: 'comment' },
      ],
    });
    const again = await terraform('plan', '-detailed-exitcode');
    expect(again.status, again.stdout).toBe(0);

    // Turning them off and on again: `enabled` written, then left out (back to its default).
    edit('    paranoia_level = 3\n', '    enabled        = false\n    paranoia_level = 3\n');
    expect((await terraform('apply', '-auto-approve')).status).toBe(0);
    expect((await t.call('GET', `/api/v1/shield/sites/${site.id}`)).body.managed_rules.enabled).toBe(false);
    edit('    enabled        = false\n', '');
    const back = await terraform('apply', '-auto-approve');
    expect(back.status, back.stdout + back.stderr).toBe(0);
    expect(back.stdout).toMatch(/Resources: 0 added, 1 changed, 0 destroyed/);
    expect((await t.call('GET', `/api/v1/shield/sites/${site.id}`)).body.managed_rules.enabled).toBe(true);
    expect((await terraform('plan', '-detailed-exitcode')).status).toBe(0);
  }, 180_000);

  it('tls round-trips: nested defaults filled, HSTS turned off (null sent) and on again, each second plan empty; the computed fields never show as changes', async () => {
    const site = (await t.call('GET', '/api/v1/shield/sites?domain=shop.example.com')).body.data[0];
    expect(site.tls).toEqual({ mode: 'acme', redirect_http: true, hsts: { max_age: 31536000, include_subdomains: false, preload: false }, min_version: '1.2' });
    edit('    hsts          = { max_age = 31536000 }\n', '    min_version   = "1.3"\n');
    const plan = await terraform('plan', '-detailed-exitcode');
    expect(plan.status, plan.stdout + plan.stderr).toBe(2);
    expect(plan.stdout).toMatch(/aegis_shield_site\.shop will be updated in-place/);
    expect(plan.stdout).toMatch(/min_version\s+= "1\.2" -> "1\.3"/);
    const apply = await terraform('apply', '-auto-approve');
    expect(apply.status, apply.stdout + apply.stderr).toBe(0);
    expect((await t.call('GET', `/api/v1/shield/sites/${site.id}`)).body.tls).toEqual({ mode: 'acme', redirect_http: true, hsts: null, min_version: '1.3' });
    expect((await terraform('plan', '-detailed-exitcode')).status).toBe(0);

    edit('    min_version   = "1.3"\n', '    min_version   = "1.3"\n    hsts          = { max_age = 63072000, include_subdomains = true, preload = true }\n');
    const on = await terraform('apply', '-auto-approve');
    expect(on.status, on.stdout + on.stderr).toBe(0);
    expect((await t.call('GET', `/api/v1/shield/sites/${site.id}`)).body.tls.hsts).toEqual({ max_age: 63072000, include_subdomains: true, preload: true });
    const again = await terraform('plan', '-detailed-exitcode');
    expect(again.status, again.stdout).toBe(0);
    // Put back as the example has it, for the tests that follow.
    edit('    min_version   = "1.3"\n    hsts          = { max_age = 63072000, include_subdomains = true, preload = true }\n', '    hsts          = { max_age = 31536000 }\n');
    expect((await terraform('apply', '-auto-approve')).status).toBe(0);
    expect((await terraform('plan', '-detailed-exitcode')).status).toBe(0);
  }, 180_000);

  it('drift in path_case and managed_rules made through the API is detected and undone', async () => {
    const site = (await t.call('GET', '/api/v1/shield/sites?domain=shop.example.com')).body.data[0];
    const patched = await t.call('PATCH', `/api/v1/shield/sites/${site.id}`, { body: { path_case: 'sensitive', managed_rules: { paranoia_level: 1, exclusions: [] } } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const plan = await terraform('plan', '-detailed-exitcode');
    expect(plan.status, plan.stdout + plan.stderr).toBe(2);
    expect(plan.stdout).toMatch(/path_case\s+= "sensitive" -> "insensitive"/);
    expect(plan.stdout).toMatch(/paranoia_level = 1 -> 3/);
    expect(plan.stdout).toMatch(/Plan: 0 to add, 1 to change, 0 to destroy/);
    expect((await terraform('apply', '-auto-approve')).status).toBe(0);
    expect((await t.call('GET', `/api/v1/shield/sites/${site.id}`)).body).toMatchObject({ path_case: 'insensitive', managed_rules: { paranoia_level: 3, exclusions: [{ url_pattern: '/cms/*' }, { parameter: 'comment' }] } });
    expect((await terraform('plan', '-detailed-exitcode')).status).toBe(0);
  }, 120_000);

  it('a site without managed_rules in HCL gets the API default, plans clean, and keeps changes made elsewhere', async () => {
    writeFileSync(
      join(work(), 'plain.tf'),
      `resource "aegis_shield_site" "plain" {\n  domain     = "plain.example.com"\n  origin_url = "https://origin.plain.example.com"\n  mode       = "log"\n}\n`,
    );
    const plan = await terraform('plan', '-detailed-exitcode');
    expect(plan.status, plan.stdout + plan.stderr).toBe(2);
    // Terraform aligns the `=` of a block's attributes to its longest name, so the spacing varies.
    expect(plan.stdout).toMatch(/managed_rules\s+= \(known after apply\)/);
    expect(plan.stdout).toMatch(/path_case\s+= "insensitive"/);
    const apply = await terraform('apply', '-auto-approve');
    expect(apply.status, apply.stdout + apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(/Resources: 1 added, 0 changed, 0 destroyed/);
    const site = (await t.call('GET', '/api/v1/shield/sites?domain=plain.example.com')).body.data[0];
    expect(site).toMatchObject({ path_case: 'insensitive', managed_rules: { enabled: true, paranoia_level: 1, exclusions: [] } });
    const state = await terraform('state', 'show', 'aegis_shield_site.plain');
    expect(state.stdout).toMatch(/paranoia_level = 1/);
    expect((await terraform('plan', '-detailed-exitcode')).status).toBe(0);

    // Left out of config: a change made through the API is not undone (and shown as no change).
    expect((await t.call('PATCH', `/api/v1/shield/sites/${site.id}`, { body: { managed_rules: { paranoia_level: 4 } } })).status).toBe(200);
    const kept = await terraform('plan', '-detailed-exitcode');
    expect(kept.status, kept.stdout).toBe(0);
    // …while other fields of the same site still converge, without touching managed_rules.
    writeFileSync(join(work(), 'plain.tf'), readFileSync(join(work(), 'plain.tf'), 'utf8').replace('"log"', '"block"'));
    const update = await terraform('apply', '-auto-approve');
    expect(update.status, update.stdout + update.stderr).toBe(0);
    expect((await t.call('GET', `/api/v1/shield/sites/${site.id}`)).body).toMatchObject({ mode: 'block', managed_rules: { paranoia_level: 4 } });
    expect((await terraform('plan', '-detailed-exitcode')).status).toBe(0);
  }, 180_000);

  it('import of a site with path_case and managed_rules, followed by plan, shows no changes', async () => {
    const created = await t.call('POST', '/api/v1/shield/sites', {
      body: { domain: 'legacy.example.com', origin_url: 'https://origin.legacy.example.com', mode: 'block', path_case: 'sensitive', managed_rules: { paranoia_level: 2, exclusions: [{ rules: ['traversal'], url_pattern: '/files/*', parameter: 'path' }] } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    writeFileSync(
      join(work(), 'legacy.tf'),
      `resource "aegis_shield_site" "legacy" {
  domain     = "legacy.example.com"
  origin_url = "https://origin.legacy.example.com"
  mode       = "block"
  path_case  = "sensitive"
  managed_rules = {
    paranoia_level = 2
    exclusions     = [{ rules = ["traversal"], url_pattern = "/files/*", parameter = "path" }]
  }
}
`,
    );
    const imported = await terraform('import', 'aegis_shield_site.legacy', created.body.id);
    expect(imported.status, imported.stderr + imported.stdout).toBe(0);
    const plan = await terraform('plan', '-detailed-exitcode');
    expect(plan.status, plan.stdout + plan.stderr).toBe(0);
  }, 120_000);

  it('a config error fails plan with a diagnostic on the attribute, and nothing is written', async () => {
    const before = (await t.call('GET', '/api/v1/audit-log?limit=200')).body.data.length;
    writeFileSync(
      join(work(), 'bad.tf'),
      `resource "aegis_virtual_patch" "bad" {\n  site_id     = aegis_shield_site.shop.id\n  url_pattern = "/x"\n  method      = "GET"\n  match_param = "q"\n  match_regex = "(a)\\\\1"\n}\n`,
    );
    const plan = await terraform('plan');
    expect(plan.status).toBe(1);
    expect(plan.stderr).toMatch(/match_regex/);
    expect(plan.stderr).toMatch(/RE2/);
    rmSync(join(work(), 'bad.tf'));
    // An exclusion naming no managed rule is caught offline too, aimed inside the nested attribute.
    writeFileSync(
      join(work(), 'bad.tf'),
      `resource "aegis_shield_site" "bad" {\n  domain        = "bad.example.com"\n  origin_url    = "https://origin.bad.example.com"\n  mode          = "block"\n  managed_rules = { exclusions = [{ rules = ["sqli.nope"] }] }\n}\n`,
    );
    const nested = await terraform('plan');
    expect(nested.status).toBe(1);
    expect(nested.stderr).toMatch(/"sqli\.nope" is not a managed rule id or category/);
    expect(nested.stderr).toMatch(/managed_rules/);
    rmSync(join(work(), 'bad.tf'));
    expect((await t.call('GET', '/api/v1/audit-log?limit=200')).body.data.length).toBe(before);
  }, 120_000);

  it('destroy removes everything', async () => {
    const destroy = await terraform('destroy', '-auto-approve');
    expect(destroy.status, destroy.stderr).toBe(0);
    expect((await t.call('GET', '/api/v1/shield/sites')).body.data).toEqual([]);
    expect((await t.call('GET', '/api/v1/scan-schedules')).body.data).toEqual([]);
    expect((await t.call('GET', '/api/v1/webhooks')).body.data).toEqual([]);
  }, 120_000);
});
