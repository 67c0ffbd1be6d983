import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyInOrganization } from '../support/orgs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 10_000 });
});
afterAll(() => t.close());

const site = (domain: string, extra: Record<string, unknown> = {}) => ({ domain, origin_url: 'https://origin.example.net', mode: 'block', ...extra });

describe('Shield sites', () => {
  it('round-trips create, get, list, update and delete', async () => {
    const created = await t.call('POST', '/api/v1/shield/sites', { body: site('shop.example.com', { labels: { env: 'prod' } }) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ domain: 'shop.example.com', mode: 'block', labels: { env: 'prod' }, id: expect.stringMatching(/^site_/) });
    expect(created.body.created_at).toBe(created.body.updated_at);
    const id = created.body.id;

    expect((await t.call('GET', `/api/v1/shield/sites/${id}`)).body).toEqual(created.body);
    const list = await t.call('GET', '/api/v1/shield/sites');
    expect(list.body.data.map((s: { id: string }) => s.id)).toContain(id);

    const updated = await t.call('PATCH', `/api/v1/shield/sites/${id}`, { body: { mode: 'log', origin_url: 'http://10.0.0.5:8080/app', labels: { env: 'staging' } } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ mode: 'log', origin_url: 'http://10.0.0.5:8080/app', labels: { env: 'staging' }, domain: 'shop.example.com' });
    expect(Date.parse(updated.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.updated_at));
    // a partial update leaves the other fields, labels included, as they were
    const modeOnly = await t.call('PATCH', `/api/v1/shield/sites/${id}`, { body: { mode: 'challenge' } });
    expect(modeOnly.body).toMatchObject({ mode: 'challenge', labels: { env: 'staging' }, origin_url: 'http://10.0.0.5:8080/app' });

    expect((await t.call('DELETE', `/api/v1/shield/sites/${id}`)).status).toBe(204);
    expect((await t.call('GET', `/api/v1/shield/sites/${id}`)).status).toBe(404);
    expect((await t.call('DELETE', `/api/v1/shield/sites/${id}`)).status).toBe(404);
  });

  it('refuses a second site for the same domain with 409', async () => {
    expect((await t.call('POST', '/api/v1/shield/sites', { body: site('dup.example.com') })).status).toBe(201);
    const again = await t.call('POST', '/api/v1/shield/sites', { body: site('dup.example.com', { mode: 'log' }) });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'conflict', details: { field: 'domain' } });
  });

  it('validates domain, origin_url and mode, and refuses unknown or immutable fields', async () => {
    const bad = await t.call('POST', '/api/v1/shield/sites', { body: { domain: 'Not A Domain', origin_url: 'ftp://x', mode: 'panic', extra: 1 } });
    expect(bad.status).toBe(422);
    const fields = bad.body.error.details.fields.map((f: { field: string }) => f.field).sort();
    expect(fields).toEqual(['domain', 'extra', 'mode', 'origin_url']);
    const missing = await t.call('POST', '/api/v1/shield/sites', { body: { domain: 'x.example.com' } });
    expect(missing.body.error.details.fields.map((f: { field: string }) => f.field).sort()).toEqual(['mode', 'origin_url']);

    const created = await t.call('POST', '/api/v1/shield/sites', { body: site('immutable.example.com') });
    const patch = await t.call('PATCH', `/api/v1/shield/sites/${created.body.id}`, { body: { domain: 'other.example.com' } });
    expect(patch.status).toBe(422);
    expect((await t.call('PATCH', `/api/v1/shield/sites/${created.body.id}`, { body: {} })).status).toBe(422);
    const badLabels = await t.call('PATCH', `/api/v1/shield/sites/${created.body.id}`, { body: { labels: { 'Bad Key': 'x' } } });
    expect(badLabels.status).toBe(422);
  });

  it('filters by label, mode and domain', async () => {
    await t.call('POST', '/api/v1/shield/sites', { body: site('a.filter.test', { mode: 'log', labels: { team: 'red', env: 'prod' } }) });
    await t.call('POST', '/api/v1/shield/sites', { body: site('b.filter.test', { mode: 'block', labels: { team: 'blue', env: 'prod' } }) });
    const domains = async (query: string) =>
      (await t.call('GET', `/api/v1/shield/sites?${query}`)).body.data.map((s: { domain: string }) => s.domain).filter((d: string) => d.endsWith('.filter.test')).sort();
    expect(await domains('label=env:prod')).toEqual(['a.filter.test', 'b.filter.test']);
    expect(await domains('label=env:prod,team:red')).toEqual(['a.filter.test']);
    expect(await domains('mode=block')).toEqual(['b.filter.test']);
    expect(await domains('mode=log,block')).toEqual(['a.filter.test', 'b.filter.test']);
    expect(await domains('domain=b.filter.test')).toEqual(['b.filter.test']);
    expect((await t.call('GET', '/api/v1/shield/sites?label=nocolon')).status).toBe(400);
    expect((await t.call('GET', '/api/v1/shield/sites?mode=panic')).status).toBe(400);
  });

  it('audits mode changes', async () => {
    const created = await t.call('POST', '/api/v1/shield/sites', { body: site('audited.example.com', { mode: 'log' }) });
    await t.call('PATCH', `/api/v1/shield/sites/${created.body.id}`, { body: { mode: 'block' } });
    await t.call('PATCH', `/api/v1/shield/sites/${created.body.id}`, { body: { labels: { x: 'y' } } });
    const audit = await t.call('GET', '/api/v1/audit-log?action=shield_site.mode_changed');
    const events = audit.body.data.filter((e: { target: { id: string } }) => e.target.id === created.body.id);
    expect(events).toHaveLength(1);
    expect(events[0].metadata).toEqual({ from: 'log', to: 'block' });
  });

  it('reads need shield:read, writes shield:write; other organisations see 404', async () => {
    const reader = await keyInOrganization(t, 'site-readers', ['shield:read']);
    const writer = await keyInOrganization(t, 'site-readers', ['shield:write']);
    const scans = await keyInOrganization(t, 'site-readers', ['scans:read']);
    expect((await t.call('GET', '/api/v1/shield/sites', { key: reader })).status).toBe(200);
    expect((await t.call('GET', '/api/v1/shield/sites', { key: scans })).status).toBe(403);
    const denied = await t.call('POST', '/api/v1/shield/sites', { key: reader, body: site('reader.example.com') });
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain('shield:write');
    const own = await t.call('POST', '/api/v1/shield/sites', { key: writer, body: site('writer.example.com') });
    expect(own.status).toBe(201);
    // the same domain in another organisation is fine
    expect((await t.call('POST', '/api/v1/shield/sites', { body: site('writer.example.com') })).status).toBe(201);

    const foreign = await t.call('POST', '/api/v1/shield/sites', { body: site('foreign.example.com') });
    for (const [method, body] of [['GET'], ['PATCH', { mode: 'log' }], ['DELETE']] as const) {
      const res = await t.call(method, `/api/v1/shield/sites/${foreign.body.id}`, { key: writer, body });
      expect(res.status, method).toBe(404);
    }
  });
});

