// Finding 1 (critical): an organisation's admin configures SSO with an identity provider it
// controls, lists the victim's e-mail domain for just-in-time sign-up (or invites the victim's
// address), has its IdP vouch for the victim, and so signs in the victim's *existing* account —
// then switches that session to the victim's own organisation, where the victim is owner.
//
// Written as the attack, end to end: a real OpenID provider the attacker runs (test/support/
// oidc-provider.ts), the victim's real account and organisation, a real DNS server for domain proof.
// An organisation's IdP vouches for people to that organisation only: an unverified just-in-time
// domain admits nobody, and a session its IdP started is bound to it — it cannot switch
// organisation, see the person's other organisations or sessions, accept their invites or end their
// other sessions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setPlan } from '../../api/accounts/people/plans.ts';
import { startDnsServer, type DnsServer } from '../support/dns-server.ts';
import { Browser, startOidcProvider, type OidcProvider } from '../support/oidc-provider.ts';
import { eventually } from '../support/gateway.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { asUser, SESSION_COOKIE, signInWithMagicLink } from '../support/sessions.ts';
import { startSmtpServer, type SmtpCapture } from '../support/smtp.ts';

const CLIENT = 'attacker-client';
const SECRET = 'attacker-secret';
const victim = 'alice@victim.example';

let op: OidcProvider;
let smtp: SmtpCapture;
let dns: DnsServer;
let t: TestServer;
/** The victim's own session (magic link) and organisation, where she is owner. */
let aliceCookie: string;
let aliceOrg: string;
/** The attacker's session and organisation (Enterprise, so it may configure SSO). */
let malloryCookie: string;
let malloryOrg: { id: string; slug: string };

const mallory = <T = any>(method: string, path: string, body?: unknown) => asUser<T>(t, malloryCookie, method, path, body === undefined ? {} : { body });

/** The attacker's IdP vouches for `email`; the sign-in runs in a fresh browser. The browser and Aegis's last answer. */
async function idpSignIn(email: string): Promise<{ browser: Browser; response: globalThis.Response }> {
  op.user = { email, email_verified: true, name: 'Alice (says the attacker)' };
  const browser = new Browser();
  const { response } = await browser.follow(`${t.url}/auth/sso?org=${malloryOrg.slug}`, (next) => next.startsWith(`${t.url}/api/`));
  return { browser, response };
}

beforeAll(async () => {
  op = await startOidcProvider({ clients: { [CLIENT]: SECRET } });
  smtp = await startSmtpServer();
  dns = await startDnsServer();
  // Private targets allowed: the attacker's IdP runs on this machine (the outbound policy is tested elsewhere).
  t = await startTestServer({ allowPrivateTargets: true, smtpUrl: smtp.url, verificationDnsServers: [dns.server], rateLimitPerMinute: 100_000 });

  aliceCookie = await signInWithMagicLink(t, smtp, victim);
  const aliceMe = await asUser(t, aliceCookie, 'GET', '/api/v1/me');
  expect(aliceMe.body.role).toBe('owner');
  aliceOrg = aliceMe.body.organization.id;
  expect((await asUser(t, aliceCookie, 'POST', '/api/v1/shield/sites', { body: { domain: 'shop.victim.example', origin_url: 'https://origin.victim.example', mode: 'block' } })).status).toBe(201);

  malloryCookie = await signInWithMagicLink(t, smtp, 'mallory@attacker.example');
  malloryOrg = (await mallory('GET', '/api/v1/me')).body.organization;
  await setPlan(t.server.database.db, undefined, malloryOrg.id, 'enterprise');
  const configured = await mallory('PUT', '/api/v1/orgs/current/sso', { protocol: 'oidc', issuer: op.issuer, client_id: CLIENT, client_secret: SECRET, jit_domains: ['victim.example'], jit_role: 'admin' });
  expect(configured.status, configured.text).toBe(200);
}, 60_000);

afterAll(async () => {
  await t?.close();
  await op?.close();
  await smtp?.close();
  await dns?.close();
});

