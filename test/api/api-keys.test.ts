import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyInOrganization } from '../support/orgs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ keyUsageFlushMs: 100 });
});
afterAll(() => t.close());

async function createKey(scopes: string[], name = 'test key') {
  const res = await t.call('POST', '/api/v1/api-keys', { body: { name, scopes } });
  expect(res.status).toBe(201);
  return res.body as { id: string; key: string; last4: string };
}

describe('API keys', () => {
  it('shows the value once, then only last4', async () => {
    const created = await createKey(['scans:read']);
    expect(created.key).toMatch(/^svc_live_[A-Za-z0-9]{32,}$/);
    expect(created.last4).toBe(created.key.slice(-4));
    expect(created).toMatchObject({ name: 'test key', scopes: ['scans:read'], status: 'active', prefix: 'svc_live_' });

    const got = await t.call('GET', `/api/v1/api-keys/${created.id}`);
    expect(got.status).toBe(200);
    expect(got.body.key).toBeUndefined();
    const list = await t.call('GET', '/api/v1/api-keys');
    expect(list.text).not.toContain(created.key);
    expect(list.body.data.map((k: { id: string }) => k.id)).toContain(created.id);
  });

  it('stores only a hash of the key', async () => {
    const created = await createKey(['scans:read']);
    const rows = await t.server.database.db.selectFrom('api_keys').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(created.key);
  });

  it('records when a key was last used', async () => {
    const created = await createKey(['scans:read']);
    expect((await t.call('GET', '/api/v1/me', { key: created.key })).status).toBe(200);
    await expect
      .poll(async () => (await t.call('GET', `/api/v1/api-keys/${created.id}`)).body.last_used_at, { timeout: 5000 })
      .toEqual(expect.any(String));
  });

  it('enforces scopes with a 403 naming the scope', async () => {
    const reader = await createKey(['shield:read']);
    const res = await t.call('GET', '/api/v1/api-keys', { key: reader.key });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'forbidden', details: { required_scope: 'admin' } });
    expect(res.body.error.message).toContain('admin');
    // any valid key may read its own identity
    expect((await t.call('GET', '/api/v1/me', { key: reader.key })).status).toBe(200);
  });

  it('rotation: the old key and its successor both work; the old one expires in 7 days', async () => {
    const old = await createKey(['admin'], 'rotated');
    const rotated = await t.call('POST', `/api/v1/api-keys/${old.id}/rotate`, { key: old.key });
    expect(rotated.status).toBe(201);
    expect(rotated.body.key).not.toBe(old.key);
    expect(rotated.body).toMatchObject({ name: 'rotated', scopes: ['admin'], status: 'active' });
    expect((await t.call('GET', '/api/v1/me', { key: old.key })).status).toBe(200);
    expect((await t.call('GET', '/api/v1/me', { key: rotated.body.key })).status).toBe(200);

    const before = (await t.call('GET', `/api/v1/api-keys/${old.id}`)).body;
    expect(before).toMatchObject({ status: 'rotating', replaced_by: rotated.body.id });
    const days = (Date.parse(before.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);

    const again = await t.call('POST', `/api/v1/api-keys/${old.id}/rotate`);
    expect(again.status).toBe(409);
  });

  it('a key past its rotation grace stops working', async () => {
    const old = await createKey(['scans:read'], 'grace');
    await t.call('POST', `/api/v1/api-keys/${old.id}/rotate`);
    await t.server.database.db.updateTable('api_keys').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', old.id).execute();
    await expect.poll(async () => (await t.call('GET', '/api/v1/me', { key: old.key })).status, { timeout: 5000 }).toBe(401);
    expect((await t.call('GET', `/api/v1/api-keys/${old.id}`)).body.status).toBe('revoked');
  });

  it('revocation is immediate', async () => {
    const victim = await createKey(['scans:read']);
    expect((await t.call('GET', '/api/v1/me', { key: victim.key })).status).toBe(200);
    const revoked = await t.call('DELETE', `/api/v1/api-keys/${victim.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ status: 'revoked', revoked_at: expect.any(String) });
    expect((await t.call('GET', '/api/v1/me', { key: victim.key })).status).toBe(401);
    expect((await t.call('POST', `/api/v1/api-keys/${victim.id}/rotate`)).status).toBe(409);
  });

  it('filters the list by status', async () => {
    const victim = await createKey(['scans:read']);
    await t.call('DELETE', `/api/v1/api-keys/${victim.id}`);
    const revoked = await t.call('GET', '/api/v1/api-keys?status=revoked');
    expect(revoked.body.data.every((k: { status: string }) => k.status === 'revoked')).toBe(true);
    expect(revoked.body.data.map((k: { id: string }) => k.id)).toContain(victim.id);
    const active = await t.call('GET', '/api/v1/api-keys?status=active,rotating');
    expect(active.body.data.map((k: { id: string }) => k.id)).not.toContain(victim.id);
    expect((await t.call('GET', '/api/v1/api-keys?status=gone')).status).toBe(400);
  });

  it("another organisation's key is a 404, never a 403", async () => {
    const otherKey = await keyInOrganization(t, 'other-org', ['admin']);
    const mine = await createKey(['scans:read']);
    for (const [method, path] of [
      ['GET', `/api/v1/api-keys/${mine.id}`],
      ['DELETE', `/api/v1/api-keys/${mine.id}`],
      ['POST', `/api/v1/api-keys/${mine.id}/rotate`],
    ] as const) {
      const res = await t.call(method, path, { key: otherKey });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    const list = await t.call('GET', '/api/v1/api-keys', { key: otherKey });
    expect(list.body.data.map((k: { id: string }) => k.id)).not.toContain(mine.id);
    expect((await t.call('GET', '/api/v1/me', { key: mine.key })).status).toBe(200);
  });
});

describe('pagination', () => {
  it('pages through a stable order with an opaque cursor', async () => {
    for (let i = 0; i < 7; i++) await createKey(['scans:read'], `page-${i}`);
    const all = (await t.call('GET', '/api/v1/api-keys?limit=200')).body.data.map((k: { id: string }) => k.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { body: { data: { id: string }[]; pagination: { next: string | null } } } = await t.call(
        'GET',
        `/api/v1/api-keys?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(res.body.data.length).toBeLessThanOrEqual(3);
      seen.push(...res.body.data.map((k) => k.id));
      cursor = res.body.pagination.next;
    } while (cursor);
    expect(seen).toEqual(all);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('defaults to 50 and rejects bad values with 400', async () => {
    expect((await t.call('GET', '/api/v1/api-keys')).body.pagination).toHaveProperty('next');
    for (const query of ['limit=0', 'limit=201', 'limit=abc', 'limit=2.5', 'cursor=garbage', `cursor=${Buffer.from('v1:x').toString('base64url')}`]) {
      const res = await t.call('GET', `/api/v1/api-keys?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
  });
});
