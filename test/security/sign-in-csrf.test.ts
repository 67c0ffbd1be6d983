// Finding 5: `POST /auth/invite/accept` signed a browser in when another site sent it (login CSRF:
// an attacker invites an address it controls and has the victim's browser accept, so the victim
// works in the attacker's account), while `/auth/magic` refused the same request. The class: every
// sign-in post is checked by one function (routes say `config.signIn`; a post under /auth/ that
// says neither that nor why it must be cross-site does not start), and the one sign-in that is
// cross-site by design — a SAML response the identity provider's page posts — starts no session
// until the browser that began the sign-in (its flow cookie) completes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLOW_COOKIE } from '../../api/accounts/auth/cookies.ts';
import { setPlan } from '../../api/accounts/people/plans.ts';
import { readAuthnRequest, startSamlIdp, type SamlIdp } from '../support/saml-idp.ts';
import { request, startTestServer, type TestServer } from '../support/server.ts';
import { sessionCookieFrom, signInWithMagicLink, asUser } from '../support/sessions.ts';
import { linkIn, startSmtpServer, type SmtpCapture } from '../support/smtp.ts';

let t: TestServer;
let smtp: SmtpCapture;
let idp: SamlIdp;
let attackerCookie: string;

/** An invite the attacker sends to an address it controls: the token from the mail. */
async function attackerInvite(email: string): Promise<string> {
  const since = Date.now();
  expect((await asUser(t, attackerCookie, 'POST', '/api/v1/orgs/current/invite', { body: { email, role: 'admin' } })).status).toBe(201);
  const mail = await smtp.waitFor(email, (m) => m.text.includes('/auth/invite'), since);
  return new URL(linkIn(mail, `${t.url}/auth/invite`)).searchParams.get('token') ?? '';
}

beforeAll(async () => {
  smtp = await startSmtpServer();
  idp = await startSamlIdp();
  t = await startTestServer({ allowPrivateTargets: true, smtpUrl: smtp.url, rateLimitPerMinute: 100_000 });
  attackerCookie = await signInWithMagicLink(t, smtp, 'mallory@attacker.example');
}, 60_000);

afterAll(async () => {
  await t?.close();
  await idp?.close();
  await smtp?.close();
});

describe('every sign-in post refuses another site', () => {
  it('an invite accepted from another site signs nobody in and leaves the invite usable', async () => {
    const token = await attackerInvite('sock@attacker.example');
    const hostile: Record<string, string>[] = [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }];
    for (const headers of hostile) {
      const form = await fetch(`${t.url}/auth/invite/accept`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ token }).toString(),
      });
      expect(form.status).toBe(403);
      expect(((await form.json()) as { error: { code: string } }).error.code).toBe('csrf_failed');
      expect(sessionCookieFrom(form.headers)).toBeUndefined();
    }
    // The invite is still pending: the same post from Aegis's own page works.
    const own = await request<any>(t.url, 'POST', '/auth/invite/accept', { body: { token }, headers: { origin: t.url, 'sec-fetch-site': 'same-origin' } });
    expect(own.status, own.text).toBe(200);
    expect(sessionCookieFrom(own.headers)).toBeDefined();
  });

  it('a magic link and a link request posted from another site are refused the same way', async () => {
    for (const path of ['/auth/magic', '/auth/login']) {
      const body = path === '/auth/magic' ? { token: 'A'.repeat(43) } : { email: 'someone@example.com' };
      const res = await request<any>(t.url, 'POST', path, { body, headers: { origin: 'https://evil.example' } });
      expect(res.status, path).toBe(403);
      expect(res.body.error.code).toBe('csrf_failed');
    }
  });

  it('a SAML response posted into a browser that did not start the sign-in starts no session', async () => {
    const me = await asUser(t, attackerCookie, 'GET', '/api/v1/me');
    await setPlan(t.server.database.db, undefined, me.body.organization.id, 'enterprise');
    expect((await asUser(t, attackerCookie, 'PUT', '/api/v1/orgs/current/sso', { body: { protocol: 'saml', metadata_url: idp.metadataUrl } })).status).toBe(200);

    // The attacker starts a sign-in in its own browser and has its IdP answer for its own account...
    const started = await fetch(`${t.url}/auth/sso?org=${me.body.organization.slug}`, { redirect: 'manual' });
    const location = started.headers.get('location') ?? '';
    const relayState = readAuthnRequest(location).relayState;
    const posted = idp.answer(location, { email: 'mallory@attacker.example' });
    // ...then has the victim's browser post it (an auto-submitting form on the attacker's page).
    const acs = await fetch(posted.acsUrl, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: new URLSearchParams({ SAMLResponse: posted.SAMLResponse, RelayState: posted.RelayState }).toString(),
    });
    expect(acs.status).toBe(303);
    expect(sessionCookieFrom(acs.headers)).toBeUndefined();
    // The victim's browser follows the redirect without the attacker's flow cookie: nothing.
    const victim = await fetch(new URL(acs.headers.get('location') ?? '', t.url), { redirect: 'manual' });
    expect(victim.status).toBe(401);
    expect(sessionCookieFrom(victim.headers)).toBeUndefined();
    // Only the browser that started it (its flow cookie) completes it — and once.
    const own = await fetch(`${t.url}/auth/sso/saml/complete`, { redirect: 'manual', headers: { cookie: `${FLOW_COOKIE}=${relayState}` } });
    expect(own.status).toBe(303);
    expect(sessionCookieFrom(own.headers)).toBeDefined();
    expect((await fetch(`${t.url}/auth/sso/saml/complete`, { redirect: 'manual', headers: { cookie: `${FLOW_COOKIE}=${relayState}` } })).status).toBe(401);
  });
});
