import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyInOrganization } from '../support/orgs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { asUser, signInWithMagicLink } from '../support/sessions.ts';
import { startSmtpServer, type SmtpCapture } from '../support/smtp.ts';

let t: TestServer;
let smtp: SmtpCapture;
beforeAll(async () => {
  smtp = await startSmtpServer();
  // A small session budget: the test spends it quickly.
  t = await startTestServer({ smtpUrl: smtp.url, sessionRateLimitPerMinute: 150 });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

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

  it('a signed-in person has the session budget (the dashboard calls several routes per page), not the key budget', async () => {
    const cookie = await signInWithMagicLink(t, smtp, 'busy-person@example.com');
    for (let i = 1; i <= 150; i++) {
      const res = await asUser(t, cookie, 'GET', '/api/v1/me');
      expect(res.status, `request ${i}`).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBe('150');
    }
    const limited = await asUser(t, cookie, 'GET', '/api/v1/me');
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
  });

  it('budgets last AEGIS_RATE_LIMIT_WINDOW_MS: with a one-second window, Retry-After is 1 and the budget is back a second later', async () => {
    const short = await startTestServer({ rateLimitPerMinute: 3, rateLimitWindowMs: 1000 });
    try {
      const key = await keyInOrganization(short, 'brief', ['scans:read']);
      for (let i = 1; i <= 3; i++) expect((await short.call('GET', '/api/v1/me', { key })).status).toBe(200);
      const limited = await short.call('GET', '/api/v1/me', { key });
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('1');
      await new Promise((r) => setTimeout(r, 1100));
      expect((await short.call('GET', '/api/v1/me', { key })).status).toBe(200);
    } finally {
      await short.close();
    }
  });

  it('health probes are not counted', async () => {
    const res = await t.call('GET', '/healthz', { key: null });
    expect(res.headers.get('ratelimit-limit')).toBeNull();
  });
});
