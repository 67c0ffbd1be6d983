// Signing in through the dashboard, in Chromium against a real server and a real SMTP capture:
// a visitor sent to /sign-in asks for an e-mail link, follows it from the mail, presses Sign in
// and lands back where they were going; the API's rate limit is shown; an invite is accepted from
// the dashboard's invite page (and cannot be used twice); SSO and Google refusals are shown on the
// page; the sign-in pages pass axe at both widths and in both themes.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NARROW, WIDE, browserSuite, expectAccessible, screenshot, startDashboard, watchConsole, type Dashboard } from '../support/browser.ts';
import { request } from '../support/server.ts';
import { linkIn } from '../support/smtp.ts';

browserSuite('the sign-in page', { timeout: 120_000 }, () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  }, 120_000);
  afterAll(async () => {
    await d?.close();
  });

  it('signs in by magic link through the dashboard and lands back on the page asked for', async () => {
    const email = 'magic-person@example.com';
    const page = await d.visitor();
    const problems = watchConsole(page);
    await page.goto('/findings');
    await page.waitForURL((url) => url.pathname === '/sign-in' && url.searchParams.get('return_to') === '/findings');
    await page.getByRole('heading', { level: 1, name: 'Sign in to Aegis' }).waitFor();

    const since = Date.now();
    await page.getByLabel('E-mail', { exact: true }).fill(email);
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
    expect(await page.getByRole('status').textContent()).toContain(email);
    await expectAccessible(page, 'sign-in: check your e-mail');

    const mail = await d.smtp.waitFor(email, (m) => m.text.includes('/auth/magic'), since);
    const link = linkIn(mail, `${d.t.url}/auth/magic`);
    expect(new URL(link).searchParams.get('return_to')).toBe('/findings');
    await page.goto(link);
    await Promise.all([page.waitForURL((url) => url.pathname === '/findings'), page.getByRole('button', { name: 'Sign in' }).click()]);
    // Signed in, in the dashboard: the header names the person.
    await page.getByRole('banner').getByText(email).waitFor();
    expect(new URL(page.url()).pathname).toBe('/findings');
    expect(problems).toEqual([]);
  });

  it('keeps only paths of this dashboard as where to return, and shows the API’s rate limit', async () => {
    const email = 'too-many@example.com';
    for (let i = 0; i < 5; i += 1) expect((await request(d.t.url, 'POST', '/auth/login', { body: { email } })).status).toBe(202);
    const page = await d.visitor();
    // Another origin is not kept: the link would return to the dashboard's home.
    await page.goto('/sign-in?return_to=%2F%2Fevil.example%2Fx');
    await page.getByLabel('E-mail', { exact: true }).fill(email);
    const asked = page.waitForRequest((r) => new URL(r.url()).pathname === '/auth/login' && r.method() === 'POST');
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    expect(JSON.parse((await asked).postData() ?? '{}')).toEqual({ email, return_to: '/' });
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/too many sign-in links.*HTTP 429/);
  });

  it('shows SSO and Google refusals on the page', async () => {
    const page = await d.visitor();
    await page.goto('/sign-in');
    await page.getByLabel('Work e-mail or organisation').fill('someone@no-sso.example');
    await page.getByRole('button', { name: 'Sign in with SSO' }).click();
    await page.getByRole('alert').filter({ hasText: 'no single sign-on is set up' }).waitFor();
    await page.getByRole('button', { name: 'Sign in with Google' }).click();
    await page.getByRole('alert').filter({ hasText: 'Google sign-in is not configured' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/sign-in');
  });

  it('accepts an invite from the dashboard’s invite page, once', async () => {
    const owner = await d.signIn('invite-owner@example.com');
    const invited = 'new-colleague@example.com';
    const since = Date.now();
    expect((await owner.call('POST', '/api/v1/orgs/current/invite', { email: invited, role: 'member' })).status).toBe(201);
    const mail = await d.smtp.waitFor(invited, (m) => m.text.includes('/auth/invite'), since);
    const token = new URL(linkIn(mail, `${d.t.url}/auth/invite`)).searchParams.get('token') ?? '';

    const page = await d.visitor();
    await page.goto(`/sign-in/invite?token=${encodeURIComponent(token)}`);
    await page.getByRole('heading', { level: 1, name: 'Accept your invite' }).waitFor();
    // The token leaves the address bar once read.
    await page.waitForURL((url) => !url.search.includes('token'));
    await expectAccessible(page, 'accept invite');
    await screenshot(page, 'sign-in-invite-1280');
    await Promise.all([page.waitForURL((url) => url.pathname === '/'), page.getByRole('button', { name: 'Accept invite' }).click()]);
    await page.getByRole('banner').getByText(invited).waitFor();
    const me = await page.evaluate(async () => (await fetch('/api/v1/me')).json());
    expect(me).toMatchObject({ user: { email: invited }, role: 'member' });

    // The mailed link's own page (/auth/invite) joins and lands in the dashboard too.
    const second = 'second-colleague@example.com';
    const since2 = Date.now();
    expect((await owner.call('POST', '/api/v1/orgs/current/invite', { email: second, role: 'viewer' })).status).toBe(201);
    const mailed = await d.smtp.waitFor(second, (m) => m.text.includes('/auth/invite'), since2);
    const follower = await d.visitor();
    await follower.goto(linkIn(mailed, `${d.t.url}/auth/invite`));
    await Promise.all([follower.waitForURL((url) => url.pathname === '/'), follower.getByRole('button', { name: /^Join / }).click()]);
    await follower.getByRole('banner').getByText(second).waitFor();

    // The same link again: the API says it was used, on the page.
    const again = await d.visitor();
    await again.goto(`/sign-in/invite?token=${encodeURIComponent(token)}`);
    await again.getByRole('button', { name: 'Accept invite' }).click();
    await again.getByRole('alert').filter({ hasText: 'accepted already' }).waitFor();
  });

  it('passes axe at 390 px dark and 1280 px light', async () => {
    const page = await d.visitor();
    for (const [viewport, scheme, suffix] of [[NARROW, 'dark', '390-dark'], [WIDE, 'light', '1280']] as const) {
      await page.setViewportSize(viewport);
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto('/sign-in');
      await page.getByRole('heading', { level: 1, name: 'Sign in to Aegis' }).waitFor();
      await page.waitForLoadState('networkidle');
      await expectAccessible(page, `sign-in at ${suffix}`);
      await screenshot(page, `sign-in-${suffix}`);
    }
  });
});
