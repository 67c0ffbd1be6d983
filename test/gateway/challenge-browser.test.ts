// The challenge in a real browser: Chromium (headless, system package) is sent to a site whose IP
// access rule challenges it, solves the page's proof of work, is redirected back and reaches the
// origin; a browser without JavaScript is told why and stays out. Skipped without /usr/bin/chromium
// (.ci/run installs it when it can).
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLEARANCE_COOKIE } from '../../gateway/challenge/tokens.ts';
import { viaGateway } from '../support/gateway.ts';
import { startOrigin, type Echo, type Origin } from '../support/origin.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const CHROMIUM = '/usr/bin/chromium';
const HOST = 'shop.test';
const TARGET = `http://${HOST}/some/path?x=1`;

describe.skipIf(!existsSync(CHROMIUM))('the challenge in Chromium', { timeout: 90_000 }, () => {
  let t: TestServer;
  let origin: Origin;
  let gateway: string;
  let browser: Browser;

  beforeAll(async () => {
    origin = await startOrigin();
    t = await startTestServer({ rateLimitPerMinute: 100_000, shieldEnabled: true, shieldPort: 0, challengeDifficultyBits: 12 });
    const running = t.server.gateway!;
    gateway = running.url;

    const site = await t.call('POST', '/api/v1/shield/sites', { body: { domain: HOST, origin_url: origin.url, mode: 'block' } });
    expect(site.status, site.text).toBe(201);
    // No trusted proxies: the client is the TCP peer, for the browser and node alike.
    const rule = await t.call('POST', `/api/v1/shield/sites/${site.body.id}/ip-access`, { body: { type: 'ip', value: '127.0.0.1', action: 'challenge' } });
    expect(rule.status, rule.text).toBe(201);
    await running.registry.refresh();

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', `--host-resolver-rules=MAP ${HOST} 127.0.0.1:${running.port}`],
      timeout: 60_000,
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await origin?.close();
  });

  it('solves the page, comes back to the requested path with a clearance and keeps it', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const passed = page.waitForResponse((r) => r.url() === TARGET && r.status() === 200, { timeout: 60_000 });
      // The page submits itself as soon as it is solved, possibly before `load`: wait only for the
      // first response, then for the one from the origin.
      const first = await page.goto(TARGET, { waitUntil: 'commit' });
      expect(first?.status()).toBe(403);
      const back = await passed;
      expect(back.request().method()).toBe('GET');
      expect(back.request().redirectedFrom()?.method()).toBe('POST');
      await page.waitForLoadState('load');
      const echo = JSON.parse(await page.locator('body').innerText()) as Echo;
      expect(echo.url).toBe('/some/path?x=1');
      expect(page.url()).toBe(TARGET);

      const cookies = await context.cookies(`http://${HOST}/`);
      const clearance = cookies.find((c) => c.name === CLEARANCE_COOKIE);
      expect(clearance).toMatchObject({ domain: HOST, path: '/', httpOnly: true, secure: false, sameSite: 'Lax' });
      // HttpOnly: the page's scripts cannot read it (a string, as the project has no DOM types).
      expect(await page.evaluate<string>('document.cookie')).not.toContain(CLEARANCE_COOKIE);

      // Later requests from the page carry the cookie and pass.
      const later = await page.evaluate(async () => {
        const res = await fetch('/api/items?page=2', { headers: { accept: 'application/json' } });
        return { status: res.status, body: await res.text() };
      });
      expect(later.status).toBe(200);
      expect((JSON.parse(later.body) as Echo).url).toBe('/api/items?page=2');

      // The same cookie from another client on the same address passes too; without it, or with
      // it altered, the challenge stays.
      const cookie = `${CLEARANCE_COOKIE}=${clearance!.value}`;
      expect((await viaGateway(gateway, '/some/path?x=1', { host: HOST, headers: { cookie } })).status).toBe(200);
      const plain = await viaGateway(gateway, '/some/path?x=1', { host: HOST });
      expect(plain.status).toBe(403);
      expect(plain.text).toContain('id="aegis-challenge"');
      // One character changed well before the end: a change to the last base64url character can
      // fall in its padding bits and decode to the same bytes (and "…AA" may be the value itself).
      const at = cookie.length - 10;
      const tampered = `${cookie.slice(0, at)}${cookie[at] === 'A' ? 'B' : 'A'}${cookie.slice(at + 1)}`;
      const altered = await viaGateway(gateway, '/some/path?x=1', { host: HOST, headers: { cookie: tampered } });
      expect(altered.status).toBe(403);
    } finally {
      await context.close();
    }
  });

  it('without JavaScript explains why and does not get through', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      const seenBefore = origin.received.filter((r) => r.url.startsWith('/nojs')).length;
      const res = await page.goto(`http://${HOST}/nojs`);
      expect(res?.status()).toBe(403);
      // Rendered, not just present: getByText skips <noscript>, innerText has only what is shown.
      expect(await page.locator('noscript p').isVisible()).toBe(true);
      expect(await page.locator('body').innerText()).toContain('Please enable JavaScript and reload this page');
      // Nothing happens however long it waits.
      await page.waitForTimeout(1_500);
      expect(page.url()).toBe(`http://${HOST}/nojs`);
      expect(await page.title()).toContain('Just a moment');
      expect((await context.cookies()).some((c) => c.name === CLEARANCE_COOKIE)).toBe(false);
      expect(origin.received.filter((r) => r.url.startsWith('/nojs')).length).toBe(seenBefore);
    } finally {
      await context.close();
    }
  });
});
