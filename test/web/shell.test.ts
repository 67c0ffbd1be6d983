// The dashboard as served: the API process answers it at / with a strict CSP (no inline script),
// hashed assets cached for a year and sent precompressed, client routes answered with the app, and
// API paths keeping their 404 envelope. In Chromium: nobody signed in lands on the sign-in page; a
// person lands on the overview, navigates by keyboard, with no CSP violation on the way; the
// overview's first load stays within the JavaScript budget.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { browserSuite, checkPage, focusedText, startDashboard, watchConsole, type Dashboard } from '../support/browser.ts';

browserSuite('the dashboard shell', { timeout: 120_000 }, () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  }, 120_000);
  afterAll(() => d?.close(), 120_000);

  it('is served with a CSP without inline scripts, immutable hashed assets, and precompressed files', async () => {
    const index = await fetch(`${d.t.url}/`);
    expect(index.status).toBe(200);
    const csp = index.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    // No inline script: every <script> has a src.
    expect(html.match(/<script(?![^>]*\bsrc=)[^>]*>/g)).toBeNull();
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeDefined();
    const js = await fetch(`${d.t.url}${asset}`, { headers: { 'accept-encoding': 'br' } });
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(js.headers.get('content-encoding')).toBe('br');

    for (const path of ['/findings', '/settings/api-keys', '/shield/sites/abc']) {
      const res = await fetch(`${d.t.url}${path}`, { headers: { accept: 'text/html' } });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-security-policy'), path).toBe(csp);
    }
    const missing = await fetch(`${d.t.url}/api/v1/nothing-here`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 'not_found' } });
    expect((await fetch(`${d.t.url}/build-info.json`)).status).toBe(404);
  });

  it('keeps a first visit to the overview within 300 KB of compressed JavaScript (the budget; bench:web reports the figure)', async () => {
    const person = await d.signIn('shell-budget@example.com');
    const sizes: Array<Promise<number>> = [];
    person.page.on('response', (response) => {
      if (response.request().resourceType() === 'script') sizes.push(response.headerValue('content-length').then((v) => Number(v ?? NaN)));
    });
    await person.page.goto('/');
    await person.page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await person.page.waitForLoadState('networkidle');
    const bytes = await Promise.all(sizes);
    expect(bytes.length).toBeGreaterThan(0);
    expect(bytes.every(Number.isFinite), 'every script has a Content-Length (served precompressed)').toBe(true);
    expect(bytes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(300 * 1024);
  });

  it('sends visitors to sign in, and a signed-in person to the overview, keyboard first', async () => {
    const visitor = await d.browser.newPage();
    await visitor.goto(`${d.t.url}/findings`);
    await visitor.waitForURL(/\/sign-in/);
    expect(new URL(visitor.url()).searchParams.get('return_to')).toBe('/findings');
    await visitor.close();

    const owner = await d.signIn('shell-owner@example.com');
    const problems = watchConsole(owner.page);
    await checkPage(owner, '/', 'overview', 'Overview');
    // The skip link is the first stop of the keyboard and moves focus to the page's content.
    await owner.page.keyboard.press('Tab');
    expect(await focusedText(owner.page)).toBe('Skip to content');
    await owner.page.keyboard.press('Enter');
    // Navigation links are reachable and say which page is current.
    await owner.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await owner.page.waitForURL(/\/settings\//);
    expect(await owner.page.getByRole('link', { name: 'Settings' }).getAttribute('aria-current')).toBe('page');
    expect(problems).toEqual([]);
  });
});
