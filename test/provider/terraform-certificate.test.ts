// aegis_shield_certificate with the real terraform binary: examples/terraform/certificate (a site
// with `tls.mode = "custom"` and its uploaded certificate) applied through the API, an immediate
// plan empty, the key (a write-only argument) in neither the plan output nor the state (which
// holds its SHA-256), a renewed certificate and key updated in place, and a certificate replaced
// through the API found as drift by its fingerprint and put back.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCa, makeLeaf, type TestCa, type TestLeaf } from '../support/certificates.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { applyClean, terraformWorkspace, type TerraformWorkspace } from '../support/terraform.ts';

const DOMAIN = 'secure.shop.example.com';

let t: TestServer;
let tf: TerraformWorkspace;
let ca: TestCa;
let leaf: TestLeaf;

/** The chain where the example reads it, and the key as an (ephemeral) variable in an auto-loaded tfvars file. */
function install(next: TestLeaf): void {
  mkdirSync(join(tf.dir, 'certs'), { recursive: true });
  writeFileSync(join(tf.dir, 'certs', 'shop.crt'), next.chainPem);
  writeFileSync(join(tf.dir, 'key.auto.tfvars'), `shop_private_key = <<EOT\n${next.keyPem.trimEnd()}\nEOT\n`);
}

/** No line of the key's body appears in `text`. */
function noKeyIn(text: string, ...leaves: TestLeaf[]): void {
  for (const l of leaves) for (const line of l.keyPem.split('\n').filter((x) => x && !x.startsWith('-----'))) expect(text).not.toContain(line);
}

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 1_000_000 });
  tf = terraformWorkspace('examples/terraform/certificate', t.url, t.adminKey);
  ca = makeCa();
  leaf = makeLeaf(ca, [DOMAIN]);
  install(leaf);
}, 120_000);
afterAll(async () => {
  await t?.close();
  tf?.remove();
  ca?.close();
});

async function served(): Promise<{ status: number; body: Record<string, unknown> }> {
  const site = (await t.call('GET', `/api/v1/shield/sites?domain=${DOMAIN}`)).body.data[0];
  return t.call('GET', `/api/v1/shield/sites/${site.id}/certificate`);
}

describe('aegis_shield_certificate', () => {
  it('creates the site and uploads its certificate through the API; an immediate plan has no changes; the key is in no plan output', async () => {
    const plan = await tf.run('init');
    expect(plan.status, plan.stderr).toBe(0);
    const preview = await tf.run('plan');
    expect(preview.status, preview.stderr).toBe(0);
    expect(preview.stdout).toMatch(/aegis_shield_certificate\.secure_shop will be created/);
    expect(preview.stdout).toMatch(/private_key\s+= \(write-only attribute\)/);
    noKeyIn(preview.stdout + preview.stderr, leaf);
    await applyClean(tf, 2);
    const site = (await t.call('GET', `/api/v1/shield/sites?domain=${DOMAIN}`)).body.data[0];
    expect(site.tls).toMatchObject({ mode: 'custom', redirect_http: true });
    const certificate = await served();
    expect(certificate.status).toBe(200);
    expect(certificate.body).toMatchObject({ source: 'custom', names: [DOMAIN], fingerprint: leaf.fingerprint });
  }, 180_000);

  it('keeps only a SHA-256 of the key in state', async () => {
    const state = readFileSync(join(tf.dir, 'terraform.tfstate'), 'utf8');
    noKeyIn(state, leaf);
    const resource = (JSON.parse(state) as { resources: { type: string; instances: { attributes: Record<string, unknown> }[] }[] }).resources.find((r) => r.type === 'aegis_shield_certificate');
    expect(resource?.instances[0]?.attributes).toMatchObject({ private_key: null, private_key_sha256: sha256(leaf.keyPem.trimEnd() + '\n'), fingerprint: leaf.fingerprint });
  });

  it('updates a renewed certificate and key in place', async () => {
    const renewed = makeLeaf(ca, [DOMAIN]);
    install(renewed);
    const plan = await tf.run('plan', '-detailed-exitcode');
    expect(plan.status, plan.stderr).toBe(2);
    expect(plan.stdout).toMatch(/aegis_shield_certificate\.secure_shop will be updated in-place/);
    expect(plan.stdout).toMatch(/Plan: 0 to add, 1 to change, 0 to destroy/);
    noKeyIn(plan.stdout + plan.stderr, leaf, renewed);
    const apply = await tf.run('apply', '-auto-approve');
    expect(apply.status, apply.stderr).toBe(0);
    noKeyIn(apply.stdout + apply.stderr, leaf, renewed);
    expect((await served()).body.fingerprint).toBe(renewed.fingerprint);
    expect((await tf.run('plan', '-detailed-exitcode')).status).toBe(0);
    leaf = renewed;
  }, 180_000);

  it('finds a certificate replaced through the API by its fingerprint, and puts back the configured one', async () => {
    const other = makeLeaf(ca, [DOMAIN]);
    const site = (await t.call('GET', `/api/v1/shield/sites?domain=${DOMAIN}`)).body.data[0];
    expect((await t.call('PUT', `/api/v1/shield/sites/${site.id}/certificate`, { body: { certificate: other.chainPem, private_key: other.keyPem } })).status).toBe(200);
    const plan = await tf.run('plan', '-detailed-exitcode');
    expect(plan.status, plan.stderr).toBe(2);
    expect(plan.stdout).toMatch(/aegis_shield_certificate\.secure_shop will be updated in-place/);
    const apply = await tf.run('apply', '-auto-approve');
    expect(apply.status, apply.stderr).toBe(0);
    expect((await served()).body.fingerprint).toBe(leaf.fingerprint);
    expect((await tf.run('plan', '-detailed-exitcode')).status).toBe(0);
  }, 180_000);

  it('destroy removes the certificate with its site', async () => {
    const destroy = await tf.run('destroy', '-auto-approve');
    expect(destroy.status, destroy.stderr).toBe(0);
    expect((await t.call('GET', `/api/v1/shield/sites?domain=${DOMAIN}`)).body.data).toEqual([]);
  }, 180_000);
});
