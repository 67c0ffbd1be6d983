import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ logLevel: 'trace' });
});
afterAll(() => t.close());

describe('logs', () => {
  it('never contain key values or Authorization headers', async () => {
    const created = await t.call('POST', '/api/v1/api-keys', { body: { name: 'logged', scopes: ['admin'] }, headers: { 'idempotency-key': 'log-test' } });
    await t.call('POST', `/api/v1/api-keys/${created.body.id}/rotate`, { key: created.body.key });
    await t.call('GET', '/api/v1/me', { key: 'svc_live_' + 'Z'.repeat(40) });
    await t.call('GET', '/api/v1/me', { key: created.body.key });
    expect(t.logs.length).toBeGreaterThan(5);
    const all = t.logs.join('\n');
    expect(all).not.toContain(t.adminKey);
    expect(all).not.toContain(created.body.key);
    expect(all).not.toMatch(/svc_live_[A-Za-z0-9]{32}/);
    expect(all.toLowerCase()).not.toContain('bearer');
    expect(all).toContain('request_id');
  });
});
