// The pages a signed-out visitor sees, in Chromium against a real server: the dashboard's sign-in
// and invite pages and the server's own link pages (owner link, invite link, magic link) log no
// console error and no request of theirs fails or is refused. The dashboard learns that nobody is
// signed in from a 200 (GET /auth/session), not from a 401 Chromium would log, and the server serves
// a favicon (headless Chromium fetches none, so its headers are checked over HTTP).
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { browserSuite, startDashboard, watchConsole, type Dashboard } from '../support/browser.ts';
import { SESSION_COOKIE } from '../support/browser-launch.ts';
import { request } from '../support/server.ts';
import { linkIn } from '../support/smtp.ts';

const OWNER_LINK = /https?:\/\/[^\s"\\]+\/auth\/first-owner\?token=[A-Za-z0-9_-]{43}/;

browserSuite('signed-out pages', { timeout: 120_000 }, () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  }, 120_000);
  afterAll(async () => {
    await d?.close();
  });

  /** A signed-out visitor's page, and everything it reports as wrong. */
  async function visitor(): Promise<{ page: Page; problems: string[] }> {
    const page = await d.visitor();
    return { page, problems: watchConsole(page, { everything: true }) };
  }

  /** Waits until every request the page made has ended, so that a late failure is seen too. */
  async function settled(page: Page): Promise<void> {
    await page.waitForLoadState('networkidle');
  }

  it('the dashboard: / sends the visitor to the sign-in page without an error', async () => {
    const { page, problems } = await visitor();
    const probes: number[] = [];
    page.on('response', (res) => {
      if (new URL(res.url()).pathname === '/auth/session') probes.push(res.status());
    });
    await page.goto('/');
    await page.waitForURL((url) => url.pathname === '/sign-in');
    await page.getByRole('heading', { level: 1, name: 'Sign in to Aegis' }).waitFor();
    await settled(page);
    expect(probes).toEqual([200]);
    expect(problems).toEqual([]);
  });

  it('GET /auth/session: 200 signed out, and an ended session’s cookie is cleared', async () => {
    const none = await fetch(`${d.t.url}/auth/session`);
    expect(none.status).toBe(200);
    expect(await none.json()).toEqual({ signed_in: false, me: null });
    expect(none.headers.get('set-cookie')).toBeNull();
    const ended = await fetch(`${d.t.url}/auth/session`, { headers: { cookie: `${SESSION_COOKIE}=not-a-session` } });
    expect(ended.status).toBe(200);
    expect(await ended.json()).toEqual({ signed_in: false, me: null });
    expect(ended.headers.get('set-cookie')).toMatch(new RegExp(`^${SESSION_COOKIE}=;`));
  });

  it('the dashboard names its favicon, and the server serves it as SVG with a long cache', async () => {
    const { page, problems } = await visitor();
    await page.goto('/sign-in');
    await page.getByRole('heading', { level: 1, name: 'Sign in to Aegis' }).waitFor();
    const href = await page.locator('link[rel="icon"]').getAttribute('href');
    expect(href).toBe('/favicon.svg');
    await settled(page);
    expect(problems).toEqual([]);

    const icon = await fetch(`${d.t.url}/favicon.svg`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(icon.headers.get('cache-control')).toMatch(/max-age=\d{7,}/);
    expect(await icon.text()).toContain('<svg');
    // Browsers that ask for /favicon.ico on pages that name no icon are sent to the SVG.
    const ico = await fetch(`${d.t.url}/favicon.ico`, { redirect: 'manual' });
    expect(ico.status).toBe(301);
    expect(ico.headers.get('location')).toBe('/favicon.svg');
  });

  it('the dashboard’s invite page and the mailed invite link’s page', async () => {
    const since = Date.now();
    const invited = 'signed-out-invitee@example.com';
    const invite = await request(d.t.url, 'POST', '/api/v1/orgs/current/invite', { key: d.t.adminKey, body: { email: invited, role: 'member' } });
    expect(invite.status, invite.text).toBe(201);
    const mail = await d.smtp.waitFor(invited, (m) => m.text.includes('/auth/invite'), since);
    const link = linkIn(mail, `${d.t.url}/auth/invite`);
    const token = new URL(link).searchParams.get('token') ?? '';

    const dashboard = await visitor();
    await dashboard.page.goto(`/sign-in/invite?token=${encodeURIComponent(token)}`);
    await dashboard.page.getByRole('heading', { level: 1, name: 'Accept your invite' }).waitFor();
    await settled(dashboard.page);
    expect(dashboard.problems).toEqual([]);

    const mailed = await visitor();
    await mailed.page.goto(link);
    await mailed.page.getByRole('button', { name: /^Join / }).waitFor();
    await settled(mailed.page);
    expect(mailed.problems).toEqual([]);
  });

  it('the owner link’s page and the magic link’s page', async () => {
    const ownerLink = OWNER_LINK.exec(d.t.logs.join('\n'))?.[0];
    expect(ownerLink).toBeDefined();
    const owner = await visitor();
    await owner.page.goto(ownerLink ?? '');
    await owner.page.locator('input[name="email"]').waitFor();
    await settled(owner.page);
    expect(owner.problems).toEqual([]);

    const email = 'signed-out-magic@example.com';
    const since = Date.now();
    expect((await request(d.t.url, 'POST', '/auth/login', { body: { email } })).status).toBe(202);
    const mail = await d.smtp.waitFor(email, (m) => m.text.includes('/auth/magic'), since);
    const magic = await visitor();
    await magic.page.goto(linkIn(mail, `${d.t.url}/auth/magic`));
    await magic.page.getByRole('button', { name: 'Sign in' }).waitFor();
    await settled(magic.page);
    expect(magic.problems).toEqual([]);
  });
});
