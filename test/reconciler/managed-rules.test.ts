// A ShieldSite's `path_case` and `managed_rules` through the reconciler, end to end against a
// running server: validate, plan, apply, a second plan that is empty, drift, `dump`. `managed_rules`
// has no default of its own: left out of config the live value is left alone; given, it is compared
// after its nested defaults are filled in.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTerraformJsonText } from '../../reconciler/config/terraform-json.ts';
import { loadConfigDir } from '../../reconciler/config/load.ts';
import type { Plan, PlannedChange } from '../../reconciler/plan/plan.ts';
import { weakeningWarnings } from '../../reconciler/plan/safety.ts';
import { runAegis } from '../support/cli.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let env: Record<string, string>;
const dirs: string[] = [];
const SOURCE = 'git.example.com/acme/managed-rules';

beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 1_000_000 });
  env = { AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey };
});
afterAll(async () => {
  await t.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'aegis-managed-'));
  dirs.push(dir);
  return dir;
}

interface JsonPlan {
  summary: Record<string, number>;
  changes: { action: string; kind: string; name: string; diff: { field: string; before: unknown; after: unknown }[]; fields: Record<string, unknown> | null }[];
  warnings: string[];
}

const site = (name: string, domain: string, extra = '') => `apiVersion: aegis/v1
kind: ShieldSite
metadata:
  name: ${name}
spec:
  domain: ${domain}
  origin_url: http://10.0.0.5:8080
  mode: block
${extra}`;

