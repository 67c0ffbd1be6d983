// Finding 4, as the attack: a Shield site saved with an origin_url the gateway cannot parse — an IPv6
// zone id (`http://[fe80::1%25eth0]:8080`), which the schema's pattern let through although URL
// parsing (what the gateway connects with) refuses it. Saving it must be a 422 naming `origin_url`,
// on create and on update, whatever AEGIS_ALLOW_METADATA_ORIGINS says (a zone is not a metadata
// question: the gateway could not forward to it at all).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

const UNPARSEABLE = ['http://[fe80::1%25eth0]:8080', 'http://[fe80::1%eth0]:8080', 'https://[fd00::1%25en0]/app', 'http://999.1.1.1:8080', 'http://origin.test:99999'];

describe('origin_url the gateway cannot parse', () => {
  let strict: TestServer;
  let permissive: TestServer;
  beforeAll(async () => {
    [strict, permissive] = await Promise.all([startTestServer({ rateLimitPerMinute: 100_000 }), startTestServer({ rateLimitPerMinute: 100_000, allowMetadataOrigins: true })]);
  });
  afterAll(async () => {
    await Promise.all([strict?.close(), permissive?.close()]);
  });

  it.each(UNPARSEABLE)('%s is refused on create (422 on origin_url), on either setting', async (originUrl) => {
    for (const t of [strict, permissive]) {
      const res = await t.call('POST', '/api/v1/shield/sites', { body: { domain: 'zone.origin.test', origin_url: originUrl, mode: 'block' } });
      expect(res.status, res.text).toBe(422);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.fields).toEqual([{ field: 'origin_url', message: expect.stringMatching(/not a URL the gateway can connect to/) }]);
    }
    expect((await strict.call('GET', '/api/v1/shield/sites?domain=zone.origin.test')).body.data).toEqual([]);
  });

  it('is refused on update, and the site keeps its origin', async () => {
    const created = await strict.call('POST', '/api/v1/shield/sites', { body: { domain: 'update.origin.test', origin_url: 'http://[fd00::1]:8080', mode: 'block' } });
    expect(created.status, created.text).toBe(201);
    const res = await strict.call('PATCH', `/api/v1/shield/sites/${created.body.id}`, { body: { origin_url: 'http://[fd00::1%25eth0]:8080' } });
    expect(res.status, res.text).toBe(422);
    expect(res.body.error.details.fields[0].field).toBe('origin_url');
    expect(res.body.error.message).toMatch(/IPv6 zone/);
    expect((await strict.call('GET', `/api/v1/shield/sites/${created.body.id}`)).body.origin_url).toBe('http://[fd00::1]:8080');
  });
});
