// GET /api/v1/webhooks/event-types: the catalogue a webhook subscribes from (the dashboard's
// New webhook form lists it), admin only as webhooks are.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

describe('the webhook event catalogue', () => {
  it('lists every event type with its version and meaning, and the families', async () => {
    const res = await t.call('GET', '/api/v1/webhooks/event-types');
    expect(res.status).toBe(200);
    expect(res.body.types).toContainEqual({ type: 'scan.completed', version: 1, description: expect.stringContaining('scan finished') });
    expect(res.body.types.map((e: { type: string }) => e.type)).not.toContain('ping');
    expect(res.body.patterns).toEqual(expect.arrayContaining(['*', 'vulnerability.*']));
    // Admin only, as webhooks are.
    const anonymous = await fetch(`${t.url}/api/v1/webhooks/event-types`);
    expect(anonymous.status).toBe(401);
  });
});
