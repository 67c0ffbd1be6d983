// SSO with OpenID Connect, through HTTP, against a real OpenID provider running locally: settings,
// "Try login", enforcement by the owner (magic links and Google refused for members, IdP sign-in
// admitted), just-in-time membership for a domain verified through a real DNS server, refusals,
// the plan gate and the private-address guard.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../support/dns-server.ts';
import { verifyDomain } from '../support/domains.ts';
import { Browser, startOidcProvider, type OidcProvider } from '../support/oidc-provider.ts';
import { joinDefaultOrganization } from '../support/people.ts';
import { request, startTestServer, type TestServer } from '../support/server.ts';
import { asUser, SESSION_COOKIE, signInWithMagicLink } from '../support/sessions.ts';
import { linkIn, startSmtpServer, type SmtpCapture } from '../support/smtp.ts';

const SSO_CLIENT = 'aegis-sso-test';
const SSO_SECRET = 'sso-test-secret-do-not-log';
const GOOGLE_CLIENT = 'aegis-google-test';
const GOOGLE_SECRET = 'google-test-secret';

let op: OidcProvider;
let smtp: SmtpCapture;
let t: TestServer;
let orgSlug: string;
let dns: DnsServer;
/** The owner of the default organisation (enforcing SSO is the owner's, in person). */
let ownerCookie: string;
const owner = 'owner@corp.example';
beforeAll(async () => {
  dns = await startDnsServer();
  // This provider takes client_secret_post only (the Google test's takes client_secret_basic).
  op = await startOidcProvider({ clients: { [SSO_CLIENT]: SSO_SECRET, [GOOGLE_CLIENT]: GOOGLE_SECRET }, authMethods: ['client_secret_post'] });
  smtp = await startSmtpServer();
  t = await startTestServer({ allowPrivateTargets: true, googleClientId: GOOGLE_CLIENT, googleClientSecret: GOOGLE_SECRET, googleIssuer: op.issuer, smtpUrl: smtp.url, verificationDnsServers: [dns.server] });
  orgSlug = (await t.call('GET', '/api/v1/orgs/current')).body.slug;
  ownerCookie = await joinDefaultOrganization(t, owner, 'owner', smtp);
});
afterAll(async () => {
  await dns.close();
  await t.close();
  await smtp.close();
  await op.close();
});

async function auditActions(action: string): Promise<any[]> {
  const res = await t.call('GET', `/api/v1/audit-log?action=${encodeURIComponent(action)}`);
  expect(res.status).toBe(200);
  return res.body.data;
}

/** Asks for a magic link and returns its token (without using it). */
async function magicToken(email: string): Promise<string> {
  const since = Date.now();
  expect((await request(t.url, 'POST', '/auth/login', { body: { email } })).status).toBe(202);
  const mail = await smtp.waitFor(email, (m) => m.text.includes('/auth/magic'), since);
  return new URL(linkIn(mail, `${t.url}/auth/magic`)).searchParams.get('token') ?? '';
}

/** Stops before the landing page the sign-in redirects to (the 303 is the answer looked at). */
const landed = (next: string) => next.startsWith(`${t.url}/api/`);

/** Enforces SSO or stops, as the owner's session. */
const enforcement = (enforced: boolean, cookie = ownerCookie) => asUser(t, cookie, 'POST', '/api/v1/orgs/current/sso/enforcement', { body: { enforced } });

const oidcSettings = (extra: Record<string, unknown> = {}) => ({ protocol: 'oidc', issuer: op.issuer, client_id: SSO_CLIENT, client_secret: SSO_SECRET, ...extra });

