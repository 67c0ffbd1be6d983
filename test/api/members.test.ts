// Members, invites and roles through HTTP, with real mail: invite → mail → accept (signed in, or a
// new address through the link's page) → member listed with its role; what roles may do; the owner
// rules; role changes audited and effective at once for open sessions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { request, startTestServer, type TestServer } from '../support/server.ts';
import { linkIn, startSmtpServer, type SmtpCapture } from '../support/smtp.ts';
import { asUser, sessionCookieFrom, signInWithMagicLink } from '../support/sessions.ts';

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

const site = (domain: string) => ({ domain, origin_url: 'https://origin.example.net', mode: 'block' });

/** Invites `email` with `role` (as the default organisation's admin key unless `as` says otherwise) and returns the invite and the token from the mail. */
async function invite(email: string, role: string, as: { cookie?: string } = {}): Promise<{ invite: any; token: string; link: string }> {
  const since = Date.now();
  const res = as.cookie
    ? await asUser(t, as.cookie, 'POST', '/api/v1/orgs/current/invite', { body: { email, role } })
    : await t.call('POST', '/api/v1/orgs/current/invite', { body: { email, role } });
  expect(res.status, res.text).toBe(201);
  const mail = await smtp.waitFor(email, (m) => m.text.includes('/auth/invite'), since);
  const link = linkIn(mail, `${t.url}/auth/invite`);
  return { invite: res.body, token: new URL(link).searchParams.get('token') ?? '', link };
}

/** A new address joins through the link's page (a form post, as a browser makes it): returns its session cookie. */
async function joinThroughPage(token: string): Promise<string> {
  const res = await fetch(`${t.url}/auth/invite/accept`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
  });
  expect(res.status, await res.text()).toBe(303);
  expect(res.headers.get('location')).toBe('/api/v1/me');
  const cookie = sessionCookieFrom(res.headers);
  expect(cookie).toBeTruthy();
  return cookie ?? '';
}

async function members(): Promise<any[]> {
  const res = await t.call('GET', '/api/v1/orgs/current/members?limit=200');
  expect(res.status).toBe(200);
  return res.body.data;
}

async function userId(cookie: string): Promise<string> {
  return (await asUser(t, cookie, 'GET', '/api/v1/me')).body.user.id;
}

