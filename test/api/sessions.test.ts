// Sessions through HTTP, as a browser holds them: the list of where a person is signed in,
// revoking one (at once, on every API process), signing out everywhere, the CSRF Origin check on
// cookie-authenticated writes, the sliding refresh of the cookie, forged cookies and "new device"
// audit entries. Real server, real SMTP capture, real magic links.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadServerKey } from '../../platform/crypto/secret-box.ts';
import { SessionTokens } from '../../api/accounts/sessions/session-token.ts';
import { request, startTestServer, type Response, type TestServer } from '../support/server.ts';
import { linkIn, startSmtpServer, type SmtpCapture } from '../support/smtp.ts';
import { asUser, SESSION_COOKIE, sessionCookieFrom } from '../support/sessions.ts';

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0';
const LOOPBACK = ['127.0.0.1', '::ffff:127.0.0.1'];

let t: TestServer;
let smtp: SmtpCapture;
beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await startTestServer({ smtpUrl: smtp.url, rateLimitPerMinute: 100_000 });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

let counter = 0;
/** A fresh address per test, so tests never share an account (or a budget of links). */
const newEmail = (name: string) => `${name}-${Date.now().toString(36)}-${++counter}@example.com`;

/** The magic-link flow with a browser's User-Agent on the landing POST: returns the cookie. */
async function signIn(server: TestServer, email: string, userAgent = CHROME): Promise<string> {
  const since = Date.now();
  const asked = await request(server.url, 'POST', '/auth/login', { body: { email }, headers: { 'user-agent': userAgent } });
  expect(asked.status, asked.text).toBe(202);
  const mail = await smtp.waitFor(email, (m) => m.text.includes('/auth/magic'), since);
  const token = new URL(linkIn(mail, `${server.url}/auth/magic`)).searchParams.get('token');
  const used = await request(server.url, 'POST', '/auth/magic', { body: { token }, headers: { origin: server.url, 'user-agent': userAgent } });
  const cookie = sessionCookieFrom(used.headers);
  expect(used.status, used.text).toBe(200);
  expect(cookie).toBeTruthy();
  // Links are budgeted per address and per IP (5 and 30 per 15 minutes); these tests sign in far
  // more often than a person would, all from 127.0.0.1, so spent links leave the count.
  await server.server.database.db.deleteFrom('login_tokens').where('used_at', 'is not', null).execute();
  return cookie!;
}

interface SessionView {
  id: string;
  browser: string | null;
  user_agent: string | null;
  ip: string | null;
  method: string;
  organization_id: string;
  current: boolean;
}

