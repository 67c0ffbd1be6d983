// POST /api/v1/shield/sites/:id/rules/batch: many rule writes of one site, all or nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyInOrganization } from '../support/orgs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let siteId: string;
let batch: string;
beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 100_000 });
  siteId = (await t.call('POST', '/api/v1/shield/sites', { body: { domain: 'batch.example.com', origin_url: 'http://127.0.0.1:9', mode: 'block' } })).body.id;
  batch = `/api/v1/shield/sites/${siteId}/rules/batch`;
});
afterAll(() => t.close());

const ipRule = (value: string, extra: Record<string, unknown> = {}) => ({ op: 'create', kind: 'ip_access_rule', spec: { type: 'ip', value, action: 'deny', ...extra } });
const patch = (param: string) => ({ op: 'create', kind: 'virtual_patch', spec: { url_pattern: '/search', method: 'GET', match_param: param, match_regex: '(?i)union\\s+select' } });
const limit = (path: string) => ({ op: 'create', kind: 'rate_limit_rule', spec: { identity: 'ip', url_pattern: path, method: 'POST', budget: 5, window_seconds: 10, action: 'block' } });

const count = async (collection: string) => (await t.call('GET', `/api/v1/shield/sites/${siteId}/${collection}?limit=200`)).body.data.length as number;
const counts = async () => ({ ip: await count('ip-access'), patches: await count('virtual-patches'), limits: await count('rate-limits') });
const version = async () =>
  (await t.server.database.db.selectFrom('shield_config_versions').select('version').where('site_id', '=', siteId).executeTakeFirst())?.version;