describe('invites', () => {
  it('a new address: invite → mail → link page → join → listed with its role, signed in to the organisation', async () => {
    const { invite: created, token, link } = await invite('Vera@Example.com', 'viewer');
    expect(created).toMatchObject({ email: 'vera@example.com', role: 'viewer', status: 'pending', invited_by: { type: 'api_key' } });
    expect(created).not.toHaveProperty('token');
    expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBeGreaterThan(7 * 24 * 3600 * 1000 - 60_000);

    // Following the link (what a mail scanner does) shows a button and uses nothing up.
    const page = await fetch(link);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<form method="post" action="/auth/invite/accept">');
    expect(html).toContain('Join Default');

    const cookie = await joinThroughPage(token);
    const me = await asUser(t, cookie, 'GET', '/api/v1/me');
    expect(me.body).toMatchObject({ type: 'session', user: { email: 'vera@example.com' }, organization: { slug: 'default' }, role: 'viewer', scopes: ['scans:read', 'vulnerabilities:read', 'shield:read'] });
    // Joined by invite: no organisation of its own.
    expect(me.body.memberships).toHaveLength(1);

    expect(await members()).toContainEqual(expect.objectContaining({ email: 'vera@example.com', role: 'viewer', user_id: me.body.user.id, last_login_at: expect.any(String) }));
    const accepted = await t.call('GET', '/api/v1/orgs/current/invites?status=accepted');
    expect(accepted.body.data.map((i: { id: string }) => i.id)).toContain(created.id);
    const audit = await t.call('GET', '/api/v1/audit-log?action=invite.sent,invite.accepted');
    expect(audit.body.data.filter((e: any) => e.target.id === created.id).map((e: any) => e.action).sort()).toEqual(['invite.accepted', 'invite.sent']);

    // The link works once.
    const again = await request<any>(t.url, 'POST', '/auth/invite/accept', { body: { token } });
    expect(again.status).toBe(401);
    expect(again.body.error.details.reason).toBe('used');
  });

  it('a signed-in person accepts with POST /api/v1/me/invites/accept and is listed as a member', async () => {
    const cookie = await signInWithMagicLink(t, smtp, 'mia@example.com');
    const { token } = await invite('mia@example.com', 'member');
    const accepted = await asUser(t, cookie, 'POST', '/api/v1/me/invites/accept', { body: { token } });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body).toMatchObject({ organization: { slug: 'default' }, role: 'member' });
    expect(await members()).toContainEqual(expect.objectContaining({ email: 'mia@example.com', role: 'member' }));
    // The session stays where it was until the person switches.
    const me = await asUser(t, cookie, 'GET', '/api/v1/me');
    expect(me.body.role).toBe('owner');
    expect(me.body.memberships.map((m: any) => [m.organization.slug, m.role])).toContainEqual(['default', 'member']);
  });

  it('an invite for another address: 403 naming why; unusable tokens: 401 with the reason', async () => {
    const cookie = await signInWithMagicLink(t, smtp, 'nosy@example.com');
    const { token } = await invite('someone-else@example.com', 'admin');
    const other = await asUser(t, cookie, 'POST', '/api/v1/me/invites/accept', { body: { token } });
    expect(other.status).toBe(403);
    expect(other.body.error.message).toMatch(/another e-mail address/);

    // expired
    const expired = await invite('late@example.com', 'viewer');
    await t.server.database.db.updateTable('invites').set({ expires_at: sql<Date>`now() - interval '1 minute'` }).where('id', '=', expired.invite.id).execute();
    const lateCookie = await signInWithMagicLink(t, smtp, 'late@example.com');
    const late = await asUser(t, lateCookie, 'POST', '/api/v1/me/invites/accept', { body: { token: expired.token } });
    expect(late.status).toBe(401);
    expect(late.body.error).toMatchObject({ code: 'unauthorized', details: { reason: 'expired' } });
    expect(late.body.error.message).toMatch(/expired/);
    const latePage = await fetch(expired.link);
    expect(latePage.status).toBe(401);
    expect(await latePage.text()).toContain('expired');
    const lateJoin = await request<any>(t.url, 'POST', '/auth/invite/accept', { body: { token: expired.token } });
    expect(lateJoin.body.error.details.reason).toBe('expired');
    const listed = await t.call('GET', '/api/v1/orgs/current/invites?status=expired');
    expect(listed.body.data.map((i: any) => i.id)).toContain(expired.invite.id);

    // revoked
    const revoked = await invite('gone@example.com', 'viewer');
    const del = await t.call('DELETE', `/api/v1/orgs/current/invites/${revoked.invite.id}`);
    expect(del.status).toBe(200);
    expect(del.body.status).toBe('revoked');
    const usedRevoked = await request<any>(t.url, 'POST', '/auth/invite/accept', { body: { token: revoked.token } });
    expect(usedRevoked.status).toBe(401);
    expect(usedRevoked.body.error.details.reason).toBe('revoked');

    // forged
    for (const token of ['x', 'A'.repeat(43)]) {
      const forged = await asUser(t, cookie, 'POST', '/api/v1/me/invites/accept', { body: { token } });
      expect(forged.status).toBe(401);
      expect(forged.body.error.details.reason).toBe('invalid');
    }
  });

  it("another organisation's invite cannot be revoked (404); a member cannot be invited again (409); a new invite replaces a pending one", async () => {
    const ownerCookie = await signInWithMagicLink(t, smtp, 'founder@example.com');
    const theirs = await invite('friend@example.com', 'viewer', { cookie: ownerCookie });
    expect(theirs.invite.invited_by.type).toBe('user');
    expect((await t.call('DELETE', `/api/v1/orgs/current/invites/${theirs.invite.id}`)).status).toBe(404);
    expect((await asUser(t, ownerCookie, 'GET', '/api/v1/orgs/current/invites')).body.data[0].status).toBe('pending');

    const dup = await t.call('POST', '/api/v1/orgs/current/invite', { body: { email: 'VERA@example.com', role: 'admin' } });
    expect(dup.status).toBe(409);
    expect(dup.body.error.message).toMatch(/already a member/);

    const first = await invite('twice@example.com', 'viewer');
    const second = await invite('twice@example.com', 'member');
    const statuses = (await t.call('GET', '/api/v1/orgs/current/invites?limit=200')).body.data.filter((i: any) => i.email === 'twice@example.com');
    expect(statuses.map((i: any) => [i.id, i.status])).toEqual([
      [second.invite.id, 'pending'],
      [first.invite.id, 'revoked'],
    ]);
    const bad = await t.call('GET', '/api/v1/orgs/current/invites?status=lost');
    expect(bad.status).toBe(400);
  });
});