async function sessionsOf(server: TestServer, cookie: string): Promise<SessionView[]> {
  const res = await asUser<{ data: SessionView[] }>(server, cookie, 'GET', '/api/v1/me/sessions');
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

async function currentSessionId(server: TestServer, cookie: string): Promise<string> {
  const current = (await sessionsOf(server, cookie)).filter((s) => s.current);
  expect(current).toHaveLength(1);
  return current[0]!.id;
}

async function audit(server: TestServer, cookie: string, action: string): Promise<any[]> {
  const res = await asUser<{ data: any[] }>(server, cookie, 'GET', `/api/v1/audit-log?action=${action}`);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** Whether a response clears the session cookie (an empty value that has already expired). */
function clearsCookie(res: Response): boolean {
  return res.headers
    .getSetCookie()
    .some((line) => line.startsWith(`${SESSION_COOKIE}=;`) && (/Max-Age=0/i.test(line) || /Expires=Thu, 01 Jan 1970/i.test(line)));
}

describe('the sessions list', () => {
  it('shows browser, IP, method and which one is current; two sign-ins are two sessions', async () => {
    const email = newEmail('list');
    const first = await signIn(t, email, CHROME);
    const second = await signIn(t, email, FIREFOX);

    const seenByFirst = await sessionsOf(t, first);
    expect(seenByFirst).toHaveLength(2);
    const me = await asUser(t, first, 'GET', '/api/v1/me');
    expect(me.status).toBe(200);
    for (const s of seenByFirst) {
      expect(s.method).toBe('magic_link');
      expect(LOOPBACK).toContain(s.ip);
      expect(s.organization_id).toBe((me.body as any).organization.id);
    }
    const chrome = seenByFirst.find((s) => s.user_agent === CHROME);
    const firefox = seenByFirst.find((s) => s.user_agent === FIREFOX);
    expect(chrome?.browser).toBe('Chrome 131 on Linux');
    expect(firefox?.browser).toBe('Firefox 128 on Windows');
    expect(chrome?.current).toBe(true);
    expect(firefox?.current).toBe(false);

    const seenBySecond = await sessionsOf(t, second);
    expect(seenBySecond.find((s) => s.current)?.id).toBe(firefox?.id);
    expect(seenBySecond.filter((s) => s.current)).toHaveLength(1);
  });

  it('belongs to people: API keys get 403 on every sessions route', async () => {
    expect((await t.call('GET', '/api/v1/me/sessions')).status).toBe(403);
    expect((await t.call('DELETE', '/api/v1/me/sessions/ses_whatever')).status).toBe(403);
    const put = await t.call('PUT', '/api/v1/me/current-organization', { body: { organization_id: 'org_whatever' } });
    expect(put.status).toBe(403);
    expect((put.body as any).error.code).toBe('forbidden');
  });
});

describe('revoking a session', () => {
  it('ends it at once and is in the audit log, by the user', async () => {
    const email = newEmail('revoke');
    const victim = await signIn(t, email);
    const other = await signIn(t, email);
    expect((await asUser(t, victim, 'GET', '/api/v1/me')).status).toBe(200); // cached now
    const victimId = await currentSessionId(t, victim);
    const userId = ((await asUser(t, other, 'GET', '/api/v1/me')).body as any).user.id as string;

    const revoked = await asUser(t, other, 'DELETE', `/api/v1/me/sessions/${victimId}`);
    expect(revoked.status, revoked.text).toBe(200);
    expect((revoked.body as any).id).toBe(victimId);
    expect(clearsCookie(revoked)).toBe(false); // not the caller's own session

    const after = await asUser(t, victim, 'GET', '/api/v1/me');
    expect(after.status).toBe(401);
    expect(clearsCookie(after)).toBe(true);
    expect((await asUser(t, other, 'GET', '/api/v1/me')).status).toBe(200);
    expect((await sessionsOf(t, other)).map((s) => s.id)).not.toContain(victimId);

    const entries = await audit(t, other, 'session.revoked');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ action: 'session.revoked', actor: { type: 'user', id: userId }, target: { type: 'session', id: victimId } });
    // Someone else's (or an unknown) session: 404, nothing revoked.
    expect((await asUser(t, other, 'DELETE', '/api/v1/me/sessions/ses_nope')).status).toBe(404);
  });

  it('revoking the current session clears its cookie', async () => {
    const cookie = await signIn(t, newEmail('self'));
    const id = await currentSessionId(t, cookie);
    const res = await asUser(t, cookie, 'DELETE', `/api/v1/me/sessions/${id}`);
    expect(res.status).toBe(200);
    expect(clearsCookie(res)).toBe(true);
    expect((await asUser(t, cookie, 'GET', '/api/v1/me')).status).toBe(401);
  });
});

describe('signing out', () => {
  it('ends every session of the account and is in the audit log', async () => {
    const email = newEmail('logout');
    const one = await signIn(t, email);
    const two = await signIn(t, email, FIREFOX);
    const watcher = await signIn(t, newEmail('bystander'));
    expect((await asUser(t, two, 'GET', '/api/v1/me')).status).toBe(200);
    const userId = ((await asUser(t, one, 'GET', '/api/v1/me')).body as any).user.id as string;

    const out = await asUser(t, one, 'POST', '/auth/logout');
    expect(out.status, out.text).toBe(204);
    expect(clearsCookie(out)).toBe(true);
    expect((await asUser(t, one, 'GET', '/api/v1/me')).status).toBe(401);
    expect((await asUser(t, two, 'GET', '/api/v1/me')).status).toBe(401);
    expect((await asUser(t, watcher, 'GET', '/api/v1/me')).status).toBe(200); // other people stay in

    // Read the log as the same person, signed in again.
    const again = await signIn(t, email);
    const entries = await audit(t, again, 'user.logout');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actor: { type: 'user', id: userId }, target: { type: 'user', id: userId }, metadata: { sessions_ended: 2 } });
  });

  it('needs the Origin check too', async () => {
    const cookie = await signIn(t, newEmail('logout-csrf'));
    const res = await request(t.url, 'POST', '/auth/logout', { headers: { cookie: `${SESSION_COOKIE}=${cookie}` } });
    expect(res.status).toBe(403);
    expect((res.body as any).error.code).toBe('csrf_failed');
    expect((await asUser(t, cookie, 'GET', '/api/v1/me')).status).toBe(200);
  });
});

