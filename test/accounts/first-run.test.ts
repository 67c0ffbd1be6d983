// The first run of a self-hosted server: whoever installed it becomes the owner of `default` — the
// organisation its bootstrap key works in — through a one-time owner link the server prints (or
// AEGIS_OWNER_EMAIL), and an invite-only server (AEGIS_SIGNUP=invite, the default) gives strangers
// who sign in no organisation of their own. Each test talks HTTP to a real server.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../api/config.ts';
import { issueOwnerLink } from '../../api/accounts/first-owner/owner-links.ts';
import { hashToken } from '../../platform/crypto/tokens.ts';
import type { Db } from '../../platform/db/database.ts';
import { joinDefaultOrganization } from '../support/people.ts';
import { request, startTestServer, type Response, type TestServer } from '../support/server.ts';
import { asUser, sessionCookieFrom, signInWithMagicLink } from '../support/sessions.ts';
import { linkIn, startSmtpServer, type SmtpCapture } from '../support/smtp.ts';

const OWNER_LINK = /https?:\/\/[^\s"\\]+\/auth\/first-owner\?token=([A-Za-z0-9_-]{43})/g;

interface ErrorBody {
  error: { code: string; message: string; details: Record<string, unknown> };
}

/** Every owner-link token printed in the text, in order. */
const tokensIn = (text: string): string[] => [...text.matchAll(OWNER_LINK)].map((m) => m[1] ?? '');
const outboxOf = (t: TestServer): string => readFileSync(join(t.database.dataDir, 'outbox.log'), 'utf8');
const db = (t: TestServer): Db => t.server.database.db;

/** The owner link a server printed to its log (the one place it goes when mail goes to SMTP). */
function loggedOwnerToken(t: TestServer): string {
  const tokens = tokensIn(t.logs.join('\n'));
  expect(tokens).toHaveLength(1);
  return tokens[0] ?? '';
}

/** What a claim may change: people, memberships, organisations, sessions, the owner of `default`, unused links. */
async function snapshot(t: TestServer) {
  const count = async (table: 'users' | 'memberships' | 'organizations' | 'sessions') => Number((await db(t).selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);
  const owners = await db(t)
    .selectFrom('memberships')
    .innerJoin('organizations', 'organizations.id', 'memberships.org_id')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select('users.email')
    .where('organizations.slug', '=', 'default')
    .where('memberships.role', '=', 'owner')
    .execute();
  const unusedLinks = await db(t).selectFrom('auth_flows').select('id').where('kind', '=', 'first_owner').where('used_at', 'is', null).execute();
  return { users: await count('users'), memberships: await count('memberships'), organizations: await count('organizations'), sessions: await count('sessions'), owners: owners.map((o) => o.email), unusedLinks: unusedLinks.length };
}

/** Posts the owner form as JSON, from Aegis's own page unless `headers` say otherwise. */
const claim = (t: TestServer, token: string, email: string, headers: Record<string, string> = { origin: t.url }) =>
  request<ErrorBody & { user: { email: string }; organization_id: string }>(t.url, 'POST', '/auth/first-owner', { key: null, body: { token, email }, headers });

/** A refusal in the error envelope, with no session started. */
function expectRefused(res: Response<ErrorBody>, status: number, code: string, reason?: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body.error.code).toBe(code);
  if (reason !== undefined) expect(res.body.error.details.reason).toBe(reason);
  expect(sessionCookieFrom(res.headers)).toBeUndefined();
}

async function defaultOrgId(t: TestServer): Promise<string> {
  return (await db(t).selectFrom('organizations').select('id').where('slug', '=', 'default').executeTakeFirstOrThrow()).id;
}

describe('first run: the README quick start', () => {
  let t: TestServer;
  beforeAll(async () => {
    // As `npm start` runs it: no SMTP, no key in the environment (it is written to the data dir), invite-only.
    t = await startTestServer({ bootstrapApiKey: undefined, signup: 'invite' });
  });
  afterAll(async () => t?.close());

  it('bootstrap key → a Shield site → the owner link from the outbox → the owner sees the site in the dashboard', async () => {
    expect(t.server.bootstrap.kind).toBe('key-file-written');
    expect(t.server.firstOwner).toBe('link-issued');
    const key = readFileSync(join(t.database.dataDir, 'bootstrap-key'), 'utf8').trim();
    const site = await request<{ id: string }>(t.url, 'POST', '/api/v1/shield/sites', { key, body: { domain: 'shop.example.com', origin_url: 'https://origin.example.com', mode: 'block' } });
    expect(site.status, site.text).toBe(201);

    // Printed once: one line of the log, one message in the outbox, the same link.
    const outbox = outboxOf(t);
    expect(outbox).toContain('Subject: Claim your Aegis server');
    const [token] = tokensIn(outbox);
    expect(tokensIn(outbox)).toHaveLength(1);
    expect(t.logs.filter((line) => line.includes(token ?? '-'))).toHaveLength(1);
    const link = [...outbox.matchAll(OWNER_LINK)][0]?.[0] ?? '';
    expect(link.startsWith(`${t.url}/auth/first-owner?token=`)).toBe(true);

    // Opening the link shows a form and uses nothing up (link previewers fetch links).
    const page = await fetch(link, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain('<form method="post" action="/auth/first-owner">');
    expect(html).toContain('name="email"');
    expect((await snapshot(t)).owners).toEqual([]);

    // The browser posts the form from the page: the owner is signed in and lands on the dashboard.
    const posted = await fetch(`${t.url}/auth/first-owner`, {
      method: 'POST',
      body: new URLSearchParams({ token: token ?? '', email: 'Installer@Example.com' }),
      headers: { origin: t.url },
      redirect: 'manual',
    });
    expect(posted.status).toBe(303);
    expect(posted.headers.get('location')).toBe('/');
    const cookie = sessionCookieFrom(posted.headers) ?? '';
    expect(cookie).not.toBe('');

    const me = await asUser(t, cookie, 'GET', '/api/v1/me');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ type: 'session', user: { email: 'installer@example.com' }, role: 'owner', organization: { slug: 'default' } });
    const sites = await asUser<{ data: { id: string; domain: string }[] }>(t, cookie, 'GET', '/api/v1/shield/sites');
    expect(sites.status).toBe(200);
    expect(sites.body.data.map((s) => s.id)).toContain(site.body.id);

    // The owner's powers, in person: inviting a colleague as owner needs an owner's session.
    const invite = await asUser(t, cookie, 'POST', '/api/v1/orgs/current/invite', { body: { email: 'second@example.com', role: 'owner' } });
    expect(invite.status, invite.text).toBe(201);
    const sessions = await asUser<{ data: { method: string; current: boolean }[] }>(t, cookie, 'GET', '/api/v1/me/sessions');
    expect(sessions.body.data.find((s) => s.current)?.method).toBe('owner_link');

    const audit = await request<{ data: { action: string; actor: { type: string; id: string }; metadata: Record<string, unknown> }[] }>(t.url, 'GET', '/api/v1/audit-log?action=member.first_owner', { key });
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0]).toMatchObject({ actor: { type: 'system', id: 'owner-link' }, metadata: { email: 'installer@example.com', via: 'owner_link', from: null } });
    expect(await snapshot(t)).toMatchObject({ owners: ['installer@example.com'], unusedLinks: 0 });
  });
});

