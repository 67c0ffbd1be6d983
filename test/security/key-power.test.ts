// Findings 4 and 7: power must never grow through a key.
//   4. An admin cannot make itself owner through its session (403), but it could mint an `admin`
//      API key and, with that key, promote itself to owner, demote and remove the owners.
//   7. A key rotated out keeps full power during its grace period: it minted new admin keys and
//      revoked its own successor.
// Written as the attacks, through HTTP against a real server. The class: a key is capped by the
// role of the person behind it at creation and at every use; owner-only actions need an owner's
// session; a rotated-out key calls the API but manages no keys, members or SSO.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setPlan } from '../../api/accounts/people/plans.ts';
import { joinOrganization } from '../support/people.ts';
import { request, startTestServer, type TestServer } from '../support/server.ts';
import { asUser, signInWithMagicLink } from '../support/sessions.ts';
import { startSmtpServer, type SmtpCapture } from '../support/smtp.ts';

let t: TestServer;
let smtp: SmtpCapture;
let ownerCookie: string;
let ownerId: string;
let adminCookie: string;
let adminId: string;

const withKey = <T = any>(key: string, method: string, path: string, body?: unknown) => request<T>(t.url, method, path, { key, ...(body === undefined ? {} : { body }) });

async function mintKey(cookie: string, scopes: string[]): Promise<{ id: string; key: string }> {
  const res = await asUser(t, cookie, 'POST', '/api/v1/api-keys', { body: { name: `key ${scopes.join(' ')}`, scopes } });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await startTestServer({ smtpUrl: smtp.url, rateLimitPerMinute: 100_000 });
  // Olivia signs up (she owns her organisation) and takes Adam on as admin.
  ownerCookie = await signInWithMagicLink(t, smtp, 'olivia@example.com');
  const me = await asUser(t, ownerCookie, 'GET', '/api/v1/me');
  ownerId = me.body.user.id;
  await setPlan(t.server.database.db, undefined, me.body.organization.id, 'pro');
  const bootstrap = await mintKey(ownerCookie, ['admin']);
  adminCookie = await joinOrganization(t, bootstrap.key, 'adam@example.com', 'admin', smtp);
  adminId = (await asUser(t, adminCookie, 'GET', '/api/v1/me')).body.user.id;
}, 60_000);

afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

describe('an admin does not become owner through a key (finding 4)', () => {
  it('the admin session is refused, and so is the admin key it mints: no promotion, no demotion or removal of the owner', async () => {
    expect((await asUser(t, adminCookie, 'PATCH', `/api/v1/orgs/current/members/${adminId}`, { body: { role: 'owner' } })).status).toBe(403);
    const { key } = await mintKey(adminCookie, ['admin']);
    const promote = await withKey(key, 'PATCH', `/api/v1/orgs/current/members/${adminId}`, { role: 'owner' });
    expect(promote.status).toBe(403);
    expect(promote.body.error.code).toBe('owner_session_required');
    expect((await withKey(key, 'PATCH', `/api/v1/orgs/current/members/${ownerId}`, { role: 'viewer' })).status).toBe(403);
    expect((await withKey(key, 'DELETE', `/api/v1/orgs/current/members/${ownerId}`)).status).toBe(403);
    expect((await withKey(key, 'POST', '/api/v1/orgs/current/invite', { email: 'sockpuppet@example.com', role: 'owner' })).status).toBe(403);
    // Not even the owner's own key holds owner powers.
    const ownerKey = await mintKey(ownerCookie, ['admin']);
    expect((await withKey(ownerKey.key, 'PATCH', `/api/v1/orgs/current/members/${adminId}`, { role: 'owner' })).status).toBe(403);

    const members = (await asUser(t, ownerCookie, 'GET', '/api/v1/orgs/current/members')).body.data as { user_id: string; role: string }[];
    expect(members.find((m) => m.user_id === ownerId)?.role).toBe('owner');
    expect(members.find((m) => m.user_id === adminId)?.role).toBe('admin');
  });

  it('a key is capped by its maker’s role at every use: demoted, its admin key is a member’s; removed, it stops working', async () => {
    const { key } = await mintKey(adminCookie, ['admin']);
    expect((await withKey(key, 'GET', '/api/v1/api-keys')).status).toBe(200);
    expect((await asUser(t, ownerCookie, 'PATCH', `/api/v1/orgs/current/members/${adminId}`, { body: { role: 'member' } })).status).toBe(200);
    const capped = await withKey(key, 'GET', '/api/v1/api-keys');
    expect(capped.status).toBe(403);
    expect((await withKey(key, 'GET', '/api/v1/me')).body.scopes.sort()).toEqual(['scans:write', 'shield:write', 'vulnerabilities:write']);
    expect((await withKey(key, 'POST', '/api/v1/shield/sites', { domain: 'capped.example.com', origin_url: 'https://origin.example.com', mode: 'log' })).status).toBe(201);
    expect((await asUser(t, ownerCookie, 'DELETE', `/api/v1/orgs/current/members/${adminId}`)).status).toBe(204);
    expect((await withKey(key, 'GET', '/api/v1/me')).status).toBe(401);
  });
});

describe('a rotated-out key manages nothing (finding 7)', () => {
  it('calls the API during its grace period, but mints no key, revokes no successor, changes no member or SSO', async () => {
    const old = await mintKey(ownerCookie, ['admin']);
    const rotated = await withKey(old.key, 'POST', `/api/v1/api-keys/${old.id}/rotate`);
    expect(rotated.status, rotated.text).toBe(201);
    const successor = rotated.body as { id: string; key: string };

    expect((await withKey(old.key, 'GET', '/api/v1/shield/sites')).status).toBe(200);
    const mint = await withKey(old.key, 'POST', '/api/v1/api-keys', { name: 'escape', scopes: ['admin'] });
    expect(mint.status).toBe(403);
    expect(mint.body.error.code).toBe('key_rotating');
    expect((await withKey(old.key, 'DELETE', `/api/v1/api-keys/${successor.id}`)).status).toBe(403);
    expect((await withKey(old.key, 'POST', `/api/v1/api-keys/${successor.id}/rotate`)).status).toBe(403);
    expect((await withKey(old.key, 'POST', '/api/v1/orgs/current/invite', { email: 'friend@example.com', role: 'admin' })).status).toBe(403);
    expect((await withKey(old.key, 'PUT', '/api/v1/orgs/current/sso', { protocol: 'oidc', issuer: 'https://idp.example.com', client_id: 'x', client_secret: 'y' })).status).toBe(403);
    expect((await withKey(old.key, 'POST', '/api/v1/orgs/current/domains', { domain: 'rotating.example' })).status).toBe(403);

    // The successor works and manages keys.
    expect((await withKey(successor.key, 'GET', `/api/v1/api-keys/${successor.id}`)).body.status).toBe('active');
    expect((await withKey(successor.key, 'POST', '/api/v1/api-keys', { name: 'fine', scopes: ['scans:read'] })).status).toBe(201);
  });
});
