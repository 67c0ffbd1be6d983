// ShieldCertificate through the reconciler, end to end against a running server: a certificate
// whose key comes from an environment variable and one whose key comes from a file are uploaded
// (GET shows their fingerprints), the second plan is empty, a key written into the YAML is refused
// (and never echoed), a file reference may not leave the config directory, a renewed certificate
// plans as an update through its fingerprint, drift made through the API is found, `dump` plans to
// nothing, and a certificate taken out of config is deleted with a warning.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTerraformJsonText } from '../../reconciler/config/terraform-json.ts';
import { makeCa, makeLeaf, type TestCa, type TestLeaf } from '../support/certificates.ts';
import { runAegis } from '../support/cli.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let ca: TestCa;
let env: Record<string, string>;
const dirs: string[] = [];
const SOURCE = 'git.example.com/acme/site-certificates';
const SHOP = 'shop.cert.example.com';
const BLOG = 'blog.cert.example.com';

beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 1_000_000, shieldTlsPort: 8443 });
  ca = makeCa();
}, 60_000);
afterAll(async () => {
  await t?.close();
  ca?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'aegis-cert-'));
  dirs.push(dir);
  return dir;
}

interface JsonPlan {
  changes: { action: string; kind: string; name: string; diff: { field: string; before: unknown; after: unknown }[]; fields: Record<string, unknown> | null }[];
  warnings: string[];
}

const site = (name: string, domain: string) => `apiVersion: aegis/v1
kind: ShieldSite
metadata:
  name: ${name}
spec:
  domain: ${domain}
  origin_url: http://10.0.0.5:8080
  mode: block
  tls:
    mode: custom
    redirect_http: true
`;

const certificate = (name: string, key: string) => `apiVersion: aegis/v1
kind: ShieldCertificate
metadata:
  name: ${name}
spec:
  site: ${name}
  certificate_file: certs/${name}.crt
  private_key: ${key}
`;