describe('first run: AEGIS_OWNER_EMAIL', () => {
  let smtp: SmtpCapture;
  let t: TestServer;
  /** The server restarted on t's database (t's own server is closed by then). */
  let again: TestServer | undefined;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    const env = loadConfig({}, { AEGIS_OWNER_EMAIL: ' Boss@Example.com ', AEGIS_SIGNUP: 'invite' });
    t = await startTestServer({ smtpUrl: smtp.url, ownerEmail: env.ownerEmail, signup: env.signup });
  });
  afterAll(async () => {
    if (again) {
      await again.close();
      rmSync(t.database.dataDir, { recursive: true, force: true });
    } else await t?.close();
    await smtp?.close();
  });

  it('makes the address owner at start-up, prints no link, and its magic-link sign-in lands in default as owner', async () => {
    expect(t.server.firstOwner).toBe('owner-set');
    expect(tokensIn(t.logs.join('\n'))).toEqual([]);
    expect(await snapshot(t)).toMatchObject({ owners: ['boss@example.com'], unusedLinks: 0 });
    const audit = await t.call<{ data: { actor: { type: string; id: string }; metadata: Record<string, unknown> }[] }>('GET', '/api/v1/audit-log?action=member.first_owner');
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0]).toMatchObject({ actor: { type: 'system', id: 'AEGIS_OWNER_EMAIL' }, metadata: { email: 'boss@example.com', via: 'AEGIS_OWNER_EMAIL' } });

    const cookie = await signInWithMagicLink(t, smtp, 'boss@example.com');
    const me = await asUser(t, cookie, 'GET', '/api/v1/me');
    expect(me.body).toMatchObject({ user: { email: 'boss@example.com' }, role: 'owner', organization: { slug: 'default', plan: 'enterprise' } });
    expect(me.body.memberships).toHaveLength(1);
    const sessions = await asUser<{ data: { method: string; current: boolean }[] }>(t, cookie, 'GET', '/api/v1/me/sessions');
    expect(sessions.body.data.find((s) => s.current)?.method).toBe('magic_link');
  });

  it('changes nothing on a later start once default has an owner, whatever AEGIS_OWNER_EMAIL says then', async () => {
    const before = await snapshot(t);
    await t.server.close();
    again = await startTestServer({ smtpUrl: smtp.url, ownerEmail: 'someone-else@example.com', signup: 'invite' }, t.database);
    expect(again.server.firstOwner).toBe('owned');
    expect(tokensIn(again.logs.join('\n'))).toEqual([]);
    expect(await snapshot(again)).toEqual(before);
  });
});