describe('SSO with OIDC (enterprise organisation)', () => {
  const member = 'member@corp.example';
  let memberCookie: string;
  let heldToken: string;

  it('has no connection at first (404)', async () => {
    const res = await t.call('GET', '/api/v1/orgs/current/sso');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it('validates the settings: missing fields and an issuer that does not discover → 422 naming the field', async () => {
    const noIssuer = await t.call('PUT', '/api/v1/orgs/current/sso', { body: { protocol: 'oidc', client_id: 'x', client_secret: 'y' } });
    expect(noIssuer.status).toBe(422);
    expect(noIssuer.body.error.details.fields[0].field).toBe('issuer');
    const noSecret = await t.call('PUT', '/api/v1/orgs/current/sso', { body: { protocol: 'oidc', issuer: op.issuer, client_id: 'x' } });
    expect(noSecret.status).toBe(422);
    expect(noSecret.body.error.details.fields[0].field).toBe('client_secret');
    const dead = await t.call('PUT', '/api/v1/orgs/current/sso', { body: oidcSettings({ issuer: `${op.issuer}/nowhere` }) });
    expect(dead.status).toBe(422);
    expect(dead.body.error.details.fields[0].field).toBe('issuer');
    expect(dead.body.error.message).toMatch(/discovery/);
    const mixed = await t.call('PUT', '/api/v1/orgs/current/sso', { body: oidcSettings({ metadata_url: 'https://idp.example/metadata' }) });
    expect(mixed.status).toBe(422);
    expect((await t.call('GET', '/api/v1/orgs/current/sso')).status).toBe(404);
  });

  it('configures OIDC: the secret is sealed and never returned; audited as sso.configured without it', async () => {
    const res = await t.call('PUT', '/api/v1/orgs/current/sso', { body: oidcSettings({ jit_domains: ['JIT.example'], jit_role: 'viewer' }) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      protocol: 'oidc',
      oidc: { issuer: op.issuer, client_id: SSO_CLIENT, client_secret_set: true },
      saml: null,
      enforced: false,
      jit_domains: ['jit.example'],
      jit_role: 'viewer',
      tested_at: null,
      oidc_redirect_uri: `${t.url}/auth/sso/oidc/callback`,
    });
    expect(res.body.service_provider.acs_url).toBe(`${t.url}/auth/sso/saml/acs`);
    expect(res.text).not.toContain(SSO_SECRET);
    const row = await t.server.database.db.selectFrom('sso_connections').select('oidc_client_secret').executeTakeFirstOrThrow();
    expect(row.oidc_client_secret).not.toContain(SSO_SECRET);
    const got = await t.call('GET', '/api/v1/orgs/current/sso');
    expect(got.status).toBe(200);
    expect(got.text).not.toContain(SSO_SECRET);

    const [configured] = await auditActions('sso.configured');
    expect(configured.metadata).toMatchObject({ protocol: 'oidc', issuer: op.issuer });
    expect(JSON.stringify(configured)).not.toContain(SSO_SECRET);
  });

  it('a member signs in with a magic link while SSO is not enforced', async () => {
    const invited = await t.call('POST', '/api/v1/orgs/current/invite', { body: { email: member, role: 'member' } });
    expect(invited.status).toBe(201);
    memberCookie = await signInWithMagicLink(t, smtp, member);
    const me = await asUser(t, memberCookie, 'GET', '/api/v1/me');
    expect(me.status).toBe(200);
    expect(me.body.organization.slug).toBe(orgSlug);
    // A link asked for now, used after enforcement.
    heldToken = await magicToken(member);
  });

  it('refuses enforcement before a successful "Try login" (409)', async () => {
    const res = await enforcement(true);
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/try login first/i);
  });

  it('only admins may try or configure (a member session: 403)', async () => {
    const res = await asUser(t, memberCookie, 'POST', '/api/v1/orgs/current/sso/test');
    expect(res.status).toBe(403);
  });

  it('"Try login" runs the real flow: tested_at set, no session, nothing enforced', async () => {
    op.user = { email: 'it-admin@corp.example', email_verified: true, name: 'IT Admin' };
    const started = await t.call('POST', '/api/v1/orgs/current/sso/test');
    expect(started.status).toBe(200);
    expect(started.body.url).toMatch(new RegExp(`^${t.url}/auth/sso/start/`));
    const browser = new Browser();
    const { response, hops } = await browser.follow(started.body.url);
    expect(hops.some((h) => h.startsWith(`${op.issuer}/authorize`))).toBe(true);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('it-admin@corp.example');
    expect(browser.cookies.has(SESSION_COOKIE)).toBe(false);

    const got = await t.call('GET', '/api/v1/orgs/current/sso');
    expect(got.body.tested_at).not.toBeNull();
    expect(got.body.enforced).toBe(false);
    expect(await auditActions('sso.tested')).toHaveLength(1);
    // Not a member, not enforced: nobody was added.
    expect(await t.server.database.db.selectFrom('users').select('id').where('email', '=', 'it-admin@corp.example').execute()).toHaveLength(0);
    // The link works once.
    expect((await new Browser().get(started.body.url)).status).toBe(404);
  });

  it('enforcing is the owner’s, in person: the admin key and an admin session get 403', async () => {
    const byKey = await t.call('POST', '/api/v1/orgs/current/sso/enforcement', { body: { enforced: true } });
    expect(byKey.status).toBe(403);
    expect(byKey.body.error.code).toBe('owner_session_required');
    const adminCookie = await joinDefaultOrganization(t, 'admin@corp.example', 'admin', smtp);
    expect((await enforcement(true, adminCookie)).body.error.code).toBe('owner_session_required');
  });

  it('enforces SSO (audited as sso.enforced)', async () => {
    const res = await enforcement(true);
    expect(res.status).toBe(200);
    expect(res.body.enforced).toBe(true);
    expect(await auditActions('sso.enforced')).toHaveLength(1);
  });

  it('after enforcement: the member’s magic-link session, a magic link and Google are refused (403 sso_required)', async () => {
    const me = await asUser(t, memberCookie, 'GET', '/api/v1/me');
    expect(me.status).toBe(403);
    expect(me.body.error.code).toBe('sso_required');

    const used = await request<any>(t.url, 'POST', '/auth/magic', { body: { token: heldToken } });
    expect(used.status).toBe(403);
    expect(used.body.error.code).toBe('sso_required');
    expect(used.body.error.details.sso_url).toBe(`/auth/sso?org=${orgSlug}`);
    expect(used.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(false);

    // The mail now points at the identity provider instead of carrying a link.
    const since = Date.now();
    await request(t.url, 'POST', '/auth/login', { body: { email: member } });
    const mail = await smtp.waitFor(member, () => true, since);
    expect(mail.text).toContain(`/auth/sso?org=${orgSlug}`);
    expect(mail.text).not.toContain('/auth/magic');

    op.user = { email: member, email_verified: true };
    const browser = new Browser();
    const { response } = await browser.follow(`${t.url}/auth/google`);
    expect(response.status).toBe(403);
    const body = (await response.json()) as any;
    expect(body.error.code).toBe('sso_required');
    expect(body.error.details.sso_url).toBe(`/auth/sso?org=${orgSlug}`);
    expect(browser.cookies.has(SESSION_COOKIE)).toBe(false);
  });

  it('the IdP sign-in succeeds: session works, method sso_oidc', async () => {
    op.user = { email: member, email_verified: true, name: 'Member Person' };
    const browser = new Browser();
    const start = await browser.get(`${t.url}/auth/sso?org=${orgSlug}`);
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get('location') ?? '');
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('client_id')).toBe(SSO_CLIENT);
    const { response } = await browser.follow(authorize.toString(), landed);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/api/v1/me');
    const cookie = browser.cookies.get(SESSION_COOKIE) ?? '';
    expect(cookie).toBeTruthy();
    const me = await asUser(t, cookie, 'GET', '/api/v1/me');
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe(member);
    expect(me.body.organization.slug).toBe(orgSlug);
    const sessions = await asUser(t, cookie, 'GET', '/api/v1/me/sessions');
    expect(sessions.body.data.find((s: any) => s.current)).toMatchObject({ method: 'sso_oidc' });
    expect(op.tokenAuthMethods.at(-1)).toBe('client_secret_post');
  });

  it('finds the organisation by e-mail address (membership) too', async () => {
    op.user = { email: member, email_verified: true };
    const browser = new Browser();
    const { response } = await browser.follow(`${t.url}/auth/sso?email=${encodeURIComponent(member)}`, landed);
    expect(response.status).toBe(303);
    expect(browser.cookies.has(SESSION_COOKIE)).toBe(true);
    expect(op.authorizeRequests.at(-1)?.params.login_hint).toBe(member);
  });

  it('a just-in-time domain admits nobody until the organisation verifies it', async () => {
    expect((await t.call('GET', '/api/v1/orgs/current/sso')).body.jit_domains_pending).toEqual(['jit.example']);
    op.user = { email: 'early@jit.example', email_verified: true };
    // Not found by its domain either.
    expect((await new Browser().get(`${t.url}/auth/sso?email=early@jit.example`)).status).toBe(404);
    const { response } = await new Browser().follow(`${t.url}/auth/sso?org=${orgSlug}`);
    expect(response.status).toBe(403);
    expect(await t.server.database.db.selectFrom('users').select('id').where('email', '=', 'early@jit.example').execute()).toHaveLength(0);
  });

  it('admits a newcomer from a verified just-in-time domain with the configured role', async () => {
    await verifyDomain(t, dns, 'jit.example');
    expect((await t.call('GET', '/api/v1/orgs/current/sso')).body.jit_domains_pending).toEqual([]);
    op.user = { email: 'newcomer@jit.example', email_verified: true, name: 'New Comer' };
    const browser = new Browser();
    const { response } = await browser.follow(`${t.url}/auth/sso?email=newcomer@jit.example`, landed);
    expect(response.status).toBe(303);
    const me = await asUser(t, browser.cookies.get(SESSION_COOKIE) ?? '', 'GET', '/api/v1/me');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ role: 'viewer', organization: { slug: orgSlug } });
    expect(await auditActions('member.joined_by_sso')).toHaveLength(1);
  });

  it('refuses a stranger (not a member, not invited, domain not admitted): 403, audited', async () => {
    op.user = { email: 'stranger@elsewhere.example', email_verified: true };
    const browser = new Browser();
    const { response } = await browser.follow(`${t.url}/auth/sso?org=${orgSlug}`);
    expect(response.status).toBe(403);
    expect(browser.cookies.has(SESSION_COOKIE)).toBe(false);
  });

  it('a wrong nonce or a bad signature is refused (401) and audited; a wrong state is refused (401)', async () => {
    op.user = { email: member, email_verified: true };
    for (const tamper of ['nonce', 'foreign_key', 'payload'] as const) {
      op.tamper = tamper;
      try {
        const browser = new Browser();
        const { response } = await browser.follow(`${t.url}/auth/sso?org=${orgSlug}`);
        expect(response.status).toBe(401);
        expect(((await response.json()) as any).error.code).toBe('unauthorized');
        expect(browser.cookies.has(SESSION_COOKIE)).toBe(false);
      } finally {
        op.tamper = null;
      }
    }
    const refusals = await auditActions('sso.login_refused');
    expect(refusals.filter((r) => /nonce|signature/.test(r.metadata.reason)).length).toBeGreaterThanOrEqual(3);

    const browser = new Browser();
    const { url } = await browser.follow(`${t.url}/auth/sso?org=${orgSlug}`, (next) => next.startsWith(`${t.url}/auth/sso/oidc/callback`));
    const callback = new URL(url);
    callback.searchParams.set('state', 'y'.repeat(43));
    const wrong = await browser.get(callback.toString());
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as any).error.code).toBe('unauthorized');
    const noState = await request<any>(t.url, 'GET', '/auth/sso/oidc/callback?code=abc');
    expect(noState.status).toBe(401);
  });

  it('email_verified false is refused at the IdP sign-in', async () => {
    op.user = { email: member, email_verified: false };
    const browser = new Browser();
    const { response } = await browser.follow(`${t.url}/auth/sso?org=${orgSlug}`);
    expect(response.status).toBe(403);
    expect(browser.cookies.has(SESSION_COOKIE)).toBe(false);
  });

  it('unknown organisations and missing parameters answer in the envelope', async () => {
    expect((await request<any>(t.url, 'GET', '/auth/sso?org=no-such-org')).status).toBe(404);
    expect((await request<any>(t.url, 'GET', '/auth/sso?email=nobody@nowhere.example')).status).toBe(404);
    const none = await request<any>(t.url, 'GET', '/auth/sso');
    expect(none.status).toBe(400);
    expect(none.body.error).toBeTruthy();
  });

  it('while enforced, the settings cannot change and the connection cannot be removed (409)', async () => {
    expect((await t.call('PUT', '/api/v1/orgs/current/sso', { body: oidcSettings() })).status).toBe(409);
    expect((await t.call('DELETE', '/api/v1/orgs/current/sso')).status).toBe(409);
  });

  it('stops enforcing (sso.unenforced), then changed settings need a new try, and DELETE removes it (sso.deleted)', async () => {
    // While enforced, the owner's e-mail-link session works no more: the owner signs in through the IdP.
    expect((await enforcement(false)).body.error.code).toBe('sso_required');
    op.user = { email: owner, email_verified: true };
    const browser = new Browser();
    const { response } = await browser.follow(`${t.url}/auth/sso?org=${orgSlug}`, landed);
    expect(response.status).toBe(303);
    const off = await enforcement(false, browser.cookies.get(SESSION_COOKIE) ?? '');
    expect(off.status).toBe(200);
    expect(off.body.enforced).toBe(false);
    expect(await auditActions('sso.unenforced')).toHaveLength(1);
    // Changing the settings (the secret may be left out to keep it) clears tested_at.
    const changed = await t.call('PUT', '/api/v1/orgs/current/sso', { body: { protocol: 'oidc', issuer: op.issuer, client_id: SSO_CLIENT } });
    expect(changed.status).toBe(200);
    expect(changed.body.tested_at).toBeNull();
    expect(changed.body.jit_domains).toEqual([]);
    expect((await enforcement(true, browser.cookies.get(SESSION_COOKIE) ?? '')).status).toBe(409);
    expect((await t.call('DELETE', '/api/v1/orgs/current/sso')).status).toBe(204);
    expect(await auditActions('sso.deleted')).toHaveLength(1);
    expect((await t.call('GET', '/api/v1/orgs/current/sso')).status).toBe(404);
    expect((await t.call('DELETE', '/api/v1/orgs/current/sso')).status).toBe(404);
  });

  it('documents /auth/sso and the settings in the OpenAPI document', async () => {
    const doc = (await t.call('GET', '/api/v1/openapi.json', { key: null })).body;
    expect(doc.paths['/auth/sso']?.get?.tags).toEqual(['SSO']);
    expect(doc.paths['/auth/sso/oidc/callback']?.get).toBeTruthy();
    expect(doc.paths['/api/v1/orgs/current/sso']?.put?.tags).toEqual(['SSO']);
  });
});