describe('ShieldCertificate in config', () => {
  const repo = tempDir();
  const file = join(repo, 'sites.yaml');
  let shop: TestLeaf;
  let blog: TestLeaf;
  const writeCerts = () => {
    mkdirSync(join(repo, 'certs'), { recursive: true });
    writeFileSync(join(repo, 'certs', 'shop.crt'), shop.chainPem);
    writeFileSync(join(repo, 'certs', 'blog.crt'), blog.chainPem);
    writeFileSync(join(repo, 'certs', 'blog.key'), blog.keyPem);
    env = { AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey, AEGIS_SHOP_KEY: shop.keyPem };
  };
  const writeConfig = (...documents: string[]) => writeFileSync(file, documents.join('---\n'));
  const plan = (...extra: string[]) => runAegis(['plan', repo, '--source', SOURCE, ...extra], env);
  const planJson = async () => {
    const result = await plan('--json');
    expect([0, 2], result.stdout + result.stderr).toContain(result.code);
    return { code: result.code, plan: JSON.parse(result.stdout) as JsonPlan, text: result.stdout + result.stderr };
  };
  const apply = (...extra: string[]) => runAegis(['apply', repo, '--source', SOURCE, '--yes', ...extra], env);
  const siteId = async (domain: string): Promise<string> => (await t.call('GET', `/api/v1/shield/sites?domain=${domain}`)).body.data[0].id as string;
  const served = async (domain: string) => t.call('GET', `/api/v1/shield/sites/${await siteId(domain)}/certificate`);
  const noKeyIn = (text: string, ...leaves: TestLeaf[]) => {
    for (const leaf of leaves) {
      const body = leaf.keyPem.split('\n').filter((line) => line && !line.startsWith('-----'));
      for (const line of body) expect(text).not.toContain(line);
    }
  };

  it('uploads a certificate with its key from an environment variable and one with its key from a file; the second plan is empty', async () => {
    shop = makeLeaf(ca, [SHOP]);
    blog = makeLeaf(ca, [BLOG]);
    writeCerts();
    writeConfig(site('shop', SHOP), certificate('shop', '{ env: AEGIS_SHOP_KEY }'), site('blog', BLOG), certificate('blog', '{ file: certs/blog.key }'));
    const validated = await runAegis(['validate', repo], env);
    expect(validated.code, validated.stdout + validated.stderr).toBe(0);

    const first = await planJson();
    expect(first.code).toBe(2);
    const created = first.plan.changes.filter((c) => c.kind === 'ShieldCertificate');
    expect(created.map((c) => [c.action, c.name])).toEqual([
      ['create', 'shop/shop'],
      ['create', 'blog/blog'],
    ]);
    // The plan says where the key comes from, never what it is.
    expect(created.find((c) => c.name === 'shop/shop')?.fields?.private_key).toEqual({ env: 'AEGIS_SHOP_KEY' });
    expect(created.find((c) => c.name === 'blog/blog')?.fields?.private_key).toEqual({ file: join(repo, 'certs', 'blog.key') });
    noKeyIn(first.text, shop, blog);
    const human = await plan();
    noKeyIn(human.stdout + human.stderr, shop, blog);

    const applied = await apply();
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    noKeyIn(applied.stdout + applied.stderr, shop, blog);
    const shopServed = await served(SHOP);
    expect(shopServed.status).toBe(200);
    expect(shopServed.body).toMatchObject({ source: 'custom', names: [SHOP], fingerprint: shop.fingerprint });
    expect(shopServed.body).not.toHaveProperty('private_key');
    expect((await served(BLOG)).body).toMatchObject({ source: 'custom', names: [BLOG], fingerprint: blog.fingerprint });

    const again = await plan();
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toContain('No changes');
  });

  it('refuses a key written into the YAML, without repeating it', async () => {
    const broken = tempDir();
    const indented = shop.keyPem.trimEnd().split('\n').map((line) => `    ${line}`).join('\n');
    writeFileSync(join(broken, 'site.yaml'), `${site('shop', SHOP)}---\n${certificate('shop', `|\n${indented}`).replace('certificate_file: certs/shop.crt', 'certificate: "not read"')}`);
    for (const command of ['validate', 'plan']) {
      const refused = await runAegis(command === 'validate' ? ['validate', broken] : ['plan', broken, '--source', SOURCE], env);
      expect(refused.code, command).toBe(1);
      const output = refused.stdout + refused.stderr;
      expect(output).toContain('ShieldCertificate/shop: spec.private_key: must not hold the secret itself');
      expect(output).toContain('{ env: NAME }');
      noKeyIn(output, shop);
    }
  });

  it('refuses a key file outside the config directory, and an unset variable', async () => {
    const broken = tempDir();
    const outside = tempDir();
    writeFileSync(join(outside, 'shop.key'), shop.keyPem);
    mkdirSync(join(broken, 'certs'));
    writeFileSync(join(broken, 'certs', 'shop.crt'), shop.chainPem);
    writeFileSync(join(broken, 'site.yaml'), `${site('shop', SHOP)}---\n${certificate('shop', `{ file: ../${outside.split('/').pop()}/shop.key }`)}`);
    const escaped = await runAegis(['validate', broken], env);
    expect(escaped.code).toBe(1);
    expect(escaped.stdout + escaped.stderr).toMatch(/spec\.private_key: ".*shop\.key" points outside the config directory/);
    writeFileSync(join(broken, 'site.yaml'), `${site('shop', SHOP)}---\n${certificate('shop', '{ env: AEGIS_NOT_SET_ANYWHERE }')}`);
    const unset = await runAegis(['validate', broken], env);
    expect(unset.code).toBe(1);
    expect(unset.stdout + unset.stderr).toContain('spec.private_key: environment variable AEGIS_NOT_SET_ANYWHERE is not set');
  });

  it('refuses a certificate for a site whose config asks for another tls.mode, and one not named after its site', async () => {
    const broken = tempDir();
    mkdirSync(join(broken, 'certs'));
    writeFileSync(join(broken, 'certs', 'shop.crt'), shop.chainPem);
    writeFileSync(join(broken, 'site.yaml'), `${site('shop', SHOP).replace('mode: custom', 'mode: acme')}---\n${certificate('shop', '{ env: AEGIS_SHOP_KEY }')}`);
    const acme = await runAegis(['validate', broken], env);
    expect(acme.code).toBe(1);
    expect(acme.stdout + acme.stderr).toContain('site shop has tls.mode acme: an uploaded certificate is served with tls.mode: custom');
    writeFileSync(join(broken, 'site.yaml'), `${site('shop', SHOP)}---\n${certificate('shop', '{ env: AEGIS_SHOP_KEY }').replace('name: shop', 'name: shop-cert')}`);
    const named = await runAegis(['validate', broken], env);
    expect(named.code).toBe(1);
    expect(named.stdout + named.stderr).toContain('metadata.name: a ShieldCertificate is named after its site: "shop"');
  });

  it('plans a renewed certificate as an update through its fingerprint, and uploads it with its new key', async () => {
    const before = shop.fingerprint;
    shop = makeLeaf(ca, [SHOP]);
    writeCerts();
    const { code, plan: p } = await planJson();
    expect(code).toBe(2);
    expect(p.changes).toEqual([expect.objectContaining({ action: 'update', kind: 'ShieldCertificate', name: 'shop/shop', diff: [{ field: 'fingerprint', before, after: shop.fingerprint }] })]);
    const applied = await apply();
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect((await served(SHOP)).body.fingerprint).toBe(shop.fingerprint);
    expect((await plan()).code).toBe(0);
  });

  it('finds a certificate replaced through the API, and puts back the one config names', async () => {
    const other = makeLeaf(ca, [BLOG]);
    const put = await t.call('PUT', `/api/v1/shield/sites/${await siteId(BLOG)}/certificate`, { body: { certificate: other.chainPem, private_key: other.keyPem } });
    expect(put.status).toBe(200);
    const { code, plan: p } = await planJson();
    expect(code).toBe(2);
    expect(p.changes).toEqual([expect.objectContaining({ action: 'update', name: 'blog/blog', diff: [{ field: 'fingerprint', before: other.fingerprint, after: blog.fingerprint }] })]);
    expect((await apply()).code).toBe(0);
    expect((await served(BLOG)).body.fingerprint).toBe(blog.fingerprint);
    expect((await plan()).code).toBe(0);
  });

  it('dump writes the chain beside the site and names a variable for the key; planning the dump shows no changes', async () => {
    const out = tempDir();
    const dumped = await runAegis(['dump', '--out', out, '--source', SOURCE], env);
    expect(dumped.code, dumped.stderr).toBe(0);
    const text = readFileSync(join(out, 'shop.yaml'), 'utf8');
    expect(text).toContain('kind: ShieldCertificate');
    expect(text).toContain('certificate_file: shop.crt');
    expect(text).toContain('env: AEGIS_SHOP_PRIVATE_KEY');
    noKeyIn(text, shop);
    expect(readFileSync(join(out, 'shop.crt'), 'utf8')).toContain('BEGIN CERTIFICATE');
    const roundTrip = await runAegis(['plan', out], { ...env, AEGIS_SHOP_PRIVATE_KEY: shop.keyPem, AEGIS_BLOG_PRIVATE_KEY: blog.keyPem });
    expect(roundTrip.code, roundTrip.stdout + roundTrip.stderr).toBe(0);
  });

  it('deletes a certificate taken out of config, with a warning', async () => {
    writeConfig(site('shop', SHOP), certificate('shop', '{ env: AEGIS_SHOP_KEY }'), site('blog', BLOG));
    const { code, plan: p } = await planJson();
    expect(code).toBe(2);
    expect(p.changes).toEqual([expect.objectContaining({ action: 'delete', kind: 'ShieldCertificate', name: 'blog/blog' })]);
    expect(p.warnings).toEqual(['ShieldCertificate/blog/blog: deleted (protection removed)']);
    expect((await apply()).code).toBe(0);
    expect((await served(BLOG)).status).toBe(404);
    expect((await plan()).code).toBe(0);
  });
});

