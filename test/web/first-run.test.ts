// The README quick start's first run, in Chromium against a real server on a fresh data directory
// started as `npm start` starts it (no SMTP, no key in the environment, invite-only): the bootstrap
// key from the data directory creates a Shield site over HTTP, the one-time owner link from the
// outbox is opened in the browser, the owner form is submitted, and the dashboard — signed in as the
// owner of `default` — lists the site the key made.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { WIDE, browserSuite, launchBrowser, watchConsole } from '../support/browser.ts';
import { request, startTestServer, type TestServer } from '../support/server.ts';

const OWNER_LINK = /https?:\/\/[^\s"\\]+\/auth\/first-owner\?token=[A-Za-z0-9_-]{43}/g;

browserSuite('first run: the README quick start in the browser', { timeout: 120_000 }, () => {
  let t: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    t = await startTestServer({ bootstrapApiKey: undefined, signup: 'invite' });
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await t?.close();
  });

  it('bootstrap key → a Shield site → the owner link in Chromium → the owner’s dashboard lists the site', async () => {
    // The key the README's curl reads from the data directory.
    const key = readFileSync(join(t.database.dataDir, 'bootstrap-key'), 'utf8').trim();
    const domain = 'quickstart.example.com';
    const site = await request<{ id: string }>(t.url, 'POST', '/api/v1/shield/sites', { key, body: { domain, origin_url: 'https://origin.example.com', mode: 'block' } });
    expect(site.status, site.text).toBe(201);

    // The owner link, as the README says: in the outbox (and the log) while `default` has no owner.
    const links = [...readFileSync(join(t.database.dataDir, 'outbox.log'), 'utf8').matchAll(OWNER_LINK)].map((m) => m[0]);
    expect(links).toHaveLength(1);
    const link = links[0] ?? '';
    expect(link.startsWith(`${t.url}/auth/first-owner?token=`)).toBe(true);

    const context = await browser.newContext({ baseURL: t.url, viewport: WIDE });
    const page = await context.newPage();
    const problems = watchConsole(page);
    await page.goto(link);
    await page.getByLabel('E-mail').fill('installer@example.com');
    await Promise.all([page.waitForURL((url) => url.pathname === '/'), page.getByRole('button', { name: 'Become the owner' }).click()]);
    // Signed in as the owner: the header names the person.
    await page.getByRole('banner').getByText('installer@example.com').waitFor();

    await page.goto('/shield');
    await page.getByRole('heading', { level: 1, name: 'Shield' }).waitFor();
    const sites = page.getByRole('table', { name: 'Shield sites' });
    await sites.getByRole('link', { name: domain }).waitFor();
    expect(await sites.getByRole('row').count()).toBe(2); // the header and the one site
    expect(problems).toEqual([]);
    await context.close();
  });
});
