import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestFingerprint } from '../../platform/http/idempotency.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 10_000 });
});
afterAll(() => t.close());

const countKeysNamed = async (name: string) =>
  (await t.call('GET', '/api/v1/api-keys?limit=200')).body.data.filter((k: { name: string }) => k.name === name).length;

describe('Idempotency-Key', () => {
  it('replays the identical status and body without creating twice', async () => {
    const headers = { 'idempotency-key': 'create-once-1' };
    const body = { name: 'idem-once', scopes: ['scans:read'] };
    const first = await t.call('POST', '/api/v1/api-keys', { body, headers });
    const second = await t.call('POST', '/api/v1/api-keys', { body, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.text).toBe(first.text);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await countKeysNamed('idem-once')).toBe(1);
  });

  it('keeps no readable copy of a secret shown once (the stored answer is sealed)', async () => {
    const headers = { 'idempotency-key': 'sealed-1' };
    const body = { name: 'idem-sealed', scopes: ['scans:read'] };
    const first = await t.call('POST', '/api/v1/api-keys', { body, headers });
    const rows = await t.server.database.db.selectFrom('idempotency_keys').selectAll().where('key', '=', 'sealed-1').execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(first.body.key);
    expect(JSON.stringify(rows)).not.toContain('idem-sealed');
    const replay = await t.call('POST', '/api/v1/api-keys', { body, headers });
    expect(replay.body.key).toBe(first.body.key);
  });

  it('the same key with another request is 422 idempotency_key_reused', async () => {
    const headers = { 'idempotency-key': 'create-once-2' };
    await t.call('POST', '/api/v1/api-keys', { body: { name: 'idem-a', scopes: ['scans:read'] }, headers });
    const other = await t.call('POST', '/api/v1/api-keys', { body: { name: 'idem-b', scopes: ['scans:read'] }, headers });
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_key_reused');
    expect(await countKeysNamed('idem-b')).toBe(0);
  });

  it('replays errors too (a 4xx is a final answer), but not server errors', async () => {
    const headers = { 'idempotency-key': 'rotate-missing' };
    const first = await t.call('POST', '/api/v1/api-keys/key_01aaaaaaaaaaaaaaaaaaaaaaaa/rotate', { headers });
    const second = await t.call('POST', '/api/v1/api-keys/key_01aaaaaaaaaaaaaaaaaaaaaaaa/rotate', { headers });
    expect(first.status).toBe(404);
    expect(second.text).toBe(first.text);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
  });

  it('a concurrent duplicate is 409 while the first is in flight, and exactly one object is made', async () => {
    const body = { name: 'idem-race', scopes: ['scans:read'] };
    const headers = { 'idempotency-key': 'race-1' };
    const results = await Promise.all(Array.from({ length: 6 }, () => t.call('POST', '/api/v1/api-keys', { body, headers })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    for (const r of results.filter((r) => r.status === 409)) expect(r.body.error.code).toBe('conflict');
    const created = results.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') !== 'true');
    expect(created).toHaveLength(1);
    expect(await countKeysNamed('idem-race')).toBe(1);
  });

  it('a key held by a request still in flight in another process answers 409', async () => {
    // The state another server process leaves in the database while its request runs.
    const body = { name: 'held', scopes: ['scans:read'] };
    const me = await t.call('GET', '/api/v1/me');
    await t.server.database.db
      .insertInto('idempotency_keys')
      .values({
        org_id: me.body.organization.id,
        key: 'held-elsewhere',
        fingerprint: requestFingerprint('POST', '/api/v1/api-keys', body),
        state: 'pending',
        created_at: new Date(),
      })
      .execute();
    const res = await t.call('POST', '/api/v1/api-keys', { body, headers: { 'idempotency-key': 'held-elsewhere' } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
    expect(await countKeysNamed('held')).toBe(0);
  });

  it('rejects malformed keys', async () => {
    const bad = await t.call('POST', '/api/v1/api-keys', { body: { name: 'x', scopes: ['scans:read'] }, headers: { 'idempotency-key': 'x'.repeat(300) } });
    expect(bad.status).toBe(400);
  });

  it('replays past the first 24 hours no more', async () => {
    const headers = { 'idempotency-key': 'old-key' };
    const body = { name: 'idem-old', scopes: ['scans:read'] };
    await t.call('POST', '/api/v1/api-keys', { body, headers });
    await t.server.database.db.updateTable('idempotency_keys').set({ created_at: new Date(Date.now() - 25 * 3600_000) }).where('key', '=', 'old-key').execute();
    const again = await t.call('POST', '/api/v1/api-keys', { body, headers });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(await countKeysNamed('idem-old')).toBe(2);
  });
});