describe('examples/certificate', () => {
  it('applies once its chain is in certs/ and its key in AEGIS_SHOP_KEY; the second plan is empty', async () => {
    const repo = tempDir();
    cpSync('examples/certificate', repo, { recursive: true });
    const leaf = makeLeaf(ca, ['shop.example.com']);
    writeFileSync(join(repo, 'certs', 'shop.crt'), leaf.chainPem);
    const exampleEnv = { AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey, AEGIS_SHOP_KEY: leaf.keyPem };
    const source = 'git.example.com/acme/certificate-example';
    const applied = await runAegis(['apply', repo, '--source', source, '--yes'], exampleEnv);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    const site = (await t.call('GET', '/api/v1/shield/sites?domain=shop.example.com')).body.data[0];
    expect((await t.call('GET', `/api/v1/shield/sites/${site.id}/certificate`)).body.fingerprint).toBe(leaf.fingerprint);
    const again = await runAegis(['plan', repo, '--source', source], exampleEnv);
    expect(again.code, again.stdout + again.stderr).toBe(0);
  });
});

describe('aegis_shield_certificate in Terraform JSON (CDKTF)', () => {
  it('names the certificate after its site, as the live reader does', () => {
    const text = JSON.stringify({
      resource: {
        aegis_shield_site: { shop: { domain: SHOP, origin_url: 'http://10.0.0.5:8080', mode: 'block' } },
        aegis_shield_certificate: { shop_cert: { site_id: '${aegis_shield_site.shop.id}', certificate: '-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n', private_key: 'k' } },
      },
    });
    const { objects, problems } = loadTerraformJsonText(text, 'cdk.tf.json');
    expect(problems).toEqual([]);
    expect(objects.find((o) => o.kind === 'ShieldCertificate')).toMatchObject({ name: 'shop', site: 'shop' });
  });
});