describe('rule batches', () => {
  it('creates mixed kinds in one request, in order, as the single routes would', async () => {
    const before = await counts();
    const versionBefore = await version();
    const res = await t.call('POST', batch, { body: { operations: [ipRule('192.0.2.1', { note: 'scanner' }), patch('q'), limit('/login'), ipRule('2001:DB8::/48', { type: 'cidr' })] } });
    expect(res.status).toBe(200);
    expect(res.body.counts).toEqual({ created: 4, updated: 0, deleted: 0 });
    expect(res.body.results.map((r: any) => [r.op, r.kind])).toEqual([
      ['create', 'ip_access_rule'],
      ['create', 'virtual_patch'],
      ['create', 'rate_limit_rule'],
      ['create', 'ip_access_rule'],
    ]);
    const [ip, vp, rl, cidr] = res.body.results;
    expect(ip.object).toMatchObject({ id: ip.id, site_id: siteId, type: 'ip', value: '192.0.2.1', action: 'deny', note: 'scanner', status: 'active' });
    // Defaults of the single routes: action block, no expiry; escalation 0.
    expect(vp.object).toMatchObject({ id: vp.id, action: 'block', expires_in_days: null, labels: {} });
    expect(rl.object).toMatchObject({ escalate_to_deny_minutes: 0 });
    expect(cidr.object.value).toBe('2001:DB8::/48');
    // Each object reads back through its single route exactly as the batch answered it.
    expect((await t.call('GET', `/api/v1/shield/sites/${siteId}/ip-access/${ip.id}`)).body).toEqual(ip.object);
    expect((await t.call('GET', `/api/v1/shield/sites/${siteId}/virtual-patches/${vp.id}`)).body).toEqual(vp.object);
    expect((await t.call('GET', `/api/v1/shield/sites/${siteId}/rate-limits/${rl.id}`)).body).toEqual(rl.object);
    expect(await counts()).toEqual({ ip: before.ip + 2, patches: before.patches + 1, limits: before.limits + 1 });
    // The gateway's change signal moved, as for single writes.
    expect(Number(await version())).toBeGreaterThan(Number(versionBefore ?? 0));
  });

  it('updates and deletes by id', async () => {
    const made = (await t.call('POST', batch, { body: { operations: [ipRule('198.51.100.7'), patch('term'), limit('/signup')] } })).body.results;
    const [ip, vp, rl] = made.map((r: any) => r.id);
    const res = await t.call('POST', batch, {
      body: {
        operations: [
          { op: 'update', kind: 'ip_access_rule', id: ip, spec: { action: 'challenge', note: 'changed' } },
          { op: 'update', kind: 'virtual_patch', id: vp, spec: { labels: { team: 'web' } } },
          { op: 'update', kind: 'rate_limit_rule', id: rl, spec: { budget: 50 } },
          { op: 'delete', kind: 'ip_access_rule', id: ip },
          { op: 'delete', kind: 'virtual_patch', id: vp },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.counts).toEqual({ created: 0, updated: 3, deleted: 2 });
    expect(res.body.results[0].object).toMatchObject({ id: ip, action: 'challenge', note: 'changed' });
    expect(res.body.results[1].object.labels).toEqual({ team: 'web' });
    expect(res.body.results[2].object.budget).toBe(50);
    expect(res.body.results.slice(3)).toEqual([
      { op: 'delete', kind: 'ip_access_rule', id: ip, object: null },
      { op: 'delete', kind: 'virtual_patch', id: vp, object: null },
    ]);
    expect((await t.call('GET', `/api/v1/shield/sites/${siteId}/ip-access/${ip}`)).status).toBe(404);
    expect((await t.call('GET', `/api/v1/shield/sites/${siteId}/rate-limits/${rl}`)).body.budget).toBe(50);
    // A rule deleted earlier in a batch may be created again later in it.
    const again = await t.call('POST', batch, { body: { operations: [ipRule('203.0.113.50')] } });
    const recreate = await t.call('POST', batch, { body: { operations: [{ op: 'delete', kind: 'ip_access_rule', id: again.body.results[0].id }, ipRule('203.0.113.50', { action: 'allow' })] } });
    expect(recreate.status).toBe(200);
    expect(recreate.body.results[1].object.action).toBe('allow');
  });

  it('is atomic: one bad operation anywhere stores nothing, and the error names it', async () => {
    const before = await counts();
    const versionBefore = await version();
    const good = [ipRule('192.0.2.20'), patch('a'), limit('/a')];
    const cases: [unknown, number, string, number][] = [
      // The checks of the single routes, at the operation's index.
      [ipRule('300.1.1.1'), 422, 'validation_failed', 3],
      [{ op: 'create', kind: 'virtual_patch', spec: { url_pattern: '/x', method: 'GET', match_param: 'q', match_regex: '(a)\\1' } }, 422, 'validation_failed', 3],
      [{ op: 'create', kind: 'rate_limit_rule', spec: { identity: 'ip', url_pattern: '/x', method: 'POST', budget: 0, window_seconds: 10, action: 'block' } }, 422, 'validation_failed', 3],
      [{ op: 'create', kind: 'ip_access_rule', spec: { type: 'ip', value: '192.0.2.99', action: 'deny', bogus: 1 } }, 422, 'validation_failed', 3],
      [{ op: 'update', kind: 'ip_access_rule', id: 'ipr_nope', spec: { expires_at: '2001-01-01T00:00:00Z' } }, 422, 'validation_failed', 3],
      [{ op: 'update', kind: 'virtual_patch', spec: { labels: {} } }, 422, 'validation_failed', 3],
      [{ op: 'delete', kind: 'rate_limit_rule' }, 422, 'validation_failed', 3],
      // Unknown ids: 404, as the single routes.
      [{ op: 'delete', kind: 'ip_access_rule', id: 'ipr_does_not_exist' }, 404, 'not_found', 3],
      [{ op: 'update', kind: 'rate_limit_rule', id: 'rl_does_not_exist', spec: { budget: 3 } }, 404, 'not_found', 3],
      // Conflicts: 409, with an existing rule or within the batch.
      [ipRule('192.0.2.1'), 409, 'conflict', 3],
      [ipRule('192.0.2.20'), 409, 'conflict', 3],
    ];
    for (const [bad, status, code, index] of cases) {
      const res = await t.call('POST', batch, { body: { operations: [...good, bad] } });
      expect(res.status, JSON.stringify(bad)).toBe(status);
      expect(res.body.error.code).toBe(code);
      expect(res.body.error.details.operation).toBe(index);
      expect(res.body.error.message).toMatch(new RegExp(`^operation ${index} `));
    }
    // The bad one first: same answer, index 0.
    const first = await t.call('POST', batch, { body: { operations: [ipRule('not-an-ip'), ...good] } });
    expect(first.status).toBe(422);
    expect(first.body.error.details).toMatchObject({ operation: 0, op: 'create', kind: 'ip_access_rule', fields: [{ field: 'value' }] });
    expect(await counts()).toEqual(before);
    expect(await version()).toBe(versionBefore);
  });

  it('takes at most 1 000 operations and refuses malformed ones in the envelope', async () => {
    const many = Array.from({ length: 1001 }, (_, i) => ipRule(`10.9.${i >> 8}.${i & 255}`));
    const tooMany = await t.call('POST', batch, { body: { operations: many } });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.error.code).toBe('validation_failed');
    expect(tooMany.body.error.message).toMatch(/1000/);
    for (const body of [{}, { operations: [] }, { operations: [{ op: 'upsert', kind: 'ip_access_rule' }] }, { operations: [{ op: 'create', kind: 'webhook', spec: {} }] }]) {
      const res = await t.call('POST', batch, { body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.error.code).toBe('validation_failed');
    }
    // Exactly 1 000 go through in one request.
    const before = await count('ip-access');
    const ok = await t.call('POST', batch, { body: { operations: many.slice(0, 1000) } });
    expect(ok.status).toBe(200);
    expect(ok.body.counts.created).toBe(1000);
    const listed = (await t.call('GET', `/api/v1/shield/sites/${siteId}/ip-access?type=ip&limit=200`)).body;
    expect(listed.pagination.next).not.toBeNull();
    expect(before).toBeLessThanOrEqual(200);
    // Clean up so later tests count small lists.
    const del = await t.call('POST', batch, { body: { operations: ok.body.results.map((r: any) => ({ op: 'delete', kind: 'ip_access_rule', id: r.id })) } });
    expect(del.body.counts.deleted).toBe(1000);
  });

  it('replays under the same Idempotency-Key without applying twice', async () => {
    const before = await count('virtual-patches');
    const body = { operations: [patch('idem-1'), patch('idem-2')] };
    const headers = { 'idempotency-key': 'batch-key-1' };
    const first = await t.call('POST', batch, { body, headers });
    const second = await t.call('POST', batch, { body, headers });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(await count('virtual-patches')).toBe(before + 2);
    const reused = await t.call('POST', batch, { body: { operations: [patch('idem-3')] }, headers });
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
  });

  it('records one audit entry with the counts', async () => {
    const made = (await t.call('POST', batch, { body: { operations: [ipRule('192.0.2.77'), limit('/audit')] } })).body.results;
    const res = await t.call('POST', batch, {
      body: { operations: [patch('audit'), { op: 'update', kind: 'rate_limit_rule', id: made[1].id, spec: { budget: 9 } }, { op: 'delete', kind: 'ip_access_rule', id: made[0].id }] },
    });
    expect(res.status).toBe(200);
    const log = (await t.call('GET', '/api/v1/audit-log?limit=200')).body.data as any[];
    const entries = log.filter((e) => e.action === 'shield_rules.batch_applied');
    // One per successful batch so far in this file; the latest is this one.
    const latest = entries[0];
    expect(latest.target).toEqual({ type: 'shield_site', id: siteId });
    expect(latest.metadata).toMatchObject({
      site_id: siteId,
      operations: 3,
      created: 1,
      updated: 1,
      deleted: 1,
      kinds: { virtual_patch: { created: 1, updated: 0, deleted: 0 }, rate_limit_rule: { created: 0, updated: 1, deleted: 0 }, ip_access_rule: { created: 0, updated: 0, deleted: 1 } },
    });
    // No per-rule entries for the batch's creates.
    expect(log.filter((e) => e.action === 'virtual_patch.created' && e.created_at >= latest.created_at)).toEqual([]);
    // A failed batch leaves no entry.
    const countBefore = entries.length;
    await t.call('POST', batch, { body: { operations: [patch('audit-2'), ipRule('bad value')] } });
    const after = ((await t.call('GET', '/api/v1/audit-log?limit=200')).body.data as any[]).filter((e) => e.action === 'shield_rules.batch_applied');
    expect(after.length).toBe(countBefore);
  });

  it('needs shield:write, and another organisation sees neither the site nor its rules', async () => {
    const reader = (await t.call('POST', '/api/v1/api-keys', { body: { name: 'batch-reader', scopes: ['shield:read'] } })).body.key;
    const denied = await t.call('POST', batch, { key: reader, body: { operations: [patch('scope')] } });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('forbidden');

    const other = await keyInOrganization(t, 'batch-other-org', ['shield:write', 'shield:read']);
    const foreign = await t.call('POST', batch, { key: other, body: { operations: [patch('foreign')] } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    // Its own site cannot reach this site's rules by id either.
    const ownSite = (await t.call('POST', '/api/v1/shield/sites', { key: other, body: { domain: 'batch-other.example.com', origin_url: 'http://127.0.0.1:9', mode: 'block' } })).body.id;
    const mine = (await t.call('POST', batch, { body: { operations: [ipRule('192.0.2.88')] } })).body.results[0].id;
    const steal = await t.call('POST', `/api/v1/shield/sites/${ownSite}/rules/batch`, { key: other, body: { operations: [{ op: 'delete', kind: 'ip_access_rule', id: mine }] } });
    expect(steal.status).toBe(404);
    expect(steal.body.error.details.operation).toBe(0);
    expect((await t.call('GET', `/api/v1/shield/sites/${siteId}/ip-access/${mine}`)).status).toBe(200);
    expect((await t.call('POST', batch, { key: null, body: { operations: [patch('anon')] } })).status).toBe(401);
  });

  it('is documented in the served OpenAPI document', async () => {
    const doc = (await t.call('GET', '/api/v1/openapi.json', { key: null })).body;
    const op = doc.paths['/api/v1/shield/sites/{id}/rules/batch']?.post;
    expect(op).toBeDefined();
    expect(op['x-required-scope']).toBe('shield:write');
    const body = op.requestBody.content['application/json'].schema;
    expect(body.properties.operations.maxItems).toBe(1000);
    expect(body.properties.operations.items.properties.kind.enum).toEqual(['ip_access_rule', 'virtual_patch', 'rate_limit_rule']);
    for (const status of ['200', '404', '409', '422', '429']) expect(op.responses[status], status).toBeDefined();
  });
});
