import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileUserRegex } from '../../schemas/checks/regex.ts';
import { keyInOrganization } from '../support/orgs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let site: string;
let base: string;
beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 10_000, sweepIntervalMs: 100 });
  site = (await t.call('POST', '/api/v1/shield/sites', { body: { domain: 'patches.example.com', origin_url: 'http://127.0.0.1:9', mode: 'block' } })).body.id;
  base = `/api/v1/shield/sites/${site}/virtual-patches`;
});
afterAll(() => t.close());

const patch = (extra: Record<string, unknown> = {}) => ({ url_pattern: '/search', method: 'GET', match_param: 'q', match_regex: '(?i)union\\s+select', action: 'block', expires_in_days: 30, ...extra });

describe('virtual patches', () => {
  it('round-trips create, get, list, label update and delete; expires_in_days yields expires_at', async () => {
    const created = await t.call('POST', base, { body: patch({ labels: { cve: 'CVE-2024-0001' } }) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ site_id: site, url_pattern: '/search', method: 'GET', match_param: 'q', action: 'block', expires_in_days: 30, status: 'active', source_finding_id: null });
    const days = (Date.parse(created.body.expires_at) - Date.parse(created.body.created_at)) / 86_400_000;
    expect(days).toBe(30);
    const id = created.body.id;
    expect((await t.call('GET', `${base}/${id}`)).body).toEqual(created.body);
    expect((await t.call('GET', base)).body.data.map((p: { id: string }) => p.id)).toContain(id);
    const relabelled = await t.call('PATCH', `${base}/${id}`, { body: { labels: { cve: 'CVE-2024-0002' } } });
    expect(relabelled.body.labels).toEqual({ cve: 'CVE-2024-0002' });
    expect((await t.call('PATCH', `${base}/${id}`, { body: { match_regex: 'x' } })).status).toBe(422);
    expect((await t.call('DELETE', `${base}/${id}`)).status).toBe(204);
    expect((await t.call('GET', `${base}/${id}`)).status).toBe(404);
  });

  it('defaults: action block, no expiry', async () => {
    const created = await t.call('POST', base, { body: { url_pattern: '/x', method: 'ANY', match_param: 'id', match_regex: '^[0-9]+$' } });
    expect(created.body).toMatchObject({ action: 'block', expires_in_days: null, expires_at: null });
  });

  it('an invalid or non-RE2 regex is 422 naming match_regex', async () => {
    for (const regex of ['(unclosed', '(a)\\1', '(?<=admin)x', 'x'.repeat(1025)]) {
      const res = await t.call('POST', base, { body: patch({ match_regex: regex }) });
      expect(res.status, regex).toBe(422);
      expect(res.body.error.details.fields[0].field).toBe('match_regex');
    }
  });

  it('a catastrophic-backtracking pattern is accepted and only ever runs on RE2, in linear time', async () => {
    const res = await t.call('POST', base, { body: patch({ match_regex: '(a+)+$' }) });
    expect(res.status).toBe(201);
    const compiled = compileUserRegex(res.body.match_regex);
    expect(compiled.ok).toBe(true);
    if (!compiled.ok) return;
    // Not V8's engine: RE2 objects are their own class; on V8 this input would backtrack ~2^40 times.
    expect(compiled.compiled.constructor.name).toBe('RE2');
    expect(compiled.compiled.test('a'.repeat(40) + '!')).toBe(false);
    expect(compiled.compiled.test('aaaa')).toBe(true);
  });

  it('validates the other fields', async () => {
    const res = await t.call('POST', base, { body: patch({ url_pattern: 'search', method: 'FETCH', action: 'allow', expires_in_days: 0 }) });
    expect(res.status).toBe(422);
    expect(res.body.error.details.fields.map((f: { field: string }) => f.field).sort()).toEqual(['action', 'expires_in_days', 'method', 'url_pattern']);
  });

  it('expired patches are marked expired, then swept', async () => {
    const created = await t.call('POST', base, { body: patch({ match_param: 'expiring' }) });
    await t.server.database.db.updateTable('virtual_patches').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', created.body.id).execute();
    await expect.poll(async () => (await t.call('GET', `${base}/${created.body.id}`)).status, { timeout: 5000 }).toBe(404);
  });

  it('needs shield:write to create; another organisation gets 404', async () => {
    const foreignWriter = await keyInOrganization(t, 'vp-others', ['shield:write']);
    expect((await t.call('POST', base, { key: foreignWriter, body: patch() })).status).toBe(404);
    expect((await t.call('GET', base, { key: foreignWriter })).status).toBe(404);
    const ownReader = await t.call('POST', '/api/v1/api-keys', { body: { name: 'r', scopes: ['shield:read'] } });
    expect((await t.call('POST', base, { key: ownReader.body.key, body: patch() })).status).toBe(403);
    expect((await t.call('GET', base, { key: ownReader.body.key })).status).toBe(200);
  });
});