describe('SSO gates', () => {
  it('a trial organisation cannot configure SSO (403 plan_required)', async () => {
    const cookie = await signInWithMagicLink(t, smtp, 'trial-owner@example.com');
    const res = await asUser(t, cookie, 'PUT', '/api/v1/orgs/current/sso', { body: oidcSettings() });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('plan_required');
    for (const [method, path, body] of [
      ['POST', '/api/v1/orgs/current/sso/test', undefined],
      ['POST', '/api/v1/orgs/current/sso/enforcement', { enforced: true }],
      ['DELETE', '/api/v1/orgs/current/sso', undefined],
    ] as const) {
      expect((await asUser(t, cookie, method, path, body ? { body } : {})).body.error.code).toBe('plan_required');
    }
  });

  describe('without AEGIS_ALLOW_PRIVATE_TARGETS', () => {
    let guarded: TestServer;
    beforeAll(async () => {
      guarded = await startTestServer({ allowPrivateTargets: false });
    });
    afterAll(() => guarded.close());

    it('a loopback issuer or metadata URL is refused with the guard’s reason (422)', async () => {
      const issuer = await guarded.call('PUT', '/api/v1/orgs/current/sso', { body: oidcSettings() });
      expect(issuer.status).toBe(422);
      expect(issuer.body.error.details.fields[0].field).toBe('issuer');
      expect(issuer.body.error.message).toMatch(/AEGIS_ALLOW_PRIVATE_TARGETS/);
      const saml = await guarded.call('PUT', '/api/v1/orgs/current/sso', { body: { protocol: 'saml', metadata_url: `${op.issuer}/saml/metadata` } });
      expect(saml.status).toBe(422);
      expect(saml.body.error.details.fields[0].field).toBe('metadata_url');
      expect(saml.body.error.message).toMatch(/AEGIS_ALLOW_PRIVATE_TARGETS/);
      expect((await guarded.call('GET', '/api/v1/orgs/current/sso')).status).toBe(404);
    });
  });
});
