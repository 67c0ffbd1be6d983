// Sign-in with Google as OpenID Connect, against a real OpenID provider running locally (the
// issuer is configurable; production points at https://accounts.google.com).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, startOidcProvider, type OidcProvider, type Tamper } from '../support/oidc-provider.ts';
import { request, startTestServer, type TestServer } from '../support/server.ts';
import { asUser, SESSION_COOKIE } from '../support/sessions.ts';

const FLOW_COOKIE = '__Host-aegis_flow';
const CLIENT_ID = 'aegis-google-test';
const CLIENT_SECRET = 'google-test-secret';

let op: OidcProvider;
let t: TestServer;
beforeAll(async () => {
  op = await startOidcProvider({ clients: { [CLIENT_ID]: CLIENT_SECRET } });
  t = await startTestServer({ allowPrivateTargets: true, googleClientId: CLIENT_ID, googleClientSecret: CLIENT_SECRET, googleIssuer: op.issuer });
});
afterAll(async () => {
  await t.close();
  await op.close();
});

const isCallback = (url: string) => url.startsWith(`${t.url}/auth/google/callback`);

/** Starts a Google sign-in and stops at the provider's redirect back to Aegis (the callback URL). */
async function toCallback(browser: Browser): Promise<string> {
  const { url } = await browser.follow(`${t.url}/auth/google`, isCallback);
  expect(isCallback(url)).toBe(true);
  return url;
}

async function signInWithGoogle(browser: Browser) {
  const callback = await toCallback(browser);
  return browser.get(callback);
}

