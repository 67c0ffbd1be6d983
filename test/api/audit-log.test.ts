import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyInOrganization } from '../support/orgs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let keyId: string;
beforeAll(async () => {
  t = await startTestServer();
  const created = await t.call('POST', '/api/v1/api-keys', { body: { name: '=HYPERLINK("http://evil")', scopes: ['scans:read'] } });
  keyId = created.body.id;
  await t.call('POST', `/api/v1/api-keys/${keyId}/rotate`);
  await t.call('DELETE', `/api/v1/api-keys/${keyId}`);
});
afterAll(() => t.close());

describe('audit log', () => {
  it('records key creation, rotation and revocation with actor, target, IP and time', async () => {
    const me = await t.call('GET', '/api/v1/me');
    const res = await t.call('GET', '/api/v1/audit-log');
    expect(res.status).toBe(200);
    const events = res.body.data as { action: string; actor: { id: string }; target: { id: string } | null; ip: string; created_at: string }[];
    const forKey = events.filter((e) => e.target?.id === keyId).map((e) => e.action);
    expect(forKey).toEqual(['api_key.revoked', 'api_key.rotated', 'api_key.created']);
    for (const e of events) {
      expect(e.actor.id).toBe(me.body.api_key.id);
      expect(e.ip).toBe('127.0.0.1');
      expect(Date.parse(e.created_at)).not.toBeNaN();
    }
    expect(res.text).not.toMatch(/svc_live_[A-Za-z0-9]{32}/);
  });

  it('filters by action and actor with comma-separated values', async () => {
    const two = await t.call('GET', '/api/v1/audit-log?action=api_key.created,api_key.revoked');
    expect(new Set(two.body.data.map((e: { action: string }) => e.action))).toEqual(new Set(['api_key.created', 'api_key.revoked']));
    const none = await t.call('GET', '/api/v1/audit-log?actor=key_nobody');
    expect(none.body.data).toEqual([]);
  });

  it('paginates', async () => {
    const first = await t.call('GET', '/api/v1/audit-log?limit=2');
    expect(first.body.data).toHaveLength(2);
    const second = await t.call('GET', `/api/v1/audit-log?limit=2&cursor=${first.body.pagination.next}`);
    expect(second.body.data.length).toBeGreaterThan(0);
    expect(second.body.data[0].id).not.toBe(first.body.data[1].id);
  });

  it('exports CSV with Accept: text/csv, neutralising formulas', async () => {
    const res = await t.call('GET', '/api/v1/audit-log?action=api_key.created', { headers: { accept: 'text/csv' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = res.text.trim().split('\r\n');
    expect(lines[0]).toBe('id,created_at,actor_type,actor_id,action,target_type,target_id,ip,metadata');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.slice(1).every((l) => l.includes(',api_key.created,'))).toBe(true);
    // the metadata cell holds the key name; a spreadsheet must not evaluate it
    expect(res.text).not.toMatch(/(^|,)=HYPERLINK/m);
  });

  it('is admin only and per organisation', async () => {
    const reader = await keyInOrganization(t, 'audit-reader', ['shield:read']);
    expect((await t.call('GET', '/api/v1/audit-log', { key: reader })).status).toBe(403);
    const otherAdmin = await keyInOrganization(t, 'audit-other', ['admin']);
    expect((await t.call('GET', '/api/v1/audit-log', { key: otherAdmin })).body.data).toEqual([]);
  });
});