describe('the invite link in a JSON client, and organisations that enforce SSO', () => {
  it('JSON gets the account and a session; an SSO-enforcing organisation keeps the membership but sends the person to its identity provider', async () => {
    const { token } = await invite('json@example.com', 'member');
    const joined = await request<any>(t.url, 'POST', '/auth/invite/accept', { body: { token } });
    expect(joined.status, joined.text).toBe(200);
    expect(joined.body).toMatchObject({ user: { email: 'json@example.com' }, organization_id: expect.stringMatching(/^org_/) });
    expect((await asUser(t, sessionCookieFrom(joined.headers) ?? '', 'GET', '/api/v1/me')).body.role).toBe('member');

    const owner = await signInWithMagicLink(t, smtp, 'strict@example.com');
    const orgId = (await asUser(t, owner, 'GET', '/api/v1/me')).body.organization.id;
    const strict = await invite('newcomer@example.com', 'viewer', { cookie: owner });
    await t.server.database.db.insertInto('sso_connections').values({ org_id: orgId, protocol: 'oidc', enforced: true }).execute();
    const refused = await request<any>(t.url, 'POST', '/auth/invite/accept', { body: { token: strict.token } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('sso_required');
    expect(sessionCookieFrom(refused.headers)).toBeUndefined();
    const listed = await t.server.database.db.selectFrom('memberships').innerJoin('users', 'users.id', 'memberships.user_id').select(['users.email', 'memberships.role']).where('org_id', '=', orgId).execute();
    expect(listed).toContainEqual({ email: 'newcomer@example.com', role: 'viewer' });
  });
});

describe('roles', () => {
  let viewerCookie: string;
  let adminCookie: string;
  beforeAll(async () => {
    viewerCookie = await joinThroughPage((await invite('watcher@example.com', 'viewer')).token);
    adminCookie = await joinThroughPage((await invite('boss@example.com', 'admin')).token);
  });

  it('a viewer cannot create a Shield site; an admin can; a viewer cannot manage members', async () => {
    const denied = await asUser(t, viewerCookie, 'POST', '/api/v1/shield/sites', { body: site('viewer.example.com') });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'forbidden', details: { required_scope: 'shield:write' } });
    expect((await asUser(t, viewerCookie, 'GET', '/api/v1/shield/sites')).status).toBe(200);
    expect((await asUser(t, viewerCookie, 'GET', '/api/v1/orgs/current/members')).status).toBe(403);
    expect((await asUser(t, adminCookie, 'POST', '/api/v1/shield/sites', { body: site('admin.example.com') })).status).toBe(201);
    expect((await asUser(t, adminCookie, 'GET', '/api/v1/orgs/current/members')).status).toBe(200);
  });

  it('a role change is audited with the person who made it and applies at once to open sessions', async () => {
    const watcher = await userId(viewerCookie);
    const boss = await userId(adminCookie);
    const changed = await asUser(t, adminCookie, 'PATCH', `/api/v1/orgs/current/members/${watcher}`, { body: { role: 'member' } });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ user_id: watcher, email: 'watcher@example.com', role: 'member' });

    // The member's existing session sees the new role on its next request.
    expect((await asUser(t, viewerCookie, 'GET', '/api/v1/me')).body.role).toBe('member');
    expect((await asUser(t, viewerCookie, 'POST', '/api/v1/shield/sites', { body: site('promoted.example.com') })).status).toBe(201);

    const audit = await t.call('GET', '/api/v1/audit-log?action=member.role_changed');
    expect(audit.body.data[0]).toMatchObject({
      action: 'member.role_changed',
      actor: { type: 'user', id: boss },
      target: { type: 'user', id: watcher },
      metadata: { from: 'viewer', to: 'member', email: 'watcher@example.com' },
    });

    // And back down: the write is refused at once.
    expect((await asUser(t, adminCookie, 'PATCH', `/api/v1/orgs/current/members/${watcher}`, { body: { role: 'viewer' } })).status).toBe(200);
    expect((await asUser(t, viewerCookie, 'POST', '/api/v1/shield/sites', { body: site('demoted.example.com') })).status).toBe(403);
  });

  it('unknown members and other organisations’ members: 404; bad roles: 422', async () => {
    expect((await t.call('PATCH', '/api/v1/orgs/current/members/usr_00000000000000000000000000', { body: { role: 'admin' } })).status).toBe(404);
    const outsider = await signInWithMagicLink(t, smtp, 'outsider@example.com');
    const outsiderId = await userId(outsider);
    expect((await t.call('PATCH', `/api/v1/orgs/current/members/${outsiderId}`, { body: { role: 'admin' } })).status).toBe(404);
    expect((await t.call('DELETE', `/api/v1/orgs/current/members/${outsiderId}`)).status).toBe(404);
    const watcher = await userId(viewerCookie);
    expect((await t.call('PATCH', `/api/v1/orgs/current/members/${watcher}`, { body: { role: 'root' } })).status).toBe(422);
  });

  it('only an owner’s session grants or takes away owner (never a key, never an admin), but an ownerless organisation gets its first owner from an admin', async () => {
    const watcher = await userId(viewerCookie);
    const boss = await userId(adminCookie);
    // The default organisation of a self-hosted install has no owner: its admin names the first.
    expect((await asUser(t, adminCookie, 'PATCH', `/api/v1/orgs/current/members/${watcher}`, { body: { role: 'owner' } })).body.role).toBe('owner');

    // From then on neither an admin session nor any key may grant, take away or remove owner.
    const grant = await asUser(t, adminCookie, 'PATCH', `/api/v1/orgs/current/members/${boss}`, { body: { role: 'owner' } });
    expect(grant.status).toBe(403);
    expect(grant.body.error).toMatchObject({ code: 'owner_session_required', details: { required_role: 'owner' } });
    expect(grant.body.error.message).toMatch(/only an owner/);
    expect((await asUser(t, adminCookie, 'POST', '/api/v1/orgs/current/invite', { body: { email: 'wannabe@example.com', role: 'owner' } })).status).toBe(403);
    const byKey = await t.call('PATCH', `/api/v1/orgs/current/members/${boss}`, { body: { role: 'owner' } });
    expect(byKey.status).toBe(403);
    expect(byKey.body.error.message).toMatch(/API key never holds owner powers/);
    expect((await t.call('PATCH', `/api/v1/orgs/current/members/${watcher}`, { body: { role: 'viewer' } })).status).toBe(403);
    expect((await asUser(t, adminCookie, 'PATCH', `/api/v1/orgs/current/members/${watcher}`, { body: { role: 'viewer' } })).status).toBe(403);
    expect((await asUser(t, adminCookie, 'DELETE', `/api/v1/orgs/current/members/${watcher}`)).status).toBe(403);
    expect((await t.call('DELETE', `/api/v1/orgs/current/members/${watcher}`)).status).toBe(403);

    // An owner session may grant it, and take it away from someone else... but not leave the organisation ownerless.
    expect((await asUser(t, viewerCookie, 'PATCH', `/api/v1/orgs/current/members/${boss}`, { body: { role: 'owner' } })).status).toBe(200);
    expect((await asUser(t, adminCookie, 'PATCH', `/api/v1/orgs/current/members/${watcher}`, { body: { role: 'viewer' } })).status).toBe(200);
    expect((await asUser(t, adminCookie, 'PATCH', `/api/v1/orgs/current/members/${boss}`, { body: { role: 'admin' } })).status).toBe(409);
  });

  it('the last owner can be neither demoted nor removed (409); with a second owner, both work', async () => {
    const founder = await signInWithMagicLink(t, smtp, 'solo@example.com');
    const me = await asUser(t, founder, 'GET', '/api/v1/me');
    expect(me.body.role).toBe('owner');
    const id = me.body.user.id;
    const demote = await asUser(t, founder, 'PATCH', `/api/v1/orgs/current/members/${id}`, { body: { role: 'admin' } });
    expect(demote.status).toBe(409);
    expect(demote.body.error).toMatchObject({ code: 'conflict', details: { reason: 'last_owner' } });
    expect(demote.body.error.message).toMatch(/last owner/);
    expect((await asUser(t, founder, 'DELETE', `/api/v1/orgs/current/members/${id}`)).status).toBe(409);

    const cofounderCookie = await joinThroughPage((await invite('cofounder@example.com', 'owner', { cookie: founder })).token);
    expect((await asUser(t, cofounderCookie, 'GET', '/api/v1/me')).body.role).toBe('owner');
    expect((await asUser(t, founder, 'PATCH', `/api/v1/orgs/current/members/${id}`, { body: { role: 'admin' } })).body.role).toBe('admin');
    expect((await asUser(t, cofounderCookie, 'DELETE', `/api/v1/orgs/current/members/${id}`)).status).toBe(204);
  });

  it('removing a member takes effect at once and is audited', async () => {
    const cookie = await joinThroughPage((await invite('leaver@example.com', 'member')).token);
    const id = await userId(cookie);
    expect((await asUser(t, cookie, 'GET', '/api/v1/shield/sites')).status).toBe(200);
    expect((await asUser(t, adminCookie, 'DELETE', `/api/v1/orgs/current/members/${id}`)).status).toBe(204);
    expect((await asUser(t, cookie, 'GET', '/api/v1/shield/sites')).status).toBe(401);
    expect((await members()).map((m) => m.user_id)).not.toContain(id);
    const audit = await t.call('GET', '/api/v1/audit-log?action=member.removed');
    expect(audit.body.data[0]).toMatchObject({ target: { type: 'user', id }, metadata: { email: 'leaver@example.com', role: 'member' } });
  });
});
