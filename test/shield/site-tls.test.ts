// A Shield site's `tls` settings through the API: the default of a new site follows the server
// (ACME with a TLS port, plain HTTP without), updates merge field by field (hsts too), bad values
// are 422s naming the field, and every change is audited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

let plain: TestServer;
let edge: TestServer;

beforeAll(async () => {
  [plain, edge] = await Promise.all([startTestServer({ rateLimitPerMinute: 1_000_000 }), startTestServer({ rateLimitPerMinute: 1_000_000, shieldTlsPort: 8443 })]);
});
afterAll(async () => {
  await Promise.all([plain?.close(), edge?.close()]);
});

let count = 0;
const domain = () => `tls${++count}.example.com`;
const create = (t: TestServer, extra: Record<string, unknown> = {}) => t.call('POST', '/api/v1/shield/sites', { body: { domain: domain(), origin_url: 'https://origin.example.com', mode: 'block', ...extra } });
const DEFAULTS = { redirect_http: false, hsts: null, min_version: '1.2' };

describe('tls on create', () => {
  it('defaults to ACME when the server has a TLS port, to off when it has none', async () => {
    const withPort = await create(edge);
    expect(withPort.status, withPort.text).toBe(201);
    expect(withPort.body.tls).toEqual({ mode: 'acme', ...DEFAULTS });
    const without = await create(plain);
    expect(without.status, without.text).toBe(201);
    expect(without.body.tls).toEqual({ mode: 'off', ...DEFAULTS });
    expect((await plain.call('GET', `/api/v1/shield/sites/${without.body.id}`)).body.tls).toEqual({ mode: 'off', ...DEFAULTS });
  });

  it('fills the defaults of what is given, hsts fields included', async () => {
    const res = await create(plain, { tls: { mode: 'acme', hsts: { include_subdomains: true } } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.tls).toEqual({ mode: 'acme', redirect_http: false, hsts: { max_age: 31536000, include_subdomains: true, preload: false }, min_version: '1.2' });
    const listed = await plain.call('GET', `/api/v1/shield/sites?domain=${res.body.domain}`);
    expect(listed.body.data[0].tls).toEqual(res.body.tls);
  });

  it('refuses tls without a mode, unknown values and out-of-range numbers with 422 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ redirect_http: true }, 'tls'],
      [{ mode: 'letsencrypt' }, 'tls.mode'],
      [{ mode: 'acme', min_version: '1.1' }, 'tls.min_version'],
      [{ mode: 'acme', hsts: { max_age: 63072001 } }, 'tls.hsts.max_age'],
      [{ mode: 'acme', hsts: { max_age: -1 } }, 'tls.hsts.max_age'],
      [{ mode: 'acme', extra: true }, 'tls'],
    ];
    for (const [tls, field] of cases) {
      const res = await create(plain, { tls });
      expect(res.status, JSON.stringify(tls)).toBe(422);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.text, JSON.stringify(tls)).toContain(field);
    }
  });

  it('refuses HSTS preload without subdomains or a year, naming tls.hsts.preload; nothing is created', async () => {
    for (const hsts of [{ preload: true }, { preload: true, include_subdomains: true, max_age: 86400 }, { preload: true, max_age: 63072000 }]) {
      const d = domain();
      const res = await plain.call('POST', '/api/v1/shield/sites', { body: { domain: d, origin_url: 'https://origin.example.com', mode: 'block', tls: { mode: 'acme', hsts } } });
      expect(res.status, JSON.stringify(hsts)).toBe(422);
      expect(res.body.error.details.fields).toEqual([{ field: 'tls.hsts.preload', message: expect.stringContaining('needs') }]);
      expect((await plain.call('GET', `/api/v1/shield/sites?domain=${d}`)).body.data).toEqual([]);
    }
    const ok = await create(plain, { tls: { mode: 'acme', hsts: { preload: true, include_subdomains: true, max_age: 31536000 } } });
    expect(ok.status, ok.text).toBe(201);
  });
});

describe('tls on update', () => {
  it('merges the fields given into the stored settings, inside hsts too, and audits the change', async () => {
    const site = (await create(edge)).body;
    const patch = (tls: unknown) => edge.call('PATCH', `/api/v1/shield/sites/${site.id}`, { body: { tls } });
    let res = await patch({ redirect_http: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body.tls).toEqual({ mode: 'acme', redirect_http: true, hsts: null, min_version: '1.2' });
    res = await patch({ hsts: { max_age: 600 } });
    expect(res.body.tls.hsts).toEqual({ max_age: 600, include_subdomains: false, preload: false });
    res = await patch({ hsts: { include_subdomains: true }, min_version: '1.3' });
    expect(res.body.tls).toEqual({ mode: 'acme', redirect_http: true, hsts: { max_age: 600, include_subdomains: true, preload: false }, min_version: '1.3' });
    // Preload needs a year: with max_age 600 stored, asking for preload alone is refused and changes nothing.
    res = await patch({ hsts: { preload: true } });
    expect(res.status).toBe(422);
    expect(res.body.error.details.fields[0].field).toBe('tls.hsts.preload');
    res = await patch({ hsts: { preload: true, max_age: 31536000 } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.tls.hsts).toEqual({ max_age: 31536000, include_subdomains: true, preload: true });
    res = await patch({ hsts: null, mode: 'off' });
    expect(res.body.tls).toEqual({ mode: 'off', redirect_http: true, hsts: null, min_version: '1.3' });
    // Other fields leave tls alone.
    res = await edge.call('PATCH', `/api/v1/shield/sites/${site.id}`, { body: { mode: 'log' } });
    expect(res.body.tls).toEqual({ mode: 'off', redirect_http: true, hsts: null, min_version: '1.3' });

    const audit = await edge.call('GET', `/api/v1/audit-log?action=shield_site.tls_changed&limit=50`);
    const entries = audit.body.data.filter((e: { target: { id: string } }) => e.target.id === site.id);
    expect(entries).toHaveLength(5);
    expect(entries[0].metadata).toMatchObject({ from: { mode: 'acme', hsts: { preload: true } }, to: { mode: 'off', hsts: null } });
  });

  it('shows the computed fields: status, domain verification instructions and no certificate', async () => {
    const site = (await create(plain)).body;
    expect(site.status).toBe('active'); // contested (the default): a site serves at once
    expect(site.certificate).toBeNull();
    expect(site.domain_verification).toMatchObject({ status: 'unverified', method: null, verified_at: null, error: null });
    const token = site.domain_verification.http_token.body as string;
    expect(token).toMatch(/^[0-9a-f]{32}$/);
    expect(site.domain_verification.txt_record).toEqual({ name: `_aegis-verify.${site.domain}`, value: `aegis-verify=${token}` });
    expect(site.domain_verification.http_token.url).toBe(`http://${site.domain}/.well-known/aegis-verify/${token}`);
  });
});
