// @aegis/cdktf-provider (sdks/cdktf) as an npm package: packed, installed into a CDKTF app outside
// this repository (offline, from the npm cache the repository's own `npm ci` filled) and run with
// plain Node — no TypeScript runner, no access to the repository's node_modules — the way a user's
// app would run it. Also: the package's types serve a TypeScript app, and the package entry exports
// every generated binding.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCdktfPackage, cdktfStaleInput } from '../../sdks/cdktf/build.mjs';
import { GEN_DIR } from '../../provider/cdktf/generate.ts';

const ROOT = resolve('.');
const PACKAGE_DIR = join(ROOT, 'sdks', 'cdktf');
const require = createRequire(import.meta.url);
const versionOf = (name: string): string => (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const run = (command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> =>
  new Promise((done) => {
    execFile(command, args, { cwd, env, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });

// npm exports its own settings (npm_config_*) to the scripts it runs, this test's runner included;
// the app's install must see only the user's ordinary configuration (cache, registry, userconfig).
function npmEnv(): NodeJS.ProcessEnv {
  const keep = new Set(['npm_config_cache', 'npm_config_registry', 'npm_config_userconfig']);
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.toLowerCase().startsWith('npm_') || keep.has(key.toLowerCase())) env[key] = value;
  return { ...env, NO_UPDATE_NOTIFIER: '1', npm_config_update_notifier: 'false' };
}

let dir = '';
let tarball = '';
let app = '';
let installed: Run | undefined;
let offline = true;

beforeAll(async () => {
  // The repository's dist/ is what `npm pack` ships; rebuild it when the sources moved on.
  if (cdktfStaleInput() !== undefined) buildCdktfPackage({ quiet: true });
  dir = mkdtempSync(join(tmpdir(), 'aegis-cdktf-package-'));
  const packed = await run('npm', ['pack', '--json', '--pack-destination', dir], PACKAGE_DIR, npmEnv());
  if (packed.code !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
  tarball = join(dir, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);

  app = join(dir, 'app');
  mkdirSync(app);
  // The versions this repository installed, so npm finds them in its cache.
  const manifest = {
    name: 'outside-app',
    private: true,
    type: 'module',
    dependencies: { '@aegis/cdktf-provider': `file:${tarball}`, cdktf: versionOf('cdktf'), constructs: versionOf('constructs') },
  };
  writeFileSync(join(app, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  installed = await run('npm', ['install', '--offline', '--no-audit', '--no-fund'], app, npmEnv());
  if (installed.code !== 0) {
    // Offline needs every package in the cache; fall back to the cache first, the registry second.
    offline = false;
    installed = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], app, npmEnv());
  }
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('@aegis/cdktf-provider, the installable package of the CDKTF bindings', () => {
  it('the tarball holds the compiled JavaScript, the .d.ts types and the README, not the TypeScript sources', async () => {
    const list = await run('tar', ['-tzf', tarball], dir, process.env);
    expect(list.code, list.stderr).toBe(0);
    const files = list.stdout.split('\n').filter(Boolean).map((f) => f.replace(/^package\//, ''));
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/gen/shield-site/index.js', 'dist/gen/shield-site/index.d.ts']));
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    expect(files).not.toContain('dist/build-stamp.json');
  });

  it('declares cdktf and constructs as peers, at the versions this repository uses', () => {
    const pkg = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as Record<string, Record<string, string> | string>;
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    expect(pkg.name).toBe('@aegis/cdktf-provider');
    expect(pkg.peerDependencies).toEqual({ cdktf: root.dependencies.cdktf, constructs: root.dependencies.constructs });
    expect(pkg.dependencies).toBeUndefined();
    expect(root.devDependencies['@aegis/cdktf-provider']).toBe('file:sdks/cdktf');
  });

  it('the package entry exports every generated binding, by name and as a namespace', async () => {
    const bindings = readdirSync(GEN_DIR, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
    expect(bindings).toContain('shield-site');
    const entry = readFileSync(join(PACKAGE_DIR, 'index.ts'), 'utf8');
    for (const binding of bindings) expect(entry, `sdks/cdktf/index.ts does not export gen/${binding}`).toContain(`export * from './gen/${binding}/index.ts';`);
    // In this repository the package resolves through the root's `file:` devDependency, to dist/.
    const resolved = require.resolve('@aegis/cdktf-provider');
    expect(resolved).toBe(join(PACKAGE_DIR, 'dist', 'index.js'));
    const mod = (await import('@aegis/cdktf-provider')) as Record<string, unknown>;
    const namespaces = mod as Record<string, Record<string, unknown>>;
    expect(typeof mod.AegisProvider).toBe('function');
    expect(namespaces.shieldSite?.ShieldSite).toBe(mod.ShieldSite);
    expect(namespaces.dataAegisShieldSites?.DataAegisShieldSites).toBe(mod.DataAegisShieldSites);
  });

  it('installs offline into an app outside the repository, which synthesizes a ShieldSite with plain Node', async () => {
    expect(installed?.code, `${installed?.stdout}\n${installed?.stderr}`).toBe(0);
    if (!offline) console.warn('cdktf-package: `npm install --offline` failed; installed with --prefer-offline');
    expect(app.startsWith(ROOT + sep)).toBe(false);
    // A real install (copied from the tarball), not a link back into the repository.
    const installedPkg = join(app, 'node_modules', '@aegis', 'cdktf-provider');
    expect(existsSync(join(installedPkg, 'dist', 'index.js'))).toBe(true);
    expect(existsSync(join(installedPkg, 'gen', 'shield-site', 'index.ts'))).toBe(false);

    writeFileSync(
      join(app, 'main.js'),
      `import { App, TerraformStack, TerraformOutput } from 'cdktf';
import { AegisProvider, ShieldSite } from '@aegis/cdktf-provider';
import { IpAccessRule } from '@aegis/cdktf-provider/ip-access-rule';

const app = new App({ outdir: process.argv[2] });
const stack = new TerraformStack(app, 'outside');
new AegisProvider(stack, 'aegis', { apiUrl: 'https://aegis.example.com' });
const site = new ShieldSite(stack, 'shop', { domain: 'shop.example.com', originUrl: 'https://origin.shop.example.com', mode: 'block' });
new IpAccessRule(stack, 'office', { siteId: site.id, type: 'cidr', value: '198.51.100.0/24', action: 'allow' });
new TerraformOutput(stack, 'site_id', { value: site.id });
app.synth();
console.log(import.meta.resolve('@aegis/cdktf-provider'));
`,
    );
    const outdir = join(dir, 'cdktf.out');
    const synth = await run(process.execPath, ['main.js', outdir], app, { PATH: process.env.PATH, HOME: process.env.HOME });
    expect(synth.code, synth.stderr).toBe(0);
    expect(synth.stdout.trim()).toBe(`file://${join(installedPkg, 'dist', 'index.js')}`);
    const json = JSON.parse(readFileSync(join(outdir, 'stacks', 'outside', 'cdk.tf.json'), 'utf8'));
    expect(json.terraform.required_providers.aegis.source).toBe('registry.terraform.io/aegis/aegis');
    expect(json.provider.aegis).toEqual([{ api_url: 'https://aegis.example.com' }]);
    expect(json.resource.aegis_shield_site.shop).toMatchObject({ domain: 'shop.example.com', origin_url: 'https://origin.shop.example.com', mode: 'block' });
    expect(json.resource.aegis_ip_access_rule.office).toMatchObject({ site_id: '${aegis_shield_site.shop.id}', type: 'cidr', action: 'allow' });
  }, 60_000);

  it('its types check a TypeScript app against the installed package (and reject a wrong attribute)', async () => {
    expect(installed?.code).toBe(0);
    const check = join(app, 'check');
    mkdirSync(check);
    writeFileSync(join(check, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(
      join(check, 'tsconfig.json'),
      `${JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, types: [] }, include: ['*.ts'] }, null, 2)}\n`,
    );
    writeFileSync(
      join(check, 'ok.ts'),
      `import { App, TerraformStack } from 'cdktf';
import { AegisProvider, ShieldSite, type ShieldSiteConfig, shieldSite } from '@aegis/cdktf-provider';
import { Webhook } from '@aegis/cdktf-provider/webhook';
const stack = new TerraformStack(new App(), 'typed');
new AegisProvider(stack, 'aegis');
const config: ShieldSiteConfig = { domain: 'a.example.com', originUrl: 'https://o.example.com', mode: 'log', managedRules: { paranoiaLevel: 2 } };
const site: shieldSite.ShieldSite = new ShieldSite(stack, 'a', config);
const id: string = site.id;
new Webhook(stack, 'w', { url: 'https://hooks.example.com', events: ['shield.block'] });
export { id };
`,
    );
    // The README's example app, as a user would paste it.
    const readme = readFileSync(join(PACKAGE_DIR, 'README.md'), 'utf8');
    const example = /```ts\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('## Use in a CDKTF app')))?.[1];
    expect(example).toContain('new ShieldSite(');
    writeFileSync(join(check, 'readme.ts'), example!);
    writeFileSync(join(check, 'bad.ts'), `import { ShieldSite } from '@aegis/cdktf-provider';\nimport { App, TerraformStack } from 'cdktf';\nnew ShieldSite(new TerraformStack(new App(), 's'), 'x', { domain: 'a', originUrl: 'b', mode: 'log', originURL: 'c' });\n`);
    // One compiler run for all files (tsc is the slow part): the only error is bad.ts's.
    const tsc = await run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'], check, process.env);
    expect(tsc.code).not.toBe(0);
    const errors = tsc.stdout.split('\n').filter((line) => /error TS\d+/.test(line));
    expect(errors, tsc.stdout).toHaveLength(1);
    expect(errors[0]).toMatch(/^bad\.ts.*'originURL'/);
  }, 60_000);
});