describe('Google sign-in (OpenID Connect)', () => {
  it('redirects to the provider with PKCE S256, state and nonce, and a flow cookie bound to this browser', async () => {
    const browser = new Browser();
    const start = await browser.get(`${t.url}/auth/google`);
    expect(start.status).toBe(302);
    const location = new URL(start.headers.get('location') ?? '');
    expect(location.origin + location.pathname).toBe(`${op.issuer}/authorize`);
    expect(location.searchParams.get('client_id')).toBe(CLIENT_ID);
    expect(location.searchParams.get('redirect_uri')).toBe(`${t.url}/auth/google/callback`);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    expect(location.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(location.searchParams.get('nonce')).toBeTruthy();
    expect(location.searchParams.get('scope')).toContain('openid');
    const state = location.searchParams.get('state');
    expect(state).toBeTruthy();
    expect(browser.cookies.get(FLOW_COOKIE)).toBe(state);
    const setCookie = start.headers.getSetCookie().find((c) => c.startsWith(`${FLOW_COOKIE}=`)) ?? '';
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/Secure/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
  });

  it('a verified address signs in: session cookie, GET /me, session method google; a new address signs up', async () => {
    op.tamper = null;
    op.user = { email: 'Grace@Example.com', email_verified: true, name: 'Grace Hopper' };
    const browser = new Browser();
    const done = await signInWithGoogle(browser);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/api/v1/me');
    const cookie = browser.cookies.get(SESSION_COOKIE);
    expect(cookie).toBeTruthy();
    expect(browser.cookies.has(FLOW_COOKIE)).toBe(false);

    const me = await asUser(t, cookie ?? '', 'GET', '/api/v1/me');
    expect(me.status).toBe(200);
    expect(me.body.user).toMatchObject({ email: 'grace@example.com', name: 'Grace Hopper' });
    expect(me.body.role).toBe('owner');
    expect(me.body.organization.plan).toBe('trial');
    const sessions = await asUser(t, cookie ?? '', 'GET', '/api/v1/me/sessions');
    expect(sessions.status).toBe(200);
    expect(sessions.body.data.find((s: any) => s.current)).toMatchObject({ method: 'google' });

    // The same person again: the same account.
    const again = new Browser();
    expect((await signInWithGoogle(again)).status).toBe(303);
    const me2 = await asUser(t, again.cookies.get(SESSION_COOKIE) ?? '', 'GET', '/api/v1/me');
    expect(me2.body.user.id).toBe(me.body.user.id);
  });

  it('the token endpoint saw the PKCE verifier and client authentication', async () => {
    expect(op.tokenAuthMethods.length).toBeGreaterThan(0);
    expect(op.tokenAuthMethods.every((m) => m === 'client_secret_basic')).toBe(true);
  });

  const WHY: Record<Exclude<Tamper, null>, RegExp> = {
    foreign_key: /signature verification failed/,
    payload: /signature verification failed/,
    nonce: /"nonce"/,
    aud: /"aud"/,
    iss: /"iss"/,
    expired: /"exp"/,
  };
  for (const tamper of Object.keys(WHY) as Exclude<Tamper, null>[]) {
    it(`a tampered ID token (${tamper}) is refused: 401, no session`, async () => {
      op.user = { email: 'tamper@example.com', email_verified: true };
      op.tamper = tamper;
      try {
        const browser = new Browser();
        const res = await signInWithGoogle(browser);
        expect(res.status).toBe(401);
        const body = (await res.json()) as any;
        expect(body.error.code).toBe('unauthorized');
        expect(body.error.message).toMatch(/Google sign-in failed/);
        expect(body.error.message).toMatch(WHY[tamper]);
        expect(browser.cookies.has(SESSION_COOKIE)).toBe(false);
      } finally {
        op.tamper = null;
      }
      const users = await t.server.database.db.selectFrom('users').select('id').where('email', 'in', ['tamper@example.com', 'attacker@evil.example']).execute();
      expect(users).toHaveLength(0);
    });
  }

  it('a wrong state is refused: 401 in the envelope', async () => {
    op.user = { email: 'state@example.com', email_verified: true };
    const browser = new Browser();
    const callback = new URL(await toCallback(browser));
    callback.searchParams.set('state', 'x'.repeat(43));
    const res = await browser.get(callback.toString());
    expect(res.status).toBe(401);
    expect(((await res.json()) as any).error.code).toBe('unauthorized');
    expect(browser.cookies.has(SESSION_COOKIE)).toBe(false);
  });

  it('a callback in another browser (no flow cookie), a missing state, or a replayed callback is refused', async () => {
    op.user = { email: 'state@example.com', email_verified: true };
    const browser = new Browser();
    const callback = await toCallback(browser);
    const other = new Browser();
    const elsewhere = await other.get(callback);
    expect(elsewhere.status).toBe(401);
    expect(other.cookies.has(SESSION_COOKIE)).toBe(false);

    const noState = new URL(callback);
    noState.searchParams.delete('state');
    const missing = await request<any>(t.url, 'GET', noState.pathname + noState.search, { headers: { cookie: browser.cookieHeader() } });
    expect(missing.status).toBe(401);
    expect(missing.body.error.code).toBe('unauthorized');

    // The real browser finishes once; the same answer again is refused.
    const first = await browser.get(callback);
    expect(first.status).toBe(303);
    const replay = await fetch(callback, { redirect: 'manual', headers: { cookie: `${FLOW_COOKIE}=${new URL(callback).searchParams.get('state')}` } });
    expect(replay.status).toBe(401);
  });

  it('email_verified false is refused, and no account is made', async () => {
    op.user = { email: 'unverified@example.com', email_verified: false };
    const browser = new Browser();
    const res = await signInWithGoogle(browser);
    expect(res.status).toBe(403);
    const body = (await res.json()) as any;
    expect(body.error.message).toMatch(/not verified unverified@example\.com/);
    expect(browser.cookies.has(SESSION_COOKIE)).toBe(false);
    expect(await t.server.database.db.selectFrom('users').select('id').where('email', '=', 'unverified@example.com').execute()).toHaveLength(0);
  });

  it('the provider refusing (access_denied) is a 401', async () => {
    const browser = new Browser();
    const callback = new URL(await toCallback(browser));
    callback.searchParams.delete('code');
    callback.searchParams.set('error', 'access_denied');
    const res = await browser.get(callback.toString());
    expect(res.status).toBe(401);
  });

  it('documents /auth/google in the OpenAPI document', async () => {
    const doc = (await t.call('GET', '/api/v1/openapi.json', { key: null })).body;
    expect(doc.paths['/auth/google']?.get).toBeTruthy();
    expect(doc.paths['/auth/google/callback']?.get).toBeTruthy();
  });
});

describe('Google sign-in not configured', () => {
  let plain: TestServer;
  beforeAll(async () => {
    plain = await startTestServer();
  });
  afterAll(() => plain.close());

  it('both routes answer 404 in the envelope', async () => {
    for (const path of ['/auth/google', '/auth/google/callback?code=x&state=y']) {
      const res = await request<any>(plain.url, 'GET', path);
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'not_found', message: expect.stringContaining('Google sign-in is not configured') });
    }
  });
});