describe('path_case and managed_rules in config', () => {
  const repo = tempDir();
  const file = join(repo, 'sites.yaml');
  const plan = (...extra: string[]) => runAegis(['plan', repo, '--source', SOURCE, ...extra], env);
  const planJson = async (...extra: string[]) => {
    const result = await plan('--json', ...extra);
    expect([0, 2], result.stderr).toContain(result.code);
    return { code: result.code, plan: JSON.parse(result.stdout) as JsonPlan };
  };
  const apply = (...extra: string[]) => runAegis(['apply', repo, '--source', SOURCE, '--yes', ...extra], env);
  const live = async (domain: string) => (await t.call('GET', `/api/v1/shield/sites?domain=${domain}`)).body.data[0];

  const shop = (managed: string, pathCase = '') =>
    site('shop', 'shop.example.com', `${pathCase}  managed_rules:\n${managed}`);
  const levelTwo = `    paranoia_level: 2
    exclusions:
      - rules: [sqli.tautology]
        url_pattern: /cms/*
`;

  it('creates sites with managed_rules given and left out; the second plan is empty', async () => {
    writeFileSync(file, `${shop(levelTwo, '  path_case: sensitive\n')}---\n${site('blog', 'blog.example.com')}`);
    const validated = await runAegis(['validate', repo], env);
    expect(validated.code, validated.stdout + validated.stderr).toBe(0);
    const first = await planJson();
    expect(first.code).toBe(2);
    const created = Object.fromEntries(first.plan.changes.map((c) => [c.name, c.fields]));
    // What is sent: config with nested defaults filled in; nothing for managed_rules when it is left out.
    expect(created.shop).toMatchObject({ path_case: 'sensitive', managed_rules: { enabled: true, paranoia_level: 2, exclusions: [{ rules: ['sqli.tautology'], url_pattern: '/cms/*' }] } });
    expect(created.blog).toMatchObject({ path_case: 'insensitive' });
    expect(created.blog).not.toHaveProperty('managed_rules');

    const applied = await apply();
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect(await live('shop.example.com')).toMatchObject({ path_case: 'sensitive', managed_rules: { enabled: true, paranoia_level: 2, exclusions: [{ rules: ['sqli.tautology'], url_pattern: '/cms/*' }] } });
    expect((await live('blog.example.com')).managed_rules).toEqual({ enabled: true, paranoia_level: 1, exclusions: [] });
    const again = await plan();
    expect(again.code, again.stdout).toBe(0);
    expect(again.stdout).toContain('No changes');
  });

  it('leaves managed_rules alone when config omits it, whatever is live', async () => {
    const blog = await live('blog.example.com');
    const patched = await t.call('PATCH', `/api/v1/shield/sites/${blog.id}`, { body: { managed_rules: { enabled: false, paranoia_level: 3 } } });
    expect(patched.status).toBe(200);
    const { code, plan: p } = await planJson();
    expect(code).toBe(0);
    expect(p.changes).toEqual([]);
  });

  it('compares a partial managed_rules after filling its nested defaults: {enabled: true} equals the live default', async () => {
    writeFileSync(file, `${shop(levelTwo, '  path_case: sensitive\n')}---\n${site('blog', 'blog.example.com', '  managed_rules:\n    enabled: true\n')}`);
    const { code, plan: p } = await planJson();
    // Live is {enabled: false, paranoia_level: 3, exclusions: []}: config asks for the defaults of the rest.
    expect(code).toBe(2);
    expect(p.changes).toEqual([
      expect.objectContaining({
        action: 'update',
        name: 'blog',
        diff: [{ field: 'managed_rules', before: { enabled: false, paranoia_level: 3, exclusions: [] }, after: { enabled: true, paranoia_level: 1, exclusions: [] } }],
      }),
    ]);
    expect((await apply()).code).toBe(0);
    expect((await live('blog.example.com')).managed_rules).toEqual({ enabled: true, paranoia_level: 1, exclusions: [] });
    expect((await plan()).code).toBe(0);
  });

  it('updates paranoia level and exclusions in place, warns about weakening, and converges', async () => {
    const weaker = `    paranoia_level: 1
    exclusions:
      - rules: [sqli.tautology]
        url_pattern: /cms/*
      - rules: [xss.event_handler, traversal]
        parameter: html
`;
    writeFileSync(file, `${shop(weaker)}---\n${site('blog', 'blog.example.com', '  managed_rules:\n    enabled: true\n')}`);
    const { plan: p } = await planJson();
    expect(p.changes).toEqual([expect.objectContaining({ action: 'update', name: 'shop' })]);
    expect(p.changes[0]?.diff.map((d) => d.field).sort()).toEqual(['managed_rules', 'path_case']);
    // Back to insensitive paths is no weakening (rules match more); a lower level and a new exclusion are.
    expect(p.warnings).toEqual(['ShieldSite/shop: weakened (managed_rules.paranoia_level 2 → 1)', 'ShieldSite/shop: weakened (1 managed_rules exclusion(s) added)']);
    const refused = await apply('--deny-weakening');
    expect(refused.code).toBe(1);
    expect((await live('shop.example.com')).managed_rules.paranoia_level).toBe(2);

    const applied = await apply();
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect(await live('shop.example.com')).toMatchObject({
      path_case: 'insensitive',
      managed_rules: {
        enabled: true,
        paranoia_level: 1,
        exclusions: [
          { rules: ['sqli.tautology'], url_pattern: '/cms/*' },
          { rules: ['xss.event_handler', 'traversal'], parameter: 'html' },
        ],
      },
    });
    expect((await plan()).code).toBe(0);
  });

  it('reports drift in a managed_rules that config gives, and restores it', async () => {
    const shopSite = await live('shop.example.com');
    await t.call('PATCH', `/api/v1/shield/sites/${shopSite.id}`, { body: { managed_rules: { exclusions: [] } } });
    const { code, plan: p } = await planJson();
    expect(code).toBe(2);
    expect(p.changes).toEqual([expect.objectContaining({ action: 'update', name: 'shop', diff: [expect.objectContaining({ field: 'managed_rules' })] })]);
    expect((await apply()).code).toBe(0);
    expect((await live('shop.example.com')).managed_rules.exclusions).toHaveLength(2);
    expect((await plan()).code).toBe(0);
  });

  it('dump writes path_case and managed_rules, and planning the dump shows no changes', async () => {
    const out = tempDir();
    const dumped = await runAegis(['dump', '--out', out], env);
    expect(dumped.code, dumped.stderr).toBe(0);
    const text = readFileSync(join(out, 'shop.yaml'), 'utf8');
    expect(text).toContain('path_case: insensitive');
    expect(text).toContain('  managed_rules:\n    enabled: true\n    paranoia_level: 1\n    exclusions:\n');
    expect(text).toContain('parameter: html');
    expect(text).not.toContain('null');
    const { objects } = await loadConfigDir(out);
    expect(objects.find((o) => o.name === 'shop')?.spec.managed_rules).toEqual((await live('shop.example.com')).managed_rules);
    const roundTrip = await runAegis(['plan', out, '--source', SOURCE], env);
    expect(roundTrip.code, roundTrip.stdout + roundTrip.stderr).toBe(0);
  });

  it('validate reports an exclusion naming no managed rule at its place in the file, and bad values by their path', async () => {
    const broken = tempDir();
    writeFileSync(
      join(broken, 'site.yaml'),
      site(
        'typo',
        'typo.example.com',
        `  path_case: upper
  managed_rules:
    paranoia_level: 9
    exclusions:
      - rules: [sqli, sqli.nope]
`,
      ),
    );
    const schemaErrors = await runAegis(['validate', broken], env);
    expect(schemaErrors.code).toBe(1);
    expect(schemaErrors.stdout + schemaErrors.stderr).toContain('site.yaml:9:14 ShieldSite/typo: spec.path_case: must be one of insensitive, sensitive');
    expect(schemaErrors.stdout + schemaErrors.stderr).toContain('site.yaml:11:21 ShieldSite/typo: spec.managed_rules.paranoia_level: must be <= 4');
    writeFileSync(join(broken, 'site.yaml'), readFileSync(join(broken, 'site.yaml'), 'utf8').replace('upper', 'sensitive').replace('paranoia_level: 9', 'paranoia_level: 4'));
    const unknownRule = await runAegis(['validate', broken], env);
    expect(unknownRule.code).toBe(1);
    expect(unknownRule.stdout + unknownRule.stderr).toContain(
      'site.yaml:13:23 ShieldSite/typo: spec.managed_rules.exclusions[0].rules[1]: "sqli.nope" is not a managed rule id or category (GET /api/v1/shield/managed-rules)',
    );
  });
});

