// The audit log's filters for the dashboard (target, date range) and its CSV download link
// (`?format=csv`): the same filters as the JSON list, every page, formulas neutralised.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let first: string;
let second: string;
beforeAll(async () => {
  t = await startTestServer();
  first = (await t.call('POST', '/api/v1/api-keys', { body: { name: '@SUM(1+1)', scopes: ['scans:read'] } })).body.id;
  second = (await t.call('POST', '/api/v1/api-keys', { body: { name: 'second', scopes: ['scans:read'] } })).body.id;
  await t.call('DELETE', `/api/v1/api-keys/${first}`);
});
afterAll(() => t.close());

describe('audit log filters and CSV download', () => {
  it('filters by target id', async () => {
    const res = await t.call('GET', `/api/v1/audit-log?target=${first}`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((e: { action: string }) => e.action)).toEqual(['api_key.revoked', 'api_key.created']);
    const both = await t.call('GET', `/api/v1/audit-log?target=${first},${second}&action=api_key.created`);
    expect(both.body.data).toHaveLength(2);
  });

  it('filters by a date range (since inclusive, until exclusive) and refuses a bad time', async () => {
    const all = await t.call('GET', '/api/v1/audit-log');
    const times = all.body.data.map((e: { created_at: string }) => Date.parse(e.created_at));
    const newest = new Date(Math.max(...times));
    const future = await t.call('GET', `/api/v1/audit-log?since=${encodeURIComponent(new Date(newest.getTime() + 1000).toISOString())}`);
    expect(future.body.data).toEqual([]);
    const past = await t.call('GET', `/api/v1/audit-log?until=${encodeURIComponent(new Date(Math.min(...times)).toISOString())}`);
    expect(past.body.data).toEqual([]);
    const window = await t.call('GET', `/api/v1/audit-log?since=${encodeURIComponent(new Date(Math.min(...times)).toISOString())}&until=${encodeURIComponent(new Date(newest.getTime() + 1).toISOString())}`);
    expect(window.body.data).toHaveLength(all.body.data.length);
    const bad = await t.call('GET', '/api/v1/audit-log?since=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
  });

  it('answers CSV for ?format=csv with the same filters, as an attachment, formulas neutralised', async () => {
    const res = await t.call('GET', `/api/v1/audit-log?format=csv&target=${first}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toContain('attachment');
    const lines = res.text.trim().split('\r\n');
    expect(lines[0]).toBe('id,created_at,actor_type,actor_id,action,target_type,target_id,ip,metadata');
    expect(lines.slice(1).map((l) => l.split(',')[4])).toEqual(['api_key.revoked', 'api_key.created']);
    expect(lines.slice(1).every((l) => l.includes(`,${first},`))).toBe(true);
    // The key's name sits in the metadata cell; it starts with '{', and the name inside is quoted JSON.
    expect(res.text).not.toMatch(/(^|,)@SUM/m);
    // format=json wins over an Accept header asking CSV.
    const json = await t.call('GET', '/api/v1/audit-log?format=json', { headers: { accept: 'text/csv' } });
    expect(json.headers.get('content-type')).toMatch(/json/);
  });

  it('is admin only for CSV too', async () => {
    const reader = (await t.call('POST', '/api/v1/api-keys', { body: { name: 'reader', scopes: ['shield:read'] } })).body.key;
    expect((await t.call('GET', '/api/v1/audit-log?format=csv', { key: reader })).status).toBe(403);
  });
});