describe('first run: the owner link refuses what it must', () => {
  let smtp: SmtpCapture;
  let t: TestServer;
  let other: TestServer;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    // Mail goes to SMTP here, so each link is in its server's log only.
    [t, other] = await Promise.all([startTestServer({ smtpUrl: smtp.url, signup: 'invite' }), startTestServer({ smtpUrl: smtp.url })]);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await other?.close();
    await smtp?.close();
  });

  it('refuses a post another site sent (login CSRF), and the link still works afterwards', async () => {
    const token = loggedOwnerToken(t);
    const before = await snapshot(t);
    expectRefused(await claim(t, token, 'mallory@attacker.example', { origin: 'https://attacker.example' }), 403, 'csrf_failed');
    expectRefused(await claim(t, token, 'mallory@attacker.example', { 'sec-fetch-site': 'cross-site' }), 403, 'csrf_failed');
    // A sibling subdomain is another site too.
    expectRefused(await claim(t, token, 'mallory@attacker.example', { origin: 'https://evil.localhost' }), 403, 'csrf_failed');
    expect(await snapshot(t)).toEqual(before);
    expect((await fetch(`${t.url}/auth/first-owner?token=${token}`, { headers: { accept: 'text/html' } })).status).toBe(200);
  });

  it("refuses another server's link, a mangled one and an expired one, changing nothing", async () => {
    const foreign = loggedOwnerToken(other);
    const before = await snapshot(t);
    const otherBefore = await snapshot(other);
    expectRefused(await claim(t, foreign, 'mallory@attacker.example'), 401, 'unauthorized', 'invalid');
    expectRefused(await claim(t, 'not-a-token', 'mallory@attacker.example'), 401, 'unauthorized', 'invalid');
    // One character changed (not the last: it may already be the character put there).
    const real = loggedOwnerToken(t);
    const mangled = `${real.slice(0, 10)}${real[10] === 'A' ? 'B' : 'A'}${real.slice(11)}`;
    expectRefused(await claim(t, mangled, 'mallory@attacker.example'), 401, 'unauthorized', 'invalid');

    // A link printed more than 24 hours ago.
    const stale = await issueOwnerLink(db(t), await defaultOrgId(t));
    await db(t).updateTable('auth_flows').set({ expires_at: new Date(Date.now() - 1000) }).where('state_hash', '=', hashToken(stale)).execute();
    const staleBefore = await snapshot(t);
    expectRefused(await claim(t, stale, 'mallory@attacker.example'), 401, 'unauthorized', 'expired');
    const page = await fetch(`${t.url}/auth/first-owner?token=${stale}`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(401);
    expect(await page.text()).toContain('expired');
    expect(await snapshot(t)).toEqual(staleBefore);
    expect(staleBefore).toEqual({ ...before, unusedLinks: before.unusedLinks + 1 });
    expect(await snapshot(other)).toEqual(otherBefore);
  });

  it('works once: the second use is refused and changes nothing', async () => {
    const token = loggedOwnerToken(other);
    const first = await claim(other, token, 'first@example.com');
    expect(first.status, first.text).toBe(200);
    expect(first.body.user.email).toBe('first@example.com');
    const after = await snapshot(other);
    expect(after).toMatchObject({ owners: ['first@example.com'], unusedLinks: 0 });
    expectRefused(await claim(other, token, 'second@example.com'), 401, 'unauthorized', 'used');
    const page = await request(other.url, 'GET', `/auth/first-owner?token=${token}`, { key: null });
    expectRefused(page as Response<ErrorBody>, 401, 'unauthorized', 'used');
    expect(await snapshot(other)).toEqual(after);
  });

  it('is dead once default has an owner, however it got one', async () => {
    const token = loggedOwnerToken(t);
    // The bootstrap key names a first owner the other documented way: an admin who joined is promoted.
    const cookie = await joinDefaultOrganization(t, 'alice@example.com', 'admin', smtp);
    const me = await asUser<{ user: { id: string } }>(t, cookie, 'GET', '/api/v1/me');
    expect((await t.call('PATCH', `/api/v1/orgs/current/members/${me.body.user.id}`, { body: { role: 'owner' } })).status).toBe(200);
    const before = await snapshot(t);
    expect(before.owners).toEqual(['alice@example.com']);
    expectRefused(await claim(t, token, 'mallory@attacker.example'), 409, 'conflict', 'owner_exists');
    const page = await fetch(`${t.url}/auth/first-owner?token=${token}`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(409);
    expect(await snapshot(t)).toEqual(before);
  });
});