describe('Shield site inspection settings', () => {
  it('gives new sites managed rules at paranoia 1 and case-insensitive paths, and takes settings on create', async () => {
    const plain = await t.call('POST', '/api/v1/shield/sites', { body: site('defaults.inspect.test') });
    expect(plain.body).toMatchObject({ path_case: 'insensitive', managed_rules: { enabled: true, paranoia_level: 1, exclusions: [] } });
    const tuned = await t.call('POST', '/api/v1/shield/sites', {
      body: site('tuned.inspect.test', { path_case: 'sensitive', managed_rules: { paranoia_level: 2, exclusions: [{ rules: ['sqli'], url_pattern: '/cms/*' }] } }),
    });
    expect(tuned.status, tuned.text).toBe(201);
    expect(tuned.body).toMatchObject({ path_case: 'sensitive', managed_rules: { enabled: true, paranoia_level: 2, exclusions: [{ rules: ['sqli'], url_pattern: '/cms/*' }] } });
    expect(tuned.body.managed_rules.exclusions[0]).not.toHaveProperty('parameter');
  });

  it('merges a managed_rules update into the stored settings, and audits it', async () => {
    const created = await t.call('POST', '/api/v1/shield/sites', { body: site('merge.inspect.test', { managed_rules: { paranoia_level: 3 } }) });
    const id = created.body.id;
    const excluded = await t.call('PATCH', `/api/v1/shield/sites/${id}`, { body: { managed_rules: { exclusions: [{ rules: ['xss'], parameter: 'body_html' }] } } });
    expect(excluded.status, excluded.text).toBe(200);
    expect(excluded.body.managed_rules).toEqual({ enabled: true, paranoia_level: 3, exclusions: [{ rules: ['xss'], parameter: 'body_html' }] });
    const off = await t.call('PATCH', `/api/v1/shield/sites/${id}`, { body: { managed_rules: { enabled: false } } });
    expect(off.body.managed_rules).toEqual({ enabled: false, paranoia_level: 3, exclusions: [{ rules: ['xss'], parameter: 'body_html' }] });
    const audit = await t.call('GET', '/api/v1/audit-log?action=shield_site.managed_rules_changed');
    const mine = audit.body.data.filter((e: { target: { id: string } }) => e.target.id === id);
    expect(mine).toHaveLength(2);
    expect(mine[0].metadata.to).toMatchObject({ enabled: false });
  });

  it('refuses bad settings with 422 naming the field, and leaves the site as it was', async () => {
    const created = await t.call('POST', '/api/v1/shield/sites', { body: site('bad.inspect.test') });
    const id = created.body.id;
    const cases: [unknown, string][] = [
      [{ managed_rules: { paranoia_level: 5 } }, 'managed_rules.paranoia_level'],
      [{ managed_rules: { exclusions: [{ rules: ['sqli', 'nosuch.rule'] }] } }, 'managed_rules.exclusions[0].rules[1]'],
      [{ managed_rules: { exclusions: [{ rules: [] }] } }, 'managed_rules.exclusions[0].rules'],
      [{ managed_rules: { exclusions: [{ rules: ['xss'], url_pattern: 'no-slash' }] } }, 'managed_rules.exclusions[0].url_pattern'],
      [{ managed_rules: { mode: 'on' } }, 'managed_rules.mode'],
      [{ path_case: 'upper' }, 'path_case'],
    ];
    for (const [body, field] of cases) {
      for (const res of [await t.call('POST', '/api/v1/shield/sites', { body: { ...site('never.inspect.test'), ...(body as object) } }), await t.call('PATCH', `/api/v1/shield/sites/${id}`, { body })]) {
        expect(res.status, JSON.stringify(body)).toBe(422);
        expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
      }
    }
    expect((await t.call('GET', `/api/v1/shield/sites/${id}`)).body).toEqual(created.body);
    expect((await t.call('GET', '/api/v1/shield/sites?domain=never.inspect.test')).body.data).toEqual([]);
  });

  it('keeps managed rules off for sites that existed before them', async () => {
    // A row as migration 0009 found it: written without the new columns.
    const orgId = (await t.call('GET', '/api/v1/orgs/current')).body.id as string;
    await t.server.database.db.insertInto('shield_sites').values({ id: 'site_legacy0000000000000000', org_id: orgId, domain: 'legacy.inspect.test', origin_url: 'http://10.0.0.9', mode: 'block', labels: '{}' }).execute();
    const legacy = await t.call('GET', '/api/v1/shield/sites/site_legacy0000000000000000');
    expect(legacy.body).toMatchObject({ path_case: 'insensitive', managed_rules: { enabled: false, paranoia_level: 1, exclusions: [] } });
  });

  it('lists the managed rules catalogue', async () => {
    const res = await t.call('GET', '/api/v1/shield/managed-rules');
    expect(res.status).toBe(200);
    expect(res.body.categories).toEqual(expect.arrayContaining(['sqli', 'xss', 'traversal', 'cmdi', 'ssrf', 'protocol']));
    for (const rule of res.body.data) {
      expect(rule.id.startsWith(`${rule.category}.`)).toBe(true);
      expect(rule.paranoia_level).toBeGreaterThanOrEqual(1);
    }
    const readOnly = await keyInOrganization(t, 'default', ['shield:read']);
    expect((await t.call('GET', '/api/v1/shield/managed-rules', { key: readOnly })).status).toBe(200);
    expect((await t.call('GET', '/api/v1/shield/managed-rules', { key: null })).status).toBe(401);
  });
});