describe('CSRF: cookie-authenticated writes must come from Aegis itself', () => {
  const keyBody = (name: string) => ({ name, scopes: ['scans:read'] });
  const withCookie = (cookie: string, headers: Record<string, string> = {}) => ({ cookie: `${SESSION_COOKIE}=${cookie}`, ...headers });

  it('refuses a write without Origin, or from another origin', async () => {
    const cookie = await signIn(t, newEmail('csrf'));
    const id = await currentSessionId(t, cookie);
    for (const headers of [withCookie(cookie), withCookie(cookie, { origin: 'http://evil.example' }), withCookie(cookie, { 'sec-fetch-site': 'cross-site' })]) {
      const del = await request(t.url, 'DELETE', `/api/v1/me/sessions/${id}`, { headers });
      expect(del.status).toBe(403);
      expect((del.body as any).error.code).toBe('csrf_failed');
      const post = await request(t.url, 'POST', '/api/v1/api-keys', { body: keyBody('csrf'), headers });
      expect(post.status).toBe(403);
      expect((post.body as any).error.code).toBe('csrf_failed');
    }
    // Sec-Fetch-Site does not rescue a foreign Origin.
    const both = await request(t.url, 'POST', '/api/v1/api-keys', { body: keyBody('csrf'), headers: withCookie(cookie, { origin: 'http://evil.example', 'sec-fetch-site': 'same-origin' }) });
    expect(both.status).toBe(403);
    // Nothing happened: the session lives, no key was made.
    expect((await asUser(t, cookie, 'GET', '/api/v1/me')).status).toBe(200);
    expect(((await asUser(t, cookie, 'GET', '/api/v1/api-keys')).body as any).data).toHaveLength(0);
    // Reads need no Origin.
    expect((await request(t.url, 'GET', '/api/v1/me/sessions', { headers: withCookie(cookie) })).status).toBe(200);
  });

  it('allows the same write with Origin set to the server, or Sec-Fetch-Site: same-origin without Origin', async () => {
    const cookie = await signIn(t, newEmail('csrf-ok'));
    const viaOrigin = await request(t.url, 'POST', '/api/v1/api-keys', { body: keyBody('via origin'), headers: withCookie(cookie, { origin: t.url }) });
    expect(viaOrigin.status, viaOrigin.text).toBe(201);
    const viaFetchMetadata = await request(t.url, 'POST', '/api/v1/api-keys', { body: keyBody('via fetch metadata'), headers: withCookie(cookie, { 'sec-fetch-site': 'same-origin' }) });
    expect(viaFetchMetadata.status, viaFetchMetadata.text).toBe(201);
    // The request's own origin (127.0.0.1 rather than the public localhost) counts as well.
    const own = new URL(t.url);
    const ownOrigin = `http://127.0.0.1:${own.port}`;
    const viaOwn = await request(ownOrigin, 'POST', '/api/v1/api-keys', { body: keyBody('via own origin'), headers: withCookie(cookie, { origin: ownOrigin }) });
    expect(viaOwn.status, viaOwn.text).toBe(201);
    const id = await currentSessionId(t, cookie);
    const del = await request(t.url, 'DELETE', `/api/v1/me/sessions/${id}`, { headers: withCookie(cookie, { 'sec-fetch-site': 'same-origin' }) });
    expect(del.status, del.text).toBe(200);
  });

  it('asks nothing of API keys', async () => {
    const res = await t.call('POST', '/api/v1/api-keys', { body: keyBody('no origin') });
    expect(res.status, res.text).toBe(201);
    const foreign = await t.call('POST', '/api/v1/api-keys', { body: keyBody('foreign origin'), headers: { origin: 'http://evil.example' } });
    expect(foreign.status, foreign.text).toBe(201);
  });
});