/** A test server with the given sign-up mode and an SMTP capture for its mail, for a describe block. */
function serverWithMail(signup: 'invite' | 'open'): { readonly t: TestServer; readonly smtp: SmtpCapture } {
  const state: { t?: TestServer; smtp?: SmtpCapture } = {};
  beforeAll(async () => {
    state.smtp = await startSmtpServer();
    state.t = await startTestServer({ smtpUrl: state.smtp.url, signup });
  });
  afterAll(async () => {
    await state.t?.close();
    await state.smtp?.close();
  });
  return {
    get t() {
      return state.t!;
    },
    get smtp() {
      return state.smtp!;
    },
  };
}

describe('first run: the owner link vouches for default only', () => {
  const server = serverWithMail('open');

  it("typing someone else's address makes them owner of default, but the session never reaches their other organisations", async () => {
    // Eve signed up before (open sign-up): she owns an organisation of her own.
    const eve = await signInWithMagicLink(server.t, server.smtp, 'eve@example.com');
    const eveOrg = (await asUser<{ organization: { id: string } }>(server.t, eve, 'GET', '/api/v1/me')).body.organization.id;

    const claimed = await claim(server.t, loggedOwnerToken(server.t), 'eve@example.com');
    expect(claimed.status, claimed.text).toBe(200);
    const cookie = sessionCookieFrom(claimed.headers) ?? '';
    const me = await asUser<{ role: string; organization: { slug: string }; memberships: { organization: { id: string } }[] }>(server.t, cookie, 'GET', '/api/v1/me');
    expect(me.body.role).toBe('owner');
    expect(me.body.organization.slug).toBe('default');
    expect(me.body.memberships.map((m) => m.organization.id)).toEqual([claimed.body.organization_id]);
    expect((await asUser(server.t, cookie, 'PUT', '/api/v1/me/current-organization', { body: { organization_id: eveOrg } })).status).toBe(404);
    expect((await asUser<{ data: unknown[] }>(server.t, cookie, 'GET', '/api/v1/me/sessions')).body.data).toHaveLength(1);

    // Eve herself, by an e-mail link (which proves her address), reaches both.
    const again = await signInWithMagicLink(server.t, server.smtp, 'eve@example.com');
    const both = await asUser<{ memberships: { role: string }[] }>(server.t, again, 'GET', '/api/v1/me');
    expect(both.body.memberships.map((m) => m.role)).toEqual(['owner', 'owner']);
  });
});