describe('an identity provider vouches for people to its own organisation only', () => {
  it('an unverified just-in-time domain admits nobody: the victim’s account is not signed in', async () => {
    expect((await mallory('GET', '/api/v1/orgs/current/sso')).body.jit_domains_pending).toEqual(['victim.example']);
    const { browser, response } = await idpSignIn(victim);
    expect(response.status).toBe(403);
    expect(browser.cookies.has(SESSION_COOKIE)).toBe(false);
    // Nor can the attacker verify a domain it does not control: its TXT record is not there.
    const claim = await mallory('POST', '/api/v1/orgs/current/domains', { domain: 'victim.example' });
    expect(claim.status).toBe(201);
    const verify = await mallory('POST', `/api/v1/orgs/current/domains/${claim.body.id}/verify`);
    expect(verify.status).toBe(422);
    expect(verify.body.error.details).toMatchObject({ reason: 'record_not_found', expected: { name: '_aegis-verify.victim.example' } });
    expect((await idpSignIn(victim)).response.status).toBe(403);
    // And the victim's domain does not lead her e-mail address to the attacker's sign-in.
    expect((await new Browser().get(`${t.url}/auth/sso?email=${encodeURIComponent(victim)}`)).status).toBe(404);
  });

  it('an invited address signs in, but the session is bound to the attacker’s organisation and reaches nothing of the victim’s', async () => {
    expect((await mallory('POST', '/api/v1/orgs/current/invite', { email: victim, role: 'admin' })).status).toBe(201);
    const { browser, response } = await idpSignIn(victim);
    expect(response.status).toBe(303);
    const stolen = browser.cookies.get(SESSION_COOKIE) ?? '';
    expect(stolen).not.toBe('');
    const me = await asUser(t, stolen, 'GET', '/api/v1/me');
    expect(me.body.organization.id).toBe(malloryOrg.id);
    // The victim's own organisation is not even listed...
    expect(me.body.memberships.map((m: { organization: { id: string } }) => m.organization.id)).toEqual([malloryOrg.id]);
    // ...and switching to it is refused as if it did not exist.
    const hop = await asUser(t, stolen, 'PUT', '/api/v1/me/current-organization', { body: { organization_id: aliceOrg } });
    expect(hop.status).toBe(404);
    expect((await asUser(t, stolen, 'GET', '/api/v1/me')).body.organization.id).toBe(malloryOrg.id);

    // The victim's other sessions are out of reach: not listed, not ended one by one or all at once.
    const aliceSessions = (await asUser(t, aliceCookie, 'GET', '/api/v1/me/sessions')).body.data as { id: string; current: boolean }[];
    const aliceOwn = aliceSessions.find((s) => s.current)!.id;
    const seen = (await asUser(t, stolen, 'GET', '/api/v1/me/sessions')).body.data as { id: string; method: string }[];
    expect(seen.map((s) => s.id)).not.toContain(aliceOwn);
    expect(seen.every((s) => s.method === 'sso_oidc')).toBe(true);
    expect((await asUser(t, stolen, 'DELETE', `/api/v1/me/sessions/${aliceOwn}`)).status).toBe(404);
    expect((await asUser(t, stolen, 'POST', '/auth/logout')).status).toBe(204);
    const still = await asUser(t, aliceCookie, 'GET', '/api/v1/me');
    expect(still.status).toBe(200);
    expect(still.body.role).toBe('owner');
    expect((await asUser(t, aliceCookie, 'GET', '/api/v1/shield/sites')).body.data).toHaveLength(1);
  });

  it('a bound session accepts no invite to another organisation in the victim’s name', async () => {
    const { browser } = await idpSignIn(victim);
    const stolen = browser.cookies.get(SESSION_COOKIE) ?? '';
    const accept = await asUser(t, stolen, 'POST', '/api/v1/me/invites/accept', { body: { token: 'A'.repeat(43) } });
    expect(accept.status).toBe(403);
    expect(accept.body.error.code).toBe('sign_in_required');
  });

  it('a verified domain admits people just in time, still bound to the organisation that verified it', async () => {
    // An organisation that really controls a domain (its TXT record) signs its people in just in time.
    const corpCookie = await signInWithMagicLink(t, smtp, 'it@corp.example');
    const corp = (await asUser(t, corpCookie, 'GET', '/api/v1/me')).body.organization as { id: string; slug: string };
    await setPlan(t.server.database.db, undefined, corp.id, 'enterprise');
    expect((await asUser(t, corpCookie, 'PUT', '/api/v1/orgs/current/sso', { body: { protocol: 'oidc', issuer: op.issuer, client_id: CLIENT, client_secret: SECRET, jit_domains: ['corp.example'] } })).status).toBe(200);
    const claim = await asUser(t, corpCookie, 'POST', '/api/v1/orgs/current/domains', { body: { domain: 'corp.example' } });
    dns.setTxt(claim.body.verification.name, [claim.body.verification.value]);
    const verified = await asUser(t, corpCookie, 'POST', `/api/v1/orgs/current/domains/${claim.body.id}/verify`);
    expect(verified.status, verified.text).toBe(200);
    expect(verified.body.status).toBe('verified');
    // A second organisation cannot take a verified domain over.
    const grab = await mallory('POST', '/api/v1/orgs/current/domains', { domain: 'corp.example' });
    dns.setTxt(grab.body.verification.name, [claim.body.verification.value, grab.body.verification.value]);
    expect((await mallory('POST', `/api/v1/orgs/current/domains/${grab.body.id}/verify`)).body.error).toMatchObject({ code: 'conflict', details: { reason: 'domain_claimed' } });

    // Bob already has an account and an organisation of his own; corp's IdP signs him in to corp only.
    const bobCookie = await signInWithMagicLink(t, smtp, 'bob@corp.example');
    const bobOrg = (await asUser(t, bobCookie, 'GET', '/api/v1/me')).body.organization.id as string;
    op.user = { email: 'bob@corp.example', email_verified: true };
    const browser = new Browser();
    const { response } = await browser.follow(`${t.url}/auth/sso?email=bob@corp.example`, (next) => next.startsWith(`${t.url}/api/`));
    expect(response.status).toBe(303);
    const bound = browser.cookies.get(SESSION_COOKIE) ?? '';
    expect((await asUser(t, bound, 'GET', '/api/v1/me')).body.organization.id).toBe(corp.id);
    expect((await asUser(t, bound, 'PUT', '/api/v1/me/current-organization', { body: { organization_id: bobOrg } })).status).toBe(404);
    // Bob's own e-mail-link session may switch to corp (it proved his address), and back.
    expect((await asUser(t, bobCookie, 'PUT', '/api/v1/me/current-organization', { body: { organization_id: corp.id } })).status).toBe(200);
    expect((await asUser(t, bobCookie, 'PUT', '/api/v1/me/current-organization', { body: { organization_id: bobOrg } })).status).toBe(200);

    // The record taken away: the next check unverifies the domain, and it admits nobody new.
    dns.setTxt(claim.body.verification.name, []);
    const lost = await asUser(t, corpCookie, 'POST', `/api/v1/orgs/current/domains/${claim.body.id}/verify`);
    expect(lost.status).toBe(422);
    expect((await asUser(t, corpCookie, 'GET', `/api/v1/orgs/current/domains/${claim.body.id}`)).body.status).toBe('pending');
    op.user = { email: 'carol@corp.example', email_verified: true };
    expect((await new Browser().follow(`${t.url}/auth/sso?org=${corp.slug}`)).response.status).toBe(403);
  });

  it('verified domains are read again periodically: a record taken away unverifies the domain on its own', async () => {
    const quick = await startTestServer({ verificationDnsServers: [dns.server], sweepIntervalMs: 100, domainRecheckIntervalMs: 200 });
    try {
      const claim = await quick.call('POST', '/api/v1/orgs/current/domains', { body: { domain: 'rechecked.example' } });
      dns.setTxt(claim.body.verification.name, [claim.body.verification.value]);
      expect((await quick.call('POST', `/api/v1/orgs/current/domains/${claim.body.id}/verify`)).body.status).toBe('verified');
      dns.setTxt(claim.body.verification.name, []);
      await eventually(async () => (await quick.call('GET', `/api/v1/orgs/current/domains/${claim.body.id}`)).body.status === 'pending', 10_000, 50);
      const audit = await quick.call('GET', '/api/v1/audit-log?action=domain.unverified');
      expect(audit.body.data[0]).toMatchObject({ actor: { type: 'system' }, metadata: { domain: 'rechecked.example' } });
    } finally {
      await quick.close();
    }
  });
});
