// Sign-ins through an identity provider come back where the dashboard asked (`return_to`, a path of
// this server only), kept in a short-lived cookie for the callback: Google and an organisation's
// OIDC connection, against a local OpenID provider. Without `return_to` they land where they always
// did (/api/v1/me), and a cookie set by hand to another origin is not followed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../support/dns-server.ts';
import { verifyDomain } from '../support/domains.ts';
import { Browser, startOidcProvider, type OidcProvider } from '../support/oidc-provider.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { SESSION_COOKIE } from '../support/sessions.ts';

const RETURN_TO_COOKIE = '__Host-aegis_return_to';
const GOOGLE_CLIENT = 'aegis-google-return';
const GOOGLE_SECRET = 'google-return-secret';
const SSO_CLIENT = 'aegis-sso-return';
const SSO_SECRET = 'sso-return-secret';

let op: OidcProvider;
let t: TestServer;
let orgSlug: string;
let dns: DnsServer;
beforeAll(async () => {
  op = await startOidcProvider({ clients: { [GOOGLE_CLIENT]: GOOGLE_SECRET, [SSO_CLIENT]: SSO_SECRET } });
  dns = await startDnsServer();
  t = await startTestServer({ allowPrivateTargets: true, googleClientId: GOOGLE_CLIENT, googleClientSecret: GOOGLE_SECRET, googleIssuer: op.issuer, verificationDnsServers: [dns.server] });
  orgSlug = (await t.call('GET', '/api/v1/orgs/current')).body.slug;
});
afterAll(async () => {
  await t.close();
  await op.close();
  await dns.close();
});

/** Runs a sign-in from `start` through the provider, stopping at Aegis's 303 after the callback. */
async function signIn(browser: Browser, start: string): Promise<Response> {
  const { response } = await browser.follow(start, (next) => !next.startsWith(op.issuer) && !next.includes('/callback') && !next.includes('/auth/'));
  return response;
}

describe('return_to after an identity-provider sign-in', () => {
  it('Google lands on return_to once, then on the default again', async () => {
    op.user = { email: 'return-google@example.com', email_verified: true, name: 'Return Google' };
    const browser = new Browser();
    const started = await browser.get(`${t.url}/auth/google?return_to=${encodeURIComponent('/findings?severity=high')}`);
    expect(started.status).toBe(302);
    const setCookie = started.headers.getSetCookie().find((c) => c.startsWith(`${RETURN_TO_COOKIE}=`)) ?? '';
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    const done = await signIn(browser, started.headers.get('location') ?? '');
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/findings?severity=high');
    expect(browser.cookies.get(SESSION_COOKIE)).toBeTruthy();
    expect(browser.cookies.has(RETURN_TO_COOKIE)).toBe(false);

    const again = await signIn(browser, `${t.url}/auth/google`);
    expect(again.headers.get('location')).toBe('/api/v1/me');
  });

  it('refuses another origin as return_to, and does not follow one set by hand', async () => {
    for (const wanted of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
      const res = await fetch(`${t.url}/auth/google?return_to=${encodeURIComponent(wanted)}`, { redirect: 'manual' });
      // A query that fails its schema is 400 (a body's is 422).
      expect(res.status, wanted).toBe(400);
    }
    op.user = { email: 'return-forged@example.com', email_verified: true, name: 'Forged' };
    const browser = new Browser();
    const started = await browser.get(`${t.url}/auth/google`);
    browser.cookies.set(RETURN_TO_COOKIE, encodeURIComponent('//evil.example/x'));
    const done = await signIn(browser, started.headers.get('location') ?? '');
    expect(done.headers.get('location')).toBe('/api/v1/me');
  });

  it('an organisation’s OIDC sign-in lands on return_to', async () => {
    const configured = await t.call('PUT', '/api/v1/orgs/current/sso', {
      body: { protocol: 'oidc', issuer: op.issuer, client_id: SSO_CLIENT, client_secret: SSO_SECRET, jit_domains: ['return.example'] },
    });
    expect(configured.status, configured.text).toBe(200);
    await verifyDomain(t, dns, 'return.example');
    op.user = { email: 'jit@return.example', email_verified: true, name: 'Jit Person' };
    const browser = new Browser();
    const started = await browser.get(`${t.url}/auth/sso?org=${orgSlug}&return_to=${encodeURIComponent('/settings/sso')}`);
    expect(started.status).toBe(302);
    const done = await signIn(browser, started.headers.get('location') ?? '');
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/settings/sso');
  });
});
