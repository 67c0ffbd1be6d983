import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, startTestServer, type TestServer } from '../support/server.ts';
import { linkIn, startSmtpServer, type SmtpCapture } from '../support/smtp.ts';
import { asUser, SESSION_COOKIE, sessionCookieFrom, signInWithMagicLink } from '../support/sessions.ts';

let t: TestServer;
let smtp: SmtpCapture;
beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await startTestServer({ smtpUrl: smtp.url });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

async function askForLink(email: string): Promise<string> {
  const since = Date.now();
  const res = await request<any>(t.url, 'POST', '/auth/login', { body: { email } });
  expect(res.status).toBe(202);
  const mail = await smtp.waitFor(email, (m) => m.text.includes('/auth/magic'), since);
  return new URL(linkIn(mail, `${t.url}/auth/magic`)).searchParams.get('token') ?? '';
}

describe('magic link', () => {
  it('mail → link → session cookie → GET /me shows the person', async () => {
    const since = Date.now();
    const asked = await request<any>(t.url, 'POST', '/auth/login', { body: { email: 'Ada@Example.com' } });
    expect(asked.status).toBe(202);
    const mail = await smtp.waitFor('ada@example.com', () => true, since);
    expect(mail.subject).toContain('sign-in link');
    const link = linkIn(mail, `${t.url}/auth/magic`);

    // Following the link (what a mail scanner does) shows a button and uses nothing up.
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain('<form method="post" action="/auth/magic">');

    const token = new URL(link).searchParams.get('token');
    const used = await request<any>(t.url, 'POST', '/auth/magic', { body: { token } });
    expect(used.status).toBe(200);
    const setCookie = used.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`)) ?? '';
    expect(setCookie).toMatch(/; HttpOnly/i);
    expect(setCookie).toMatch(/; Secure/i);
    expect(setCookie).toMatch(/; SameSite=Lax/i);
    expect(setCookie).toMatch(/; Path=\//i);
    const cookie = sessionCookieFrom(used.headers) ?? '';

    const me = await asUser(t, cookie, 'GET', '/api/v1/me');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ type: 'session', api_key: null, user: { email: 'ada@example.com' }, role: 'owner' });
    expect(me.body.organization.plan).toBe('trial');
    expect(me.body.memberships).toHaveLength(1);
    expect(me.body.scopes).toEqual(['admin']);
  });

  it('a new address with a pending invite joins the inviting organisation instead of getting its own', async () => {
    const invited = await t.call('POST', '/api/v1/orgs/current/invite', { body: { email: 'invited@example.com', role: 'viewer' } });
    expect(invited.status).toBe(201);
    const cookie = await signInWithMagicLink(t, smtp, 'invited@example.com');
    const me = await asUser(t, cookie, 'GET', '/api/v1/me');
    expect(me.body.organization.slug).toBe('default');
    expect(me.body.role).toBe('viewer');
    expect(me.body.memberships).toHaveLength(1);
    const invites = await t.call('GET', '/api/v1/orgs/current/invites?status=accepted');
    expect(invites.body.data.map((i: { email: string }) => i.email)).toContain('invited@example.com');
  });

  it('a link works once', async () => {
    const token = await askForLink('once@example.com');
    expect((await request<any>(t.url, 'POST', '/auth/magic', { body: { token } })).status).toBe(200);
    const again = await request<any>(t.url, 'POST', '/auth/magic', { body: { token } });
    expect(again.status).toBe(401);
    expect(again.body).toMatchObject({ error: { code: 'unauthorized' } });
    expect(sessionCookieFrom(again.headers)).toBeUndefined();
  });

  it('a link older than 15 minutes fails', async () => {
    const token = await askForLink('late@example.com');
    await t.server.database.db.updateTable('login_tokens').set({ expires_at: new Date(Date.now() - 1000) }).where('email', '=', 'late@example.com').execute();
    const res = await request<any>(t.url, 'POST', '/auth/magic', { body: { token } });
    expect(res.status).toBe(401);
    expect(res.body.error.message).toMatch(/expired/);
    expect(await t.server.database.db.selectFrom('users').select('id').where('email', '=', 'late@example.com').execute()).toHaveLength(0);
  });

  it('refuses a link posted from another site (login CSRF)', async () => {
    const token = await askForLink('csrf@example.com');
    const res = await request<any>(t.url, 'POST', '/auth/magic', { body: { token }, headers: { origin: 'https://evil.example' } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('csrf_failed');
    expect((await request(t.url, 'POST', '/auth/magic', { body: { token }, headers: { origin: t.url } })).status).toBe(200);
  });

  it('forged tokens fail with the envelope', async () => {
    for (const token of ['x', 'A'.repeat(43), "'; drop table users; --"]) {
      const res = await request<any>(t.url, 'POST', '/auth/magic', { body: { token } });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    }
  });

  it('answers the same for known and unknown addresses', async () => {
    await signInWithMagicLink(t, smtp, 'known@example.com');
    const known = await request<any>(t.url, 'POST', '/auth/login', { body: { email: 'known@example.com' } });
    const unknown = await request<any>(t.url, 'POST', '/auth/login', { body: { email: 'nobody-here@example.com' } });
    expect(known.status).toBe(unknown.status);
    expect(known.text).toBe(unknown.text);
  });

  it('accepts a form and answers with a page; the form landing redirects', async () => {
    const since = Date.now();
    const res = await fetch(`${t.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=form%40example.com' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const mail = await smtp.waitFor('form@example.com', () => true, since);
    const token = new URL(linkIn(mail, `${t.url}/auth/magic`)).searchParams.get('token') ?? '';
    const landed = await fetch(`${t.url}/auth/magic`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${encodeURIComponent(token)}` });
    expect(landed.status).toBe(303);
    expect(landed.headers.get('location')).toBe('/api/v1/me');
  });

  it('lands only on a path of this server (no open redirect)', async () => {
    for (const returnTo of ['//evil.example/x', '/\\evil.example', '/\t/evil.example', 'https://evil.example/']) {
      const res = await request<any>(t.url, 'POST', '/auth/login', { body: { email: 'redirect@example.com', return_to: returnTo } });
      expect(res.status, returnTo).toBe(422);
    }
    const since = Date.now();
    expect((await request(t.url, 'POST', '/auth/login', { body: { email: 'redirect@example.com', return_to: '/api/v1/me/sessions' } })).status).toBe(202);
    const link = linkIn(await smtp.waitFor('redirect@example.com', () => true, since), `${t.url}/auth/magic`);
    const token = new URL(link).searchParams.get('token') ?? '';
    const returnTo = new URL(link).searchParams.get('return_to') ?? '';
    const landed = await fetch(`${t.url}/auth/magic`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, return_to: returnTo }).toString(),
    });
    expect(landed.status).toBe(303);
    expect(landed.headers.get('location')).toBe('/api/v1/me/sessions');
  });

  it('limits links per address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await request<any>(t.url, 'POST', '/auth/login', { body: { email: 'flood@example.com' } })).status);
    expect(statuses.slice(0, 5)).toEqual([202, 202, 202, 202, 202]);
    expect(statuses[6]).toBe(429);
  });

  it('refuses bad addresses with a 422', async () => {
    const res = await request<any>(t.url, 'POST', '/auth/login', { body: { email: 'not an address' } });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('validation_failed');
  });

  it('never writes tokens to the log', async () => {
    const token = await askForLink('quiet@example.com');
    await request<any>(t.url, 'POST', '/auth/magic', { body: { token } });
    await request<any>(t.url, 'GET', `/auth/magic?token=${token}`);
    expect(t.logs.join('\n')).not.toContain(token);
  });
});

describe('magic link without SMTP', () => {
  it('writes the link to the log and to the outbox file (0600), and it works', async () => {
    const bare = await startTestServer();
    try {
      expect(bare.server.mailDestination).toContain('outbox.log');
      expect((await request(bare.url, 'POST', '/auth/login', { body: { email: 'offline@example.com' } })).status).toBe(202);
      const outbox = join(bare.database.dataDir, 'outbox.log');
      let text = '';
      for (let i = 0; i < 100 && !text.includes('/auth/magic'); i++) {
        await new Promise((r) => setTimeout(r, 50));
        try {
          text = readFileSync(outbox, 'utf8');
        } catch {
          // not written yet
        }
      }
      expect(statSync(outbox).mode & 0o777).toBe(0o600);
      expect(text).toContain('To: offline@example.com');
      const link = /http:\/\/localhost:\d+\/auth\/magic\?token=\S+/.exec(text)?.[0] ?? '';
      expect(bare.logs.join('\n')).toContain(link.split('token=')[1]);
      const token = new URL(link).searchParams.get('token');
      const used = await request<any>(bare.url, 'POST', '/auth/magic', { body: { token } });
      expect(used.status).toBe(200);
      expect(used.body.user.email).toBe('offline@example.com');
    } finally {
      await bare.close();
    }
  });
});
