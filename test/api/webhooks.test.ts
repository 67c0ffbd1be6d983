import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../api/config.ts';
import { createSecretBox, loadServerKey } from '../../platform/crypto/secret-box.ts';
import { startServer } from '../../api/server.ts';
import { openWebhookSecret } from '../../api/webhooks/store.ts';
import { keyInOrganization } from '../support/orgs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 10_000 });
});
afterAll(() => t.close());

const PATH = '/api/v1/webhooks';
const webhook = (url: string, extra: Record<string, unknown> = {}) => ({ url, events: ['scan.completed', 'vulnerability.created'], ...extra });
const SECRET = /^whsec_[A-Za-z0-9]{32,}$/;

const failingFields = (body: { error: { code: string; details: { fields?: { field: string }[] } } }) => {
  expect(body.error.code).toBe('validation_failed');
  return (body.error.details.fields ?? []).map((f) => f.field).sort();
};

const storedRow = (id: string) => t.server.database.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('webhooks', () => {
  it('round-trips create, get, list, update and delete; the secret is shown once', async () => {
    const created = await t.call('POST', PATH, { body: webhook('https://hooks.example.com/aegis', { labels: { team: 'sec' } }) });
    expect(created.status).toBe(201);
    const { secret, ...resource } = created.body;
    expect(secret).toMatch(SECRET);
    expect(resource).toEqual({
      id: expect.stringMatching(/^whk_/),
      livemode: true,
      url: 'https://hooks.example.com/aegis',
      events: ['scan.completed', 'vulnerability.created'],
      description: '',
      enabled: true,
      secret_last4: secret.slice(-4),
      labels: { team: 'sec' },
      disabled_reason: null,
      failing_since: null,
      previous_secret_expires_at: null,
      created_at: resource.created_at,
      updated_at: resource.created_at,
    });
    const id = resource.id;

    const got = await t.call('GET', `${PATH}/${id}`);
    expect(got.body).toEqual(resource);
    expect(got.text).not.toContain(secret);
    const list = await t.call('GET', PATH);
    expect(list.body.data.find((w: { id: string }) => w.id === id)).toEqual(resource);
    expect(list.text).not.toContain(secret);

    // a partial update leaves the other fields alone, and the secret with them
    const updated = await t.call('PATCH', `${PATH}/${id}`, { body: { description: 'SOC pager' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ ...resource, description: 'SOC pager', updated_at: updated.body.updated_at });
    expect(updated.text).not.toContain(secret);
    const moved = await t.call('PATCH', `${PATH}/${id}`, { body: { url: 'https://93.184.215.14:9000/hook?x=1', events: ['shield.block', 'vulnerability.*'], enabled: false, labels: {} } });
    expect(moved.body).toMatchObject({ url: 'https://93.184.215.14:9000/hook?x=1', events: ['shield.block', 'vulnerability.*'], enabled: false, labels: {}, description: 'SOC pager', secret_last4: secret.slice(-4) });
    expect(openWebhookSecret(createSecretBox(await loadServerKey(t.database.dataDir, undefined)), await storedRow(id))).toBe(secret);

    expect((await t.call('DELETE', `${PATH}/${id}`)).status).toBe(204);
    expect((await t.call('GET', `${PATH}/${id}`)).status).toBe(404);
    expect((await t.call('DELETE', `${PATH}/${id}`)).status).toBe(404);
    expect((await t.call('PATCH', `${PATH}/${id}`, { body: { enabled: true } })).status).toBe(404);
  });

  it('stores the secret sealed, never in clear: not in the row, the audit log or the logs', async () => {
    const created = await t.call('POST', PATH, { body: webhook('https://hooks.example.com/sealed') });
    const { id, secret } = created.body as { id: string; secret: string };
    const row = await storedRow(id);
    expect(row.secret_last4).toBe(secret.slice(-4));
    expect(row.secret_sealed).toMatch(/^v1\./);
    const randomPart = secret.slice('whsec_'.length);
    expect(JSON.stringify(row)).not.toContain(randomPart);
    expect(JSON.stringify(row)).not.toContain(randomPart.slice(0, 16));

    // the server sealed it under <data-dir>/secret-key, bound to the webhook id
    const box = createSecretBox(await loadServerKey(t.database.dataDir, undefined));
    expect(box.open(row.secret_sealed, id)).toBe(secret);
    expect(() => box.open(row.secret_sealed, 'whk_other')).toThrow();
    expect(() => createSecretBox(randomBytes(32)).open(row.secret_sealed, id)).toThrow();

    const audit = await t.call('GET', '/api/v1/audit-log?action=webhook.created');
    expect(audit.text).not.toContain(randomPart);
    expect(t.logs.join('\n')).not.toContain(randomPart);

    // each webhook gets its own secret
    const other = await t.call('POST', PATH, { body: webhook('https://hooks.example.com/sealed') });
    expect(other.body.secret).toMatch(SECRET);
    expect(other.body.secret).not.toBe(secret);
  });

  it('validates url, events and unknown fields', async () => {
    const cases: [Record<string, unknown>, string[]][] = [
      [webhook('https://user:pass@hooks.example.com/x'), ['url']],
      [webhook('https://token@hooks.example.com/x'), ['url']],
      [webhook('ftp://hooks.example.com/x'), ['url']],
      [webhook('hooks.example.com/x'), ['url']],
      [webhook('https://[::1/x'), ['url']],
      [webhook('https://hooks.example.com', { events: [] }), ['events']],
      [webhook('https://hooks.example.com', { events: ['scan.exploded'] }), ['events[0]']],
      [webhook('https://hooks.example.com', { events: ['ping'] }), ['events[0]']],
      [webhook('https://hooks.example.com', { events: ['finding.created'] }), ['events[0]']],
      [webhook('http://hooks.example.com/x'), ['url']],
      [webhook('https://127.0.0.1/x'), ['url']],
      [webhook('https://[::ffff:10.0.0.7]/x'), ['url']],
      [webhook('https://169.254.169.254/latest'), ['url']],
      [webhook('https://localhost:8443/x'), ['url']],
      [webhook('https://hooks.example.com', { events: ['scan.failed', 'scan.failed'] }), ['events']],
      [webhook('https://hooks.example.com', { secret: 'whsec_mine' }), ['secret']],
      [webhook('https://hooks.example.com', { enabled: 'yes' }), ['enabled']],
      [{ url: 'https://hooks.example.com' }, ['events']],
    ];
    for (const [body, fields] of cases) {
      const res = await t.call('POST', PATH, { body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(failingFields(res.body), JSON.stringify(body)).toEqual(fields);
    }

    const created = await t.call('POST', PATH, { body: webhook('https://hooks.example.com/patch') });
    const id = created.body.id;
    const { secret: _secret, ...resource } = created.body;
    for (const [body, fields] of [
      [{ url: 'https://a:b@hooks.example.com/' }, ['url']],
      [{ secret: 'whsec_mine' }, ['secret']],
      [{ secret_last4: 'abcd' }, ['secret_last4']],
      [{ events: [] }, ['events']],
    ] as [Record<string, unknown>, string[]][]) {
      const res = await t.call('PATCH', `${PATH}/${id}`, { body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(failingFields(res.body), JSON.stringify(body)).toEqual(fields);
    }
    expect((await t.call('PATCH', `${PATH}/${id}`, { body: {} })).status).toBe(422);
    expect((await t.call('GET', `${PATH}/${id}`)).body).toEqual(resource);
  });

  it('refuses private endpoints and plain http with the reason; a server allowing private targets takes them', async () => {
    const refused = await t.call('POST', PATH, { body: webhook('https://10.1.2.3/hook') });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details.fields).toEqual([{ field: 'url', message: expect.stringContaining('10.1.2.3: 10.1.2.3 is a private, loopback, link-local or reserved address') }]);
    expect(refused.body.error.message).toContain('AEGIS_ALLOW_PRIVATE_TARGETS');
    const plain = await t.call('POST', PATH, { body: webhook('http://hooks.example.com/x') });
    expect(plain.body.error.details.fields[0].message).toMatch(/must use https:\/\//);

    const allowing = await startTestServer({ allowPrivateTargets: true }, t.database);
    try {
      const local = await allowing.call('POST', PATH, { body: webhook('http://127.0.0.1:9000/hook') });
      expect(local.status, local.text).toBe(201);
      // Credentials in the URL stay refused whatever the policy.
      expect((await allowing.call('POST', PATH, { body: webhook('http://u:p@127.0.0.1:9000/hook') })).status).toBe(422);
    } finally {
      await allowing.close();
    }
  });

  it('filters by enabled and label', async () => {
    await t.call('POST', PATH, { body: webhook('https://a.example.com/h', { labels: { suite: 'filters', team: 'red' } }) });
    await t.call('POST', PATH, { body: webhook('https://b.example.com/h', { labels: { suite: 'filters', team: 'blue' }, enabled: false }) });
    await t.call('POST', PATH, { body: webhook('https://c.example.com/h', { labels: { suite: 'filters', team: 'red' }, enabled: false }) });
    const urls = async (query: string) => {
      const res = await t.call('GET', `${PATH}?${query}`);
      expect(res.status, query).toBe(200);
      expect(res.text).not.toMatch(/whsec_/);
      return res.body.data.map((w: { url: string }) => w.url).sort();
    };
    expect(await urls('label=suite:filters')).toEqual(['https://a.example.com/h', 'https://b.example.com/h', 'https://c.example.com/h']);
    expect(await urls('label=suite:filters,team:red')).toEqual(['https://a.example.com/h', 'https://c.example.com/h']);
    expect(await urls('label=suite:filters&enabled=false')).toEqual(['https://b.example.com/h', 'https://c.example.com/h']);
    expect(await urls('label=suite:filters,team:red&enabled=true')).toEqual(['https://a.example.com/h']);
    expect((await t.call('GET', `${PATH}?enabled=maybe`)).status).toBe(400);
    expect((await t.call('GET', `${PATH}?label=nocolon`)).status).toBe(400);
  });

  it('audits creation, updates and deletion without the secret or the full URL', async () => {
    const created = await t.call('POST', PATH, { body: webhook('https://hooks.example.com/services/T0/B0/tokenpart') });
    const id = created.body.id;
    await t.call('PATCH', `${PATH}/${id}`, { body: { enabled: false } });
    await t.call('DELETE', `${PATH}/${id}`);
    const audit = await t.call('GET', '/api/v1/audit-log?action=webhook.created,webhook.updated,webhook.deleted');
    const events = audit.body.data.filter((e: { target: { id: string } }) => e.target.id === id);
    expect(events.map((e: { action: string }) => e.action)).toEqual(['webhook.deleted', 'webhook.updated', 'webhook.created']);
    expect(events[2].metadata).toEqual({ host: 'hooks.example.com', events: ['scan.completed', 'vulnerability.created'], enabled: true });
    expect(events[1].metadata).toEqual({ fields: ['enabled'], host: 'hooks.example.com' });
    expect(events[0].metadata).toEqual({ host: 'hooks.example.com' });
    expect(audit.text).not.toContain('tokenpart');
    expect(audit.text).not.toContain(created.body.secret);
  });

  it('needs the admin scope; other organisations see 404', async () => {
    const otherAdmin = await keyInOrganization(t, 'webhook-team', ['admin']);
    for (const scope of ['scans:write', 'shield:write', 'vulnerabilities:write'] as const) {
      const key = await keyInOrganization(t, 'webhook-team', [scope]);
      expect((await t.call('GET', PATH, { key })).status, scope).toBe(403);
      const denied = await t.call('POST', PATH, { key, body: webhook('https://hooks.example.com/denied') });
      expect(denied.status, scope).toBe(403);
      expect(denied.body.error).toMatchObject({ code: 'forbidden', details: { required_scope: 'admin' } });
    }
    const own = await t.call('POST', PATH, { key: otherAdmin, body: webhook('https://hooks.example.com/theirs') });
    expect(own.status).toBe(201);
    const foreign = await t.call('POST', PATH, { body: webhook('https://hooks.example.com/ours') });
    for (const [method, body] of [['GET'], ['PATCH', { enabled: false }], ['DELETE']] as const) {
      const res = await t.call(method, `${PATH}/${foreign.body.id}`, { key: otherAdmin, body });
      expect(res.status, method).toBe(404);
    }
    const theirs = (await t.call('GET', `${PATH}?limit=200`, { key: otherAdmin })).body.data.map((w: { id: string }) => w.id);
    expect(theirs).toEqual([own.body.id]);
    expect((await t.call('GET', `${PATH}/${foreign.body.id}`)).body.enabled).toBe(true);
  });
});

describe('the server key', () => {
  it('comes from AEGIS_SECRET_KEY when set, and no key file is written', async () => {
    const hex = randomBytes(32).toString('hex');
    const s = await startTestServer({ secretKey: hex });
    try {
      const created = await s.call('POST', PATH, { body: webhook('https://hooks.example.com/env') });
      expect(created.status).toBe(201);
      const row = await s.server.database.db.selectFrom('webhooks').select(['id', 'secret_sealed']).where('id', '=', created.body.id).executeTakeFirstOrThrow();
      expect(openWebhookSecret(createSecretBox(Buffer.from(hex, 'hex')), row)).toBe(created.body.secret);
      expect(existsSync(join(s.database.dataDir, 'secret-key'))).toBe(false);
    } finally {
      await s.close();
    }
  });

  it('stops start-up with a clear message when AEGIS_SECRET_KEY is malformed', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'aegis-badkey-'));
    try {
      const config = { ...loadConfig({ host: '127.0.0.1', port: '0', dataDir }, { AEGIS_SECRET_KEY: 'hunter2hunter2' }) };
      expect(config.secretKey).toBe('hunter2hunter2');
      const error = await startServer(config).then(
        async (server) => {
          await server.close();
          return null;
        },
        (err: unknown) => err as Error,
      );
      expect(error?.message).toMatch(/^AEGIS_SECRET_KEY must be a 32-byte key/);
      expect(error?.message).not.toContain('hunter2');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
