// Uploaded certificates (PUT/GET/DELETE /api/v1/shield/sites/:id/certificate) with certificates made
// by `openssl` in the test (a local CA and leaves): stored with the key sealed, the site switched to
// `tls.mode: custom`, every bad upload a 422 naming its field with nothing stored, and the key in no
// response, log line, audit entry or event afterwards.
import { createPrivateKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox, loadServerKey } from '../../platform/crypto/secret-box.ts';
import { asn1Time, makeTestCa, type IssuedCertificate, type TestCa } from '../support/openssl-certs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let ca: TestCa;
let count = 0;

beforeAll(async () => {
  [t, ca] = await Promise.all([startTestServer({ rateLimitPerMinute: 1_000_000 }), makeTestCa()]);
});
afterAll(async () => {
  await t?.close();
  ca?.close();
});

async function newSite(): Promise<{ id: string; domain: string }> {
  const res = await t.call('POST', '/api/v1/shield/sites', { body: { domain: `cert${++count}.example.com`, origin_url: 'https://origin.example.com', mode: 'block' } });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

const upload = (siteId: string, certificate: string, privateKey: string, key?: string) =>
  t.call('PUT', `/api/v1/shield/sites/${siteId}/certificate`, { body: { certificate, private_key: privateKey }, ...(key ? { key } : {}) });

/** Distinctive lines of a PEM key (its base64 body), as they would appear if it leaked anywhere. */
const keyLines = (pem: string): string[] => pem.split('\n').filter((line) => line.length >= 40 && !line.startsWith('-----'));

function expectNoKey(text: string, issued: IssuedCertificate, where: string): void {
  expect(text, where).not.toMatch(/PRIVATE KEY/);
  for (const line of keyLines(issued.keyPem)) expect(text.includes(line), `${where} holds the private key`).toBe(false);
}

describe('uploading a certificate', () => {
  it('stores chain and sealed key, answers names/issuer/validity/fingerprint, switches the site to custom, and GET shows the same', async () => {
    const site = await newSite();
    const issued = await ca.issue({ names: [site.domain, `www.${site.domain}`] });
    const res = await upload(site.id, issued.chainPem, issued.keyPem);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ site_id: site.id, source: 'custom', names: [site.domain, `www.${site.domain}`], issuer: 'CN=Aegis Test CA' });
    expect(res.body.fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(Date.parse(res.body.not_after)).toBeGreaterThan(Date.now());
    expect(res.body.certificate).toBe(issued.chainPem);
    expect(res.body).not.toHaveProperty('private_key');

    const got = await t.call('GET', `/api/v1/shield/sites/${site.id}/certificate`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    const shown = (await t.call('GET', `/api/v1/shield/sites/${site.id}`)).body;
    expect(shown.tls.mode).toBe('custom');
    expect(shown.certificate).toEqual({ source: 'custom', names: res.body.names, issuer: res.body.issuer, not_after: res.body.not_after, fingerprint: res.body.fingerprint, acme_order: null });

    // At rest: sealed, bound to the site, and it opens to the uploaded key.
    const row = await t.server.database.db.selectFrom('shield_certificates').selectAll().where('site_id', '=', site.id).executeTakeFirstOrThrow();
    expectNoKey(row.private_key_sealed, issued, 'the stored key');
    const box = createSecretBox(await loadServerKey(t.database.dataDir, undefined));
    const opened = box.open(row.private_key_sealed, `shield-certificate:${site.id}`);
    const der = (pem: string) => createPrivateKey(pem).export({ type: 'pkcs8', format: 'der' }).toString('hex');
    expect(der(opened)).toBe(der(issued.keyPem));
    expect(() => box.open(row.private_key_sealed, 'shield-certificate:site_other')).toThrow();
  });

  it('replaces the certificate on a second upload (updated_at moves) and audits both with names and fingerprints only', async () => {
    const site = await newSite();
    const first = await ca.issue({ names: [site.domain] });
    const second = await ca.issue({ names: [`*.${site.domain.split('.').slice(1).join('.')}`] });
    const one = (await upload(site.id, first.chainPem, first.keyPem)).body;
    await new Promise((r) => setTimeout(r, 20));
    const two = await upload(site.id, second.leafPem, second.keyPem);
    expect(two.status, two.text).toBe(200);
    expect(two.body.fingerprint).not.toBe(one.fingerprint);
    expect(Date.parse(two.body.updated_at)).toBeGreaterThan(Date.parse(one.updated_at));
    expect(two.body.created_at).toBe(one.created_at);
    const audit = (await t.call('GET', `/api/v1/audit-log?action=shield_certificate.uploaded&target=${site.id}`)).body.data;
    expect(audit.map((e: { metadata: Record<string, unknown> }) => e.metadata)).toEqual([
      { source: 'custom', names: two.body.names, issuer: 'CN=Aegis Test CA', not_after: two.body.not_after, fingerprint: two.body.fingerprint, previous_fingerprint: one.fingerprint },
      { source: 'custom', names: one.names, issuer: 'CN=Aegis Test CA', not_after: one.not_after, fingerprint: one.fingerprint, previous_fingerprint: null },
    ]);
    // The mode changed once, on the first upload.
    const modeChanges = (await t.call('GET', `/api/v1/audit-log?action=shield_site.tls_changed&target=${site.id}`)).body.data;
    expect(modeChanges).toHaveLength(1);
    expect(modeChanges[0].metadata).toMatchObject({ from: { mode: 'off' }, to: { mode: 'custom' }, reason: 'certificate uploaded' });
  });

  it('refuses bad uploads with 422 naming the field, and stores nothing', async () => {
    const site = await newSite();
    const good = await ca.issue({ names: [site.domain] });
    const other = await ca.issue({ names: [site.domain] });
    const elsewhere = await ca.issue({ names: ['elsewhere.example.org', `sub.${site.domain}`] });
    const expired = await ca.issue({ names: [site.domain], startDate: '20200101000000Z', endDate: '20200201000000Z' });
    const future = await ca.issue({ names: [site.domain], startDate: asn1Time(new Date(Date.now() + 5 * 86_400_000)), endDate: asn1Time(new Date(Date.now() + 50 * 86_400_000)) });
    const weak = await ca.issue({ names: [site.domain], key: 'rsa:1024' });
    const cases: [string, string, string, RegExp][] = [
      ['wrong key', good.chainPem, other.keyPem, /private_key does not belong to the certificate/],
      ['not covering', elsewhere.chainPem, elsewhere.keyPem, new RegExp(`certificate does not cover ${site.domain.replace(/\./g, '\\.')}`)],
      ['expired', expired.chainPem, expired.keyPem, /certificate expired on 2020-02-01/],
      ['not yet valid', future.chainPem, future.keyPem, /certificate is not valid before/],
      ['weak key', weak.chainPem, weak.keyPem, /private_key is a 1024-bit RSA key/],
      ['malformed certificate', 'not a certificate', good.keyPem, /certificate is not a PEM certificate/],
      ['garbled certificate', good.leafPem.replace(/\n[A-Za-z0-9+/]{20}/, '\nAAAAAAAAAAAAAAAAAAAA'), good.keyPem, /certificate holds a PEM block that is not a valid X\.509 certificate/],
      ['key in the certificate field', good.chainPem + good.keyPem, good.keyPem, /certificate holds something other than certificates/],
      ['malformed key', good.chainPem, '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n', /private_key is not a valid private key/],
      ['certificate as the key', good.chainPem, good.leafPem, /private_key is not one PEM private key/],
      ['chain out of order', ca.certPem + good.leafPem, good.keyPem, /certificate certificate 2 of the chain did not issue certificate 1/],
    ];
    for (const [name, certificate, key, message] of cases) {
      const res = await upload(site.id, certificate, key);
      expect(res.status, `${name}: ${res.text}`).toBe(422);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.message, name).toMatch(message);
      const fields = (res.body.error.details.fields as { field: string }[]).map((f) => f.field);
      expect(fields.length, name).toBeGreaterThan(0);
      expect(fields.every((f) => f === 'certificate' || f === 'private_key'), name).toBe(true);
      expect(res.body.error.message).not.toContain(key.split('\n')[1] ?? '\u0000');
    }
    // Both fields wrong at once: both named.
    const both = await upload(site.id, 'nope', 'nope');
    expect(both.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual(['certificate', 'private_key']);
    // Schema errors (missing or empty fields) are 422s naming the field too.
    const missing = await t.call('PUT', `/api/v1/shield/sites/${site.id}/certificate`, { body: { certificate: good.chainPem } });
    expect(missing.status).toBe(422);
    expect(missing.text).toContain('private_key');

    expect((await t.call('GET', `/api/v1/shield/sites/${site.id}/certificate`)).status).toBe(404);
    const shown = (await t.call('GET', `/api/v1/shield/sites/${site.id}`)).body;
    expect(shown.tls.mode).toBe('off');
    expect(shown.certificate).toBeNull();
  });

  it('needs shield:write to upload or delete and shield:read to read; a missing site is a 404', async () => {
    const site = await newSite();
    const issued = await ca.issue({ names: [site.domain] });
    const reader = (await t.call('POST', '/api/v1/api-keys', { body: { name: 'cert-reader', scopes: ['shield:read'] } })).body.key as string;
    expect((await upload(site.id, issued.chainPem, issued.keyPem, reader)).status).toBe(403);
    expect((await upload(site.id, issued.chainPem, issued.keyPem)).status).toBe(200);
    expect((await t.call('GET', `/api/v1/shield/sites/${site.id}/certificate`, { key: reader })).status).toBe(200);
    expect((await t.call('DELETE', `/api/v1/shield/sites/${site.id}/certificate`, { key: reader })).status).toBe(403);
    expect((await upload('site_missing', issued.chainPem, issued.keyPem)).status).toBe(404);
    expect((await t.call('GET', '/api/v1/shield/sites/site_missing/certificate')).status).toBe(404);
  });

  it('deletes the certificate (audited), leaving tls.mode as it is; a second delete is a 404', async () => {
    const site = await newSite();
    const issued = await ca.issue({ names: [site.domain] });
    const uploaded = (await upload(site.id, issued.chainPem, issued.keyPem)).body;
    const deleted = await t.call('DELETE', `/api/v1/shield/sites/${site.id}/certificate`);
    expect(deleted.status).toBe(204);
    expect((await t.call('GET', `/api/v1/shield/sites/${site.id}/certificate`)).status).toBe(404);
    const shown = (await t.call('GET', `/api/v1/shield/sites/${site.id}`)).body;
    expect(shown).toMatchObject({ tls: { mode: 'custom' }, certificate: null });
    expect((await t.call('DELETE', `/api/v1/shield/sites/${site.id}/certificate`)).status).toBe(404);
    const audit = (await t.call('GET', `/api/v1/audit-log?action=shield_certificate.deleted&target=${site.id}`)).body.data;
    expect(audit[0].metadata).toMatchObject({ fingerprint: uploaded.fingerprint, names: [site.domain] });
    // Deleting the site takes its certificate with it.
    await upload(site.id, issued.chainPem, issued.keyPem);
    expect((await t.call('DELETE', `/api/v1/shield/sites/${site.id}`)).status).toBe(204);
    expect(await t.server.database.db.selectFrom('shield_certificates').select('id').where('site_id', '=', site.id).executeTakeFirst()).toBeUndefined();
  });
});

describe('the key never leaves', () => {
  it('is in no response, log line, audit entry or event after uploads, reads, failures and deletes', async () => {
    const site = await newSite();
    const issued = await ca.issue({ names: [site.domain] });
    const wrong = await ca.issue({ names: ['other.example.org'] });
    const texts: [string, string][] = [];
    const record = (where: string, res: { text: string }) => texts.push([where, res.text]);
    record('PUT', await upload(site.id, issued.chainPem, issued.keyPem));
    record('PUT refused', await upload(site.id, wrong.chainPem, issued.keyPem));
    record('PUT malformed key', await upload(site.id, issued.chainPem, issued.keyPem.replace('-----END', 'junk\n-----END')));
    record('GET certificate', await t.call('GET', `/api/v1/shield/sites/${site.id}/certificate`));
    record('GET site', await t.call('GET', `/api/v1/shield/sites/${site.id}`));
    record('list sites', await t.call('GET', '/api/v1/shield/sites?limit=200'));
    record('audit log', await t.call('GET', '/api/v1/audit-log?limit=200'));
    record('audit CSV', await t.call('GET', '/api/v1/audit-log?format=csv'));
    record('events', await t.call('GET', '/api/v1/events?limit=200'));
    record('DELETE', await t.call('DELETE', `/api/v1/shield/sites/${site.id}/certificate`));
    const db = t.server.database.db;
    texts.push(['audit rows', JSON.stringify(await db.selectFrom('audit_events').selectAll().execute())]);
    texts.push(['event rows', JSON.stringify(await db.selectFrom('events').selectAll().execute())]);
    texts.push(['logs', t.logs.join('\n')]);
    expect(texts.find(([where]) => where === 'audit log')?.[1]).toContain('shield_certificate.uploaded');
    for (const [where, text] of texts) expectNoKey(text, issued, where);
  });
});
