import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let base: string;
beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 10_000 });
  const site = (await t.call('POST', '/api/v1/shield/sites', { body: { domain: 'limits.example.com', origin_url: 'http://127.0.0.1:9', mode: 'block' } })).body.id;
  base = `/api/v1/shield/sites/${site}/rate-limits`;
});
afterAll(() => t.close());

const rule = (extra: Record<string, unknown> = {}) => ({ identity: 'ip', url_pattern: '/login', method: 'POST', budget: 5, window_seconds: 10, action: 'block', escalate_to_deny_minutes: 15, ...extra });

describe('rate-limit rules', () => {
  it('round-trips create, get, list, update and delete', async () => {
    const created = await t.call('POST', base, { body: rule() });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject(rule());
    const id = created.body.id;
    expect((await t.call('GET', `${base}/${id}`)).body).toEqual(created.body);
    expect((await t.call('GET', base)).body.data).toHaveLength(1);
    const updated = await t.call('PATCH', `${base}/${id}`, { body: { budget: 50, identity: 'header:X-Tenant' } });
    expect(updated.body).toMatchObject({ ...rule(), budget: 50, identity: 'header:X-Tenant' });
    expect((await t.call('DELETE', `${base}/${id}`)).status).toBe(204);
    expect((await t.call('GET', `${base}/${id}`)).status).toBe(404);
  });

  it('escalation defaults to 0 minutes', async () => {
    const { escalate_to_deny_minutes: _omit, ...withoutEscalation } = rule();
    const created = await t.call('POST', base, { body: withoutEscalation });
    expect(created.body.escalate_to_deny_minutes).toBe(0);
  });

  it('enforces sane bounds', async () => {
    for (const [field, value] of [
      ['budget', 0],
      ['window_seconds', 0],
      ['window_seconds', 86_401],
      ['escalate_to_deny_minutes', 10_081],
      ['escalate_to_deny_minutes', -1],
      ['identity', 'cookie'],
      ['identity', 'header:'],
      ['action', 'deny'],
    ] as const) {
      const res = await t.call('POST', base, { body: rule({ [field]: value }) });
      expect(res.status, `${field}=${value}`).toBe(422);
      expect(res.body.error.details.fields[0].field).toBe(field);
    }
    expect((await t.call('POST', base, { body: rule({ window_seconds: 86_400, escalate_to_deny_minutes: 10_080, identity: 'api_key' }) })).status).toBe(201);
  });
});
