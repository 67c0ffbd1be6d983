// Magic-link sign-in in a real browser: Chromium (headless, system package) asks for a link on the
// login page, follows the link from a real mail, presses "Sign in", lands on /api/v1/me signed in,
// and holds the session cookie as the server meant it (HttpOnly, Secure, SameSite=Lax, Path=/).
// Skipped without /usr/bin/chromium (.ci/run installs it when it can).
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { linkIn, startSmtpServer, type SmtpCapture } from '../support/smtp.ts';
import { SESSION_COOKIE } from '../support/sessions.ts';

const CHROMIUM = '/usr/bin/chromium';

describe.skipIf(!existsSync(CHROMIUM))('magic-link sign-in in Chromium', { timeout: 90_000 }, () => {
  let t: TestServer;
  let smtp: SmtpCapture;
  let browser: Browser;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestServer({ smtpUrl: smtp.url });
    // The public URL is http://localhost:<port>: Chromium keeps Secure (and __Host-) cookies there
    // without TLS, as it does for any localhost origin.
    expect(new URL(t.url).hostname).toBe('localhost');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'],
      timeout: 60_000,
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.close();
  });

  it('login page → mail → link → Sign in → /api/v1/me, with a HttpOnly, Secure, SameSite=Lax cookie', async () => {
    const email = 'browser-person@example.com';
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const since = Date.now();
      const login = await page.goto(`${t.url}/auth/login`);
      expect(login?.status()).toBe(200);
      await page.locator('form[action="/auth/login"] input[name="email"]').fill(email);
      const sent = page.waitForResponse((r) => r.url() === `${t.url}/auth/login` && r.request().method() === 'POST');
      await page.locator('form[action="/auth/login"] button[type="submit"]').click();
      expect((await sent).status()).toBe(200);
      await expect.poll(() => page.textContent('body')).toContain('sign-in link is on its way');

      const mail = await smtp.waitFor(email, (m) => m.text.includes('/auth/magic'), since);
      const link = linkIn(mail, `${t.url}/auth/magic`);
      const landing = await page.goto(link);
      expect(landing?.status()).toBe(200);
      // Following the link signs nobody in: only the button does.
      expect((await context.cookies()).some((c) => c.name === SESSION_COOKIE)).toBe(false);

      const posted = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/auth/magic', { timeout: 30_000 });
      const me = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/me', { timeout: 30_000 });
      me.catch(() => undefined); // awaited below only when the sign-in went through
      await page.getByRole('button', { name: 'Sign in' }).click();
      const signedIn = await posted;
      // A refusal would show as a page: put its text in the failure.
      expect(signedIn.status(), signedIn.status() === 303 ? '' : await signedIn.text()).toBe(303);
      const meResponse = await me;
      expect(meResponse.status()).toBe(200);
      expect(new URL(page.url()).pathname).toBe('/api/v1/me');
      const body = JSON.parse((await page.textContent('body')) ?? '{}');
      expect(body).toMatchObject({ type: 'session', api_key: null, user: { email }, role: 'owner' });

      const cookies = await context.cookies(t.url);
      const session = cookies.find((c) => c.name === SESSION_COOKIE);
      expect(session).toBeDefined();
      expect(session).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/', domain: 'localhost' });
      // About 30 days, sliding.
      expect(session!.expires * 1000 - Date.now()).toBeGreaterThan(29 * 24 * 3600 * 1000);
      // Scripts on the page cannot read it.
      expect(await page.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie)).not.toContain(SESSION_COOKIE);

      // The browser sends it back: the sessions list, fetched by the page itself.
      const sessions: { data: { method: string; current: boolean; browser: string }[] } = await page.evaluate(async () => (await fetch('/api/v1/me/sessions')).json() as Promise<any>);
      expect(sessions.data).toHaveLength(1);
      expect(sessions.data[0]).toMatchObject({ method: 'magic_link', current: true });
      expect(sessions.data[0]?.browser).toMatch(/^Chrom(e|ium)( Headless)? \d+ on Linux$/);

      // Signing out from the page (same origin, so the CSRF check passes) ends it.
      const out = await page.evaluate(async () => (await fetch('/auth/logout', { method: 'POST' })).status);
      expect(out).toBe(204);
      expect((await context.cookies(t.url)).some((c) => c.name === SESSION_COOKIE)).toBe(false);
      const after = await page.goto(`${t.url}/api/v1/me`);
      expect(after?.status()).toBe(401);
    } finally {
      await context.close();
    }
  });
});