describe('weakening', () => {
  const change = (diff: PlannedChange['diff']): Plan => ({
    source: 's',
    changes: [{ action: 'update', kind: 'ShieldSite', name: 'shop', id: 'site_1', diff }],
    unchanged: 0,
    unmanaged: [],
    conflicts: [],
    incomplete: [],
    ownedCount: 1,
    reads: 0,
    checksum: '',
  });
  const rules = (enabled: boolean, paranoia_level: number, exclusions: unknown[] = []) => ({ enabled, paranoia_level, exclusions });

  it('calls out managed rules turned off or lowered, exclusions added, and case-sensitive paths', () => {
    expect(weakeningWarnings(change([{ field: 'managed_rules', before: rules(true, 2), after: rules(false, 2) }]))).toEqual(['ShieldSite/shop: weakened (managed_rules turned off)']);
    expect(weakeningWarnings(change([{ field: 'path_case', before: 'insensitive', after: 'sensitive' }]))).toEqual(['ShieldSite/shop: weakened (path_case insensitive → sensitive)']);
    const exclusion = { rules: ['xss'], parameter: 'html' };
    // Removing an exclusion, raising the level, turning them on: stronger, no warning.
    expect(weakeningWarnings(change([{ field: 'managed_rules', before: rules(false, 1, [exclusion]), after: rules(true, 3) }]))).toEqual([]);
    expect(weakeningWarnings(change([{ field: 'path_case', before: 'sensitive', after: 'insensitive' }]))).toEqual([]);
    // The same exclusion with its keys in another order is not new.
    expect(weakeningWarnings(change([{ field: 'managed_rules', before: rules(true, 2, [exclusion]), after: rules(true, 2, [{ parameter: 'html', rules: ['xss'] }, { rules: ['sqli'] }]) }]))).toEqual([
      'ShieldSite/shop: weakened (1 managed_rules exclusion(s) added)',
    ]);
  });
});

describe('managed_rules in Terraform JSON', () => {
  it('loads like its YAML twin: null nested attributes are unset, nested defaults filled in', async () => {
    const text = JSON.stringify({
      resource: {
        aegis_shield_site: {
          shop: {
            domain: 'shop.example.com',
            origin_url: 'http://10.0.0.5:8080',
            mode: 'block',
            path_case: null,
            managed_rules: { enabled: null, paranoia_level: 2, exclusions: [{ rules: ['sqli.tautology'], url_pattern: '/cms/*', parameter: null }] },
          },
        },
      },
    });
    const { objects, problems } = loadTerraformJsonText(text, 'cdk.tf.json');
    expect(problems).toEqual([]);
    const yaml = tempDir();
    writeFileSync(join(yaml, 'shop.yaml'), site('shop', 'shop.example.com', `  managed_rules:\n${'    paranoia_level: 2\n    exclusions:\n      - rules: [sqli.tautology]\n        url_pattern: /cms/*\n'}`));
    const fromYaml = (await loadConfigDir(yaml)).objects;
    expect(objects.map((o) => o.spec)).toEqual(fromYaml.map((o) => o.spec));
    expect(objects[0]?.spec).toMatchObject({ path_case: 'insensitive', managed_rules: { enabled: true, paranoia_level: 2, exclusions: [{ rules: ['sqli.tautology'], url_pattern: '/cms/*' }] } });
  });
});
