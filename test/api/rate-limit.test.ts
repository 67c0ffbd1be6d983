import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyInOrganization } from '../support/orgs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

describe('rate limits', () => {
  it('the 101st request of one key in a minute is 429 with Retry-After; another key is unaffected', async () => {
    const key = await keyInOrganization(t, 'busy', ['scans:read']);
    const other = await keyInOrganization(t, 'calm', ['scans:read']);
    for (let i = 1; i <= 100; i++) {
      const res = await t.call('GET', '/api/v1/me', { key });
      expect(res.status, `request ${i}`).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBe('100');
      expect(res.headers.get('ratelimit-remaining')).toBe(String(100 - i));
      expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    }
    const limited = await t.call('GET', '/api/v1/me', { key });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);

    expect((await t.call('GET', '/api/v1/me', { key: other })).status).toBe(200);
  });

  it('health probes are not counted', async () => {
    const res = await t.call('GET', '/healthz', { key: null });
    expect(res.headers.get('ratelimit-limit')).toBeNull();
  });
});