describe('the cookie', () => {
  it('a fresh cookie is not re-issued; one older than 60 s is, with a new 30 days', async () => {
    const cookie = await signIn(t, newEmail('slide'));
    const fresh = await asUser(t, cookie, 'GET', '/api/v1/me');
    expect(fresh.status).toBe(200);
    expect(sessionCookieFrom(fresh.headers)).toBeUndefined();

    const tokens = new SessionTokens(await loadServerKey(t.database.dataDir, undefined));
    const claims = await tokens.verify(cookie);
    expect(claims).not.toBeNull();
    const old = await tokens.issue(claims!.sessionId, claims!.userId, Date.now() - 120_000);
    const slid = await asUser(t, old, 'GET', '/api/v1/me');
    expect(slid.status).toBe(200);
    const renewed = sessionCookieFrom(slid.headers);
    expect(renewed).toBeTruthy();
    expect(renewed).not.toBe(old);
    const line = slid.headers.getSetCookie().find((l) => l.startsWith(`${SESSION_COOKIE}=`)) ?? '';
    expect(line).toMatch(/; HttpOnly/i);
    expect(line).toMatch(/; Secure/i);
    expect(line).toMatch(/; SameSite=Lax/i);
    expect(line).toMatch(/; Path=\//i);
    expect(line).toMatch(/; Max-Age=2592000/i);
    const renewedClaims = await tokens.verify(renewed!);
    expect(renewedClaims).toMatchObject({ sessionId: claims!.sessionId, userId: claims!.userId });
    expect(Date.now() - renewedClaims!.issuedAt).toBeLessThan(10_000);
    expect((await asUser(t, renewed!, 'GET', '/api/v1/me')).status).toBe(200);
  });

  it('a tampered cookie gets 401 and is cleared', async () => {
    const cookie = await signIn(t, newEmail('tamper'));
    const last = cookie.at(-1)!;
    // The last base64url character carries padding bits; change an earlier one of the signature.
    const at = cookie.length - 5;
    const flipped = cookie.slice(0, at) + (cookie[at] === 'A' ? 'B' : 'A') + cookie.slice(at + 1);
    expect(flipped.at(-1)).toBe(last);
    for (const bad of [flipped, 'not-a-jwt', `${cookie.split('.').slice(0, 2).join('.')}.`]) {
      const res = await asUser(t, bad, 'GET', '/api/v1/me');
      expect(res.status).toBe(401);
      expect((res.body as any).error.code).toBe('unauthorized');
      expect(clearsCookie(res)).toBe(true);
    }
    // A token signed with another key is refused the same way.
    const claims = await new SessionTokens(await loadServerKey(t.database.dataDir, undefined)).verify(cookie);
    const foreign = await new SessionTokens(Buffer.alloc(32, 7)).issue(claims!.sessionId, claims!.userId);
    expect((await asUser(t, foreign, 'GET', '/api/v1/me')).status).toBe(401);
    expect((await asUser(t, cookie, 'GET', '/api/v1/me')).status).toBe(200);
  });

  it('a browser new to the person is audited as user.new_device; the same browser again is not', async () => {
    const email = newEmail('device');
    const first = await signIn(t, email, CHROME);
    const userId = ((await asUser(t, first, 'GET', '/api/v1/me')).body as any).user.id as string;
    expect(await audit(t, first, 'user.new_device')).toHaveLength(1);
    await signIn(t, email, CHROME);
    expect(await audit(t, first, 'user.new_device')).toHaveLength(1);
    await signIn(t, email, FIREFOX);
    const entries = await audit(t, first, 'user.new_device');
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({ actor: { type: 'user', id: userId }, metadata: { browser: 'Firefox 128 on Windows' } });
    expect(await audit(t, first, 'user.login')).toHaveLength(3);
  });
});

describe('several API processes on one PostgreSQL database', () => {
  it.skipIf(inject('databaseTemplate').kind !== 'postgres')('a revoked session, and a sign-out, stop working on the other process with the very next request', async () => {
    const b = await startTestServer({ smtpUrl: smtp.url, rateLimitPerMinute: 100_000, bootstrapApiKey: t.adminKey }, t.database);
    try {
      const email = newEmail('procs');
      const victim = await signIn(t, email);
      const other = await signIn(t, email);
      expect((await asUser(b, victim, 'GET', '/api/v1/me')).status).toBe(200); // cached in b now
      expect((await asUser(b, other, 'GET', '/api/v1/me')).status).toBe(200);
      const victimId = await currentSessionId(t, victim);
      expect((await asUser(t, other, 'DELETE', `/api/v1/me/sessions/${victimId}`)).status).toBe(200);
      expect((await asUser(b, victim, 'GET', '/api/v1/me')).status).toBe(401);
      expect((await asUser(b, other, 'GET', '/api/v1/me')).status).toBe(200);

      // Not luck: again and again, each one cached in b, revoked through a, refused by b next.
      for (let i = 0; i < 8; i++) {
        const cookie = await signIn(t, email);
        expect((await asUser(b, cookie, 'GET', '/api/v1/me')).status).toBe(200);
        const id = await currentSessionId(t, cookie);
        expect((await asUser(t, other, 'DELETE', `/api/v1/me/sessions/${id}`)).status).toBe(200);
        // The very next request must be refused; should it not be, say for how long b lagged.
        const revokedAt = performance.now();
        let stale = 0;
        while ((await asUser(b, cookie, 'GET', '/api/v1/me')).status === 200 && stale < 1000) stale += 1;
        const lag = (performance.now() - revokedAt).toFixed(1);
        expect(stale, `b kept accepting a session revoked through a: ${stale} requests over ${lag} ms (revocation ${i + 1} of 8)`).toBe(0);
      }

      // Sign-out through a: every session of the person, on b, at once.
      const third = await signIn(b, email);
      expect((await asUser(b, third, 'GET', '/api/v1/me')).status).toBe(200);
      expect((await asUser(t, other, 'POST', '/auth/logout')).status).toBe(204);
      expect((await asUser(b, other, 'GET', '/api/v1/me')).status).toBe(401);
      expect((await asUser(b, third, 'GET', '/api/v1/me')).status).toBe(401);
    } finally {
      await b.close();
    }
  });
});
