// The CSV export stops at its row cap and says so in a last row. The cap is 100 000 in the app;
// here the audit routes are mounted alone with a cap of 2, on the test server's database, with the
// caller's principal set directly (authentication is tested with the real app elsewhere).
import Fastify from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { auditRoutes, CSV_MAX_ROWS } from '../../api/audit/routes.ts';
import type { Principal } from '../../api/accounts/auth/principal.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  for (const name of ['one', 'two', 'three']) await t.call('POST', '/api/v1/api-keys', { body: { name, scopes: ['scans:read'] } });
});
afterAll(() => t.close());

it('stops at the cap with an export.truncated row', async () => {
  expect(CSV_MAX_ROWS).toBe(100_000);
  const principal = (await t.call('GET', '/api/v1/me')).body as { organization: { id: string } };
  const app = Fastify();
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    request.principal = { orgId: principal.organization.id } as unknown as Principal;
  });
  await app.register(auditRoutes, { db: t.server.database.db, csvMaxRows: 2 });
  try {
    const res = await app.inject({ method: 'GET', url: '/api/v1/audit-log?format=csv&action=api_key.created' });
    expect(res.statusCode).toBe(200);
    const lines = res.body.trim().split('\r\n');
    expect(lines).toHaveLength(4);
    expect(lines.slice(1, 3).every((l) => l.includes(',api_key.created,'))).toBe(true);
    expect(lines[3]).toContain(',export.truncated,');
    expect(lines[3]).toContain('max_rows');
  } finally {
    await app.close();
  }
});
