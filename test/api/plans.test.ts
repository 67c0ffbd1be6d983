// Plan gates through HTTP: an admin API key needs pro or enterprise (403 plan_required naming them);
// a plan change — setPlan, or `aegis orgs set-plan` — takes effect at once.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { setPlan } from '../../api/accounts/people/plans.ts';
import { runAegis } from '../support/cli.ts';
import { cloneDatabase } from '../support/database-template.ts';
import { request, startTestServer, type TestServer } from '../support/server.ts';
import { startSmtpServer, type SmtpCapture } from '../support/smtp.ts';
import { asUser, signInWithMagicLink } from '../support/sessions.ts';

let t: TestServer;
let smtp: SmtpCapture;
beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await startTestServer({ smtpUrl: smtp.url, rateLimitPerMinute: 10_000 });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

const adminKey = { name: 'automation', scopes: ['admin'] };

describe('plan gates', () => {
  it('an admin key on trial: 403 plan_required naming the plans; other keys work; after an upgrade it works at once', async () => {
    // A new sign-up owns a new organisation on trial.
    const owner = await signInWithMagicLink(t, smtp, 'trialist@example.com');
    const me = await asUser(t, owner, 'GET', '/api/v1/me');
    expect(me.body.organization.plan).toBe('trial');
    const orgId: string = me.body.organization.id;

    const refused = await asUser(t, owner, 'POST', '/api/v1/api-keys', { body: adminKey });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'plan_required', details: { plan: 'trial', required_plans: ['pro', 'enterprise'] } });
    expect(refused.body.error.message).toMatch(/admin API key needs the pro or enterprise plan/);

    // Keys without admin are not gated.
    const reader = await asUser(t, owner, 'POST', '/api/v1/api-keys', { body: { name: 'ci', scopes: ['shield:write', 'scans:read'] } });
    expect(reader.status).toBe(201);

    expect(await setPlan(t.server.database.db, undefined, orgId, 'pro')).toBe(true);
    const created = await asUser(t, owner, 'POST', '/api/v1/api-keys', { body: adminKey });
    expect(created.status, created.text).toBe(201);
    expect(created.body.scopes).toEqual(['admin']);

    // A downgrade gates the next key at once too (keys already made keep working).
    await setPlan(t.server.database.db, undefined, orgId, 'trial');
    expect((await asUser(t, owner, 'POST', '/api/v1/api-keys', { body: adminKey })).status).toBe(403);
    expect((await request(t.url, 'GET', '/api/v1/me', { key: created.body.key })).status).toBe(200);
  });

  it('aegis orgs set-plan changes the plan in the database (audited), and refuses unknown plans and organisations', async () => {
    const db = await cloneDatabase(inject('databaseTemplate'));
    const env = { DATABASE_URL: db.databaseUrl ?? '' };
    try {
      const bad = await runAegis(['orgs', 'set-plan', '--org', 'default', '--plan', 'gold', '--data-dir', db.dataDir], env);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('aegis orgs set-plan: --plan takes one of trial, pro, enterprise; not gold');
      const missing = await runAegis(['orgs', 'set-plan', '--org', 'nowhere', '--plan', 'pro', '--data-dir', db.dataDir], env);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('no organisation nowhere');

      // The first start makes organisation default (bootstrap); the command runs while it is stopped.
      await (await startTestServer({}, db)).close();
      const set = await runAegis(['orgs', 'set-plan', '--org', 'default', '--plan', 'pro', '--data-dir', db.dataDir], env);
      expect(set.stderr).toMatch(/organisation default: plan \w+ → pro|already on pro/);
      expect(set.code).toBe(0);
      const again = await runAegis(['orgs', 'set-plan', '--org', 'default', '--plan', 'pro', '--data-dir', db.dataDir], env);
      expect(again.stderr).toContain('organisation default is already on pro');

      const s = await startTestServer({}, db);
      try {
        expect((await s.call('GET', '/api/v1/orgs/current')).body.plan).toBe('pro');
        expect((await s.call('POST', '/api/v1/api-keys', { body: adminKey })).status).toBe(201);
        const audit = await s.call('GET', '/api/v1/audit-log?action=organization.plan_changed');
        expect(audit.body.data).toHaveLength(set.stderr.includes('already') ? 0 : 1);
        for (const e of audit.body.data) expect(e).toMatchObject({ actor: { type: 'system', id: 'cli' }, metadata: { to: 'pro', via: 'aegis orgs set-plan' } });
      } finally {
        await s.close();
      }
    } finally {
      rmSync(db.dataDir, { recursive: true, force: true });
    }
  }, 180_000);

  it.skipIf(!process.env.DATABASE_URL)('on PostgreSQL, aegis orgs set-plan works while the API runs, at once', async () => {
    const env = { DATABASE_URL: t.database.databaseUrl ?? '' };
    const owner = await signInWithMagicLink(t, smtp, 'upgrader@example.com');
    const slug: string = (await asUser(t, owner, 'GET', '/api/v1/me')).body.organization.slug;
    expect((await asUser(t, owner, 'POST', '/api/v1/api-keys', { body: adminKey })).status).toBe(403);
    const set = await runAegis(['orgs', 'set-plan', '--org', slug, '--plan', 'enterprise', '--data-dir', t.database.dataDir], env);
    expect(set.code, set.stderr).toBe(0);
    expect((await asUser(t, owner, 'POST', '/api/v1/api-keys', { body: adminKey })).status).toBe(201);
    // The announcement reaches the running API: cached sessions show the new plan.
    await expect.poll(async () => (await asUser(t, owner, 'GET', '/api/v1/me')).body.organization.plan, { timeout: 5000 }).toBe('enterprise');
  });
});
