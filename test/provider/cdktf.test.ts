// CDKTF: the bindings generated from the provider's own schema (sdks/cdktf/gen, the sources of the
// @aegis/cdktf-provider package; test/provider/cdktf-package.test.ts installs it outside the
// repository) drive examples/cdktf, which imports the package; its synthesized cdk.tf.json is
// accepted by `aegis plan --terraform-json` and by `terraform init && terraform apply`, against a
// running server. Synthesis runs the app the way `cdktf synth` does (the CLI only spawns it with
// CDKTF_OUTDIR set), so the CDKTF CLI is not needed.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STACK } from '../../examples/cdktf/main.ts'; // also brings the example under `npm run typecheck`
import { GEN_DIR, generateBindings, providerSchema, SCHEMA_FILE } from '../../provider/cdktf/generate.ts';
import { installProvider } from '../../provider/install/install.ts';
import { runAegis } from '../support/cli.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

let t: TestServer;
let dir = '';
let env: NodeJS.ProcessEnv = {};
let stackJson = '';

// Asynchronous on purpose: the API server runs in this process.
const run = (command: string, args: string[], cwd: string, extraEnv: NodeJS.ProcessEnv = env): Promise<Run> =>
  new Promise((done) => {
    execFile(command, args, { cwd, env: extraEnv, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      done({ status: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
const terraform = (...args: string[]) => run('terraform', [...args, '-no-color'], dirname(stackJson));

beforeAll(async () => {
  const version = spawnSync('terraform', ['version'], { encoding: 'utf8', env: { ...process.env, CHECKPOINT_DISABLE: '1' } });
  if (version.error || version.status !== 0) throw new Error('These tests need the `terraform` binary on PATH; it was not found or did not run.');
  t = await startTestServer({ rateLimitPerMinute: 1_000_000 });
  dir = mkdtempSync(join(tmpdir(), 'aegis-cdktf-'));
  const installed = installProvider({ dir: join(dir, 'mirror') });
  env = { ...process.env, CHECKPOINT_DISABLE: '1', TF_IN_AUTOMATION: '1', TF_CLI_CONFIG_FILE: installed.configFile, AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey };
  delete env.TF_PLUGIN_CACHE_DIR;
  delete env.TF_LOG;
}, 120_000);
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('CDKTF bindings and examples/cdktf', () => {
  it('the committed schema and bindings are what `npm run provider:cdktf` generates today', async () => {
    const schema = providerSchema();
    expect(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')), 'provider schema changed: run `npm run provider:cdktf`').toEqual(schema);
    const out = join(dir, 'gen');
    const files = await generateBindings(schema, out);
    expect(files).toEqual(readdirSync(GEN_DIR, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(GEN_DIR.length + 1)).sort());
    for (const file of files) expect(readFileSync(join(out, file), 'utf8'), `${file} is stale: run \`npm run provider:cdktf\``).toBe(readFileSync(join(GEN_DIR, file), 'utf8'));
    expect(files).toContain('shield-site/index.ts');
  }, 60_000);

  it('synthesizes the example into Terraform JSON (what `cdktf synth` does)', async () => {
    const outdir = join(dir, 'cdktf.out');
    const synth = await run(process.execPath, [resolve('bin/run-ts.mjs'), 'main.ts'], resolve('examples/cdktf'), { ...env, CDKTF_OUTDIR: outdir });
    expect(synth.status, synth.stderr).toBe(0);
    stackJson = join(outdir, 'stacks', STACK, 'cdk.tf.json');
    expect(synth.stdout.trim()).toBe(stackJson);
    const json = JSON.parse(readFileSync(stackJson, 'utf8'));
    expect(json.terraform.required_providers.aegis.source).toBe('registry.terraform.io/aegis/aegis');
    expect(Object.keys(json.resource).sort()).toEqual(['aegis_ip_access_rule', 'aegis_rate_limit_rule', 'aegis_scan_schedule', 'aegis_shield_site', 'aegis_virtual_patch', 'aegis_webhook']);
    expect(json.resource.aegis_virtual_patch.search_sqli).toMatchObject({ site_id: '${aegis_shield_site.shop.id}', url_pattern: '/search', expires_in_days: 30 });
    expect(json.resource.aegis_shield_site.shop).toMatchObject({ domain: 'shop.example.com', origin_url: 'https://origin.shop.example.com', path_case: 'insensitive' });
    // A nested attribute synthesizes as a JSON object with only the sub-attributes that were set.
    expect(json.resource.aegis_shield_site.shop.managed_rules).toEqual({ paranoia_level: 2, exclusions: [{ rules: ['sqli.tautology'], url_pattern: '/cms/*' }] });
  }, 60_000);

  it('`aegis plan --terraform-json` accepts it: everything is to be created (exit 2)', async () => {
    const plan = await runAegis(['plan', '--terraform-json', stackJson, '--source', 'cdktf-shop'], { AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey });
    expect(plan.code, plan.stdout + plan.stderr).toBe(2);
    expect(plan.stdout).toContain('shop.example.com');
    expect(plan.stdout).toMatch(/VirtualPatch shop\/search[-_]sqli/);
  }, 60_000);

  it('`terraform init && terraform apply` accepts it and creates every object through the API', async () => {
    const init = await terraform('init', '-input=false');
    expect(init.status, init.stderr + init.stdout).toBe(0);
    const apply = await terraform('apply', '-auto-approve', '-input=false');
    expect(apply.status, apply.stderr + apply.stdout).toBe(0);
    expect(apply.stdout).toMatch(/Apply complete! Resources: 7 added, 0 changed, 0 destroyed/);
    expect(apply.stdout).toMatch(/shop_site_id = "/);
    expect(existsSync(join(dir, `terraform.${STACK}.tfstate`))).toBe(true);
    const plan = await terraform('plan', '-detailed-exitcode', '-input=false');
    expect(plan.status, plan.stdout + plan.stderr).toBe(0);

    const sites = (await t.call('GET', '/api/v1/shield/sites')).body.data;
    expect(sites.map((s: { domain: string }) => s.domain)).toEqual(['shop.example.com']);
    expect(sites[0].managed_rules).toEqual({ enabled: true, paranoia_level: 2, exclusions: [{ rules: ['sqli.tautology'], url_pattern: '/cms/*' }] });
    const siteId = sites[0].id as string;
    expect((await t.call('GET', `/api/v1/shield/sites/${siteId}/ip-access`)).body.data).toHaveLength(2);
    expect((await t.call('GET', `/api/v1/shield/sites/${siteId}/virtual-patches`)).body.data).toHaveLength(1);
    expect((await t.call('GET', `/api/v1/shield/sites/${siteId}/rate-limits`)).body.data).toHaveLength(1);
    expect((await t.call('GET', '/api/v1/webhooks')).body.data).toHaveLength(1);

    const destroy = await terraform('destroy', '-auto-approve', '-input=false');
    expect(destroy.status, destroy.stderr).toBe(0);
    expect((await t.call('GET', '/api/v1/shield/sites')).body.data).toEqual([]);
  }, 180_000);
});
