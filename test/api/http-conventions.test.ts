import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const expectEnvelope = (body: unknown, code: string) => {
  expect(body).toMatchObject({ error: { code, message: expect.any(String), details: expect.any(Object) } });
};

describe('health', () => {
  it('answers liveness and readiness without a key', async () => {
    expect((await t.call('GET', '/healthz', { key: null })).body).toEqual({ status: 'ok' });
    expect((await t.call('GET', '/readyz', { key: null })).body).toEqual({ status: 'ok', database: 'ok' });
  });
});

describe('error envelope', () => {
  it('401 without a key, and with an unknown or malformed key', async () => {
    for (const key of [null, 'svc_live_' + 'x'.repeat(40), 'not-a-key']) {
      const res = await t.call('GET', '/api/v1/me', { key });
      expect(res.status).toBe(401);
      expectEnvelope(res.body, 'unauthorized');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
  });

  it('404 for an unknown route', async () => {
    const res = await t.call('GET', '/api/v1/no-such-thing');
    expect(res.status).toBe(404);
    expectEnvelope(res.body, 'not_found');
  });

  it('400 for malformed JSON', async () => {
    const res = await t.call('POST', '/api/v1/api-keys', { raw: '{"name": ', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expectEnvelope(res.body, 'invalid_request');
  });

  it('415 for a content type the route does not take', async () => {
    const res = await t.call('POST', '/api/v1/api-keys', { raw: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(415);
    expectEnvelope(res.body, 'unsupported_media_type');
  });

  it('413 for a body over the limit', async () => {
    const res = await t.call('POST', '/api/v1/api-keys', { body: { name: 'x'.repeat(2 * 1024 * 1024), scopes: ['admin'] } });
    expect(res.status).toBe(413);
    expectEnvelope(res.body, 'payload_too_large');
  });

  it('422 naming every failing field, and unknown fields are errors', async () => {
    const res = await t.call('POST', '/api/v1/api-keys', { body: { name: 7, scopes: ['root'], colour: 'red' } });
    expect(res.status).toBe(422);
    expectEnvelope(res.body, 'validation_failed');
    const fields = (res.body.error.details.fields as { field: string }[]).map((f) => f.field).sort();
    expect(fields).toEqual(['colour', 'name', 'scopes[0]']);
  });

  it('does not coerce body types', async () => {
    const res = await t.call('POST', '/api/v1/api-keys', { body: { name: 'n', scopes: 'admin' } });
    expect(res.status).toBe(422);
  });
});

describe('request ids', () => {
  it('are returned on every response, generated or carried through', async () => {
    const generated = await t.call('GET', '/api/v1/me');
    expect(generated.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
    const carried = await t.call('GET', '/api/v1/me', { headers: { 'x-request-id': 'lb-trace-12345678' } });
    expect(carried.headers.get('x-request-id')).toBe('lb-trace-12345678');
    const unsafe = await t.call('GET', '/api/v1/me', { headers: { 'x-request-id': 'bad id\twith tab' } });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^req_/);
    const error = await t.call('GET', '/api/v1/me', { key: null });
    expect(error.headers.get('x-request-id')).toMatch(/^req_/);
    expect(t.logs.some((line) => line.includes('"request_id":"lb-trace-12345678"'))).toBe(true);
  });
});

describe('identity', () => {
  it('GET /me and /orgs/current describe the caller', async () => {
    const me = await t.call('GET', '/api/v1/me');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ type: 'api_key', api_key: { name: 'bootstrap', scopes: ['admin'] }, organization: { slug: 'default' } });
    const org = await t.call('GET', '/api/v1/orgs/current');
    expect(org.body).toMatchObject({ slug: 'default', id: me.body.organization.id });
  });
});
