// Isolation between organisations, route by route: one world of objects is made in each of two
// organisations through the API (the same Shield domain in both), then every route of the served
// OpenAPI document that names an object — organisation-level ones included (members, invites,
// domains) — is called with one organisation's admin key on the other's objects. Every answer must
// be 404, both ways, and the objects must be unchanged afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProviderSettings } from '../../api/integrations/providers/settings.ts';
import { setPlan } from '../../api/accounts/people/plans.ts';
import { BODIES, populateWorld, probeRoutes, RAW_BODIES, startWorldFixtures, type World, type WorldFixtures } from '../support/object-world.ts';
import { keyInOrganization } from '../support/orgs.ts';
import { joinOrganization } from '../support/people.ts';
import { startGithubStandIn, type GithubStandIn } from '../support/providers/github/index.ts';
import { request, startTestServer, type TestServer } from '../support/server.ts';

type Org = 'a' | 'b';

let t: TestServer;
let fixtures: WorldFixtures;
let github: GithubStandIn;
const worlds = {} as Record<Org, World>;
const other = (org: Org): Org => (org === 'a' ? 'b' : 'a');

beforeAll(async () => {
  fixtures = await startWorldFixtures();
  github = await startGithubStandIn();
  t = await startTestServer({ allowLocalSources: true, allowPrivateTargets: true, rateLimitPerMinute: 1_000_000, providers: { ...loadProviderSettings({}), github: github.settings } });
  const keys: Record<Org, string> = { a: t.adminKey, b: await keyInOrganization(t, 'other-org', ['admin']) };
  for (const org of ['a', 'b'] as const) {
    const me = await request<any>(t.url, 'GET', '/api/v1/me', { key: keys[org] });
    await setPlan(t.server.database.db, undefined, me.body.organization.id, 'pro');
    await joinOrganization(t, keys[org], `member-${org}@example.com`, 'member');
    worlds[org] = await populateWorld(t, fixtures, keys[org], { label: `org-${org}`, github, people: true });
  }
}, 240_000);

afterAll(async () => {
  await t?.close();
  await github?.close();
  await fixtures?.close();
});

describe('organisations, route by route', () => {
  it("every route that names an object answers 404 for the other organisation's object, both ways", async () => {
    const leaks: string[] = [];
    let checked: string[] = [];
    for (const org of ['a', 'b'] as const) {
      const probe = await probeRoutes(t, worlds[other(org)], (method, path, options) => request(t.url, method, path, { key: worlds[org].key, ...options }), { organisationLevel: true });
      leaks.push(...probe.leaks.map((leak) => `org ${org} key: ${leak}`));
      checked = probe.checked;
    }
    expect(leaks).toEqual([]);
    for (const op of [...Object.keys(BODIES), ...Object.keys(RAW_BODIES)]) expect(checked).toContain(op);
    for (const op of ['PATCH /api/v1/orgs/current/members/{user_id}', 'DELETE /api/v1/orgs/current/invites/{id}', 'POST /api/v1/orgs/current/domains/{id}/verify']) expect(checked).toContain(op);
    expect(checked.length).toBeGreaterThan(60);
  }, 180_000);

  it("the other organisation's objects are still there, unchanged by those calls", async () => {
    for (const org of ['a', 'b'] as const) {
      const w = worlds[org];
      const as = (path: string) => request<any>(t.url, 'GET', path, { key: w.key });
      expect((await as(`/api/v1/shield/sites/${w.site}`)).body).toMatchObject({ mode: 'block' });
      expect((await as(`/api/v1/shield/sites/${w.site}/ip-access`)).body.data).toHaveLength(1);
      expect((await as(`/api/v1/vulnerabilities/${w.vulnerability}`)).body.status).toBe('open');
      expect((await as('/api/v1/orgs/current/members')).body.data.find((m: { user_id: string }) => m.user_id === w.member)?.role).toBe('member');
      expect((await as(`/api/v1/orgs/current/domains/${w.domain}`)).status).toBe(200);
      expect((await as('/api/v1/orgs/current/invites?status=pending')).body.data.map((i: { id: string }) => i.id)).toContain(w.invite);
    }
  });

  it('lists show only the caller’s organisation', async () => {
    const lists = ['/api/v1/shield/sites', '/api/v1/scan-schedules', '/api/v1/webhooks', '/api/v1/scans', '/api/v1/vulnerabilities', '/api/v1/config-repos', '/api/v1/events', '/api/v1/audit-log', '/api/v1/api-keys', '/api/v1/integrations', '/api/v1/orgs/current/domains', '/api/v1/orgs/current/invites'];
    for (const org of ['a', 'b'] as const) {
      const theirs = new Set(Object.values(worlds[other(org)]));
      for (const list of lists) {
        const res = await request<any>(t.url, 'GET', `${list}?limit=200`, { key: worlds[org].key });
        expect(res.status, `${list}: ${res.text}`).toBe(200);
        for (const item of res.body.data as { id: string }[]) expect(theirs.has(item.id), `org ${org} ${list} shows ${item.id}`).toBe(false);
      }
    }
  });
});