describe('AEGIS_SIGNUP', () => {
  it('is invite-only unless set to open; AEGIS_OWNER_EMAIL must be an address', () => {
    expect(loadConfig({}, {}).signup).toBe('invite');
    expect(loadConfig({}, { AEGIS_SIGNUP: 'open' }).signup).toBe('open');
    expect(() => loadConfig({}, { AEGIS_SIGNUP: 'closed' })).toThrow(/AEGIS_SIGNUP/);
    expect(loadConfig({}, {}).ownerEmail).toBeUndefined();
    expect(() => loadConfig({}, { AEGIS_OWNER_EMAIL: 'nobody' })).toThrow(/AEGIS_OWNER_EMAIL/);
  });

  describe('invite', () => {
    const server = serverWithMail('invite');

    /** Asks for a link (the answer is the same for everyone) and returns its token. */
    async function linkFor(email: string): Promise<string> {
      const since = Date.now();
      expect((await request(server.t.url, 'POST', '/auth/login', { key: null, body: { email } })).status).toBe(202);
      const mail = await server.smtp.waitFor(email, (m) => m.text.includes('/auth/magic'), since);
      return new URL(linkIn(mail, `${server.t.url}/auth/magic`)).searchParams.get('token') ?? '';
    }

    it('says so on the sign-in page', async () => {
      const page = await request(server.t.url, 'GET', '/auth/login', { key: null });
      expect(page.text).toContain('invite-only');
    });

    it('refuses a new address with no invite (403 signup_closed) and creates no user or organisation', async () => {
      const before = await snapshot(server.t);
      const token = await linkFor('stranger@example.com');
      const used = await request<ErrorBody>(server.t.url, 'POST', '/auth/magic', { key: null, body: { token }, headers: { origin: server.t.url } });
      expectRefused(used, 403, 'signup_closed');
      expect(used.body.error.message).toContain('invite-only');
      // The form the link's page posts gets a page saying the same.
      const form = await request(server.t.url, 'POST', '/auth/magic', { key: null, raw: `token=${token}`, headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.t.url } });
      expect(form.status).toBe(403);
      expect(form.text).toContain('invite-only');
      expect(await snapshot(server.t)).toEqual(before);
      expect(await db(server.t).selectFrom('users').select('id').where('email', '=', 'stranger@example.com').executeTakeFirst()).toBeUndefined();

      // The refused link was not used up: once invited, the same link signs the stranger in.
      expect((await server.t.call('POST', '/api/v1/orgs/current/invite', { body: { email: 'stranger@example.com', role: 'viewer' } })).status).toBe(201);
      const later = await request<{ organization_id: string }>(server.t.url, 'POST', '/auth/magic', { key: null, body: { token }, headers: { origin: server.t.url } });
      expect(later.status, later.text).toBe(200);
      expect(later.body.organization_id).toBe(await defaultOrgId(server.t));
    });

    it('lets an invited address in, to the organisation that invited it, and only there', async () => {
      const before = await snapshot(server.t);
      expect((await server.t.call('POST', '/api/v1/orgs/current/invite', { body: { email: 'newbie@example.com', role: 'member' } })).status).toBe(201);
      const cookie = await signInWithMagicLink(server.t, server.smtp, 'newbie@example.com');
      const me = await asUser(server.t, cookie, 'GET', '/api/v1/me');
      expect(me.body).toMatchObject({ user: { email: 'newbie@example.com' }, role: 'member', organization: { slug: 'default' } });
      expect(me.body.memberships).toHaveLength(1);
      expect(await snapshot(server.t)).toMatchObject({ users: before.users + 1, organizations: before.organizations });
      // A member signs in again as members do.
      expect(await signInWithMagicLink(server.t, server.smtp, 'newbie@example.com')).not.toBe('');
    });
  });

  describe('open', () => {
    const server = serverWithMail('open');

    it('gives a new address a trial organisation of its own', async () => {
      const before = await snapshot(server.t);
      const cookie = await signInWithMagicLink(server.t, server.smtp, 'founder@example.com');
      const me = await asUser(server.t, cookie, 'GET', '/api/v1/me');
      expect(me.body).toMatchObject({ role: 'owner', organization: { plan: 'trial' } });
      expect(me.body.organization.slug).not.toBe('default');
      expect((await request(server.t.url, 'GET', '/auth/login', { key: null })).text).not.toContain('invite-only');
      expect(await snapshot(server.t)).toMatchObject({ organizations: before.organizations + 1 });
    });
  });
});
