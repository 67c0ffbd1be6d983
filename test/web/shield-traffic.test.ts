// Shield traffic in the dashboard: a site's live decisions over the SSE stream while requests go
// through the real gateway (rows appear; Pause holds and counts them until Resume; the action filter
// narrows the stream), and its analytics after that traffic (chart on a canvas, the client IP among
// the top IPs, ranges changed by preset and by custom days). axe on both views at 390 px and 1280 px.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { browserSuite, checkPage, expectAccessible, NARROW, screenshot, startDashboard, watchConsole, WIDE, type Dashboard, type SignedIn } from '../support/browser.ts';
import { viaGateway } from '../support/gateway.ts';
import { startOrigin, type Origin } from '../support/origin.ts';

const DOMAIN = 'shop.traffic.test';
const BLOCKED_IP = '198.51.100.7';

browserSuite('Shield traffic: live decisions and analytics', { timeout: 150_000 }, () => {
  let d: Dashboard;
  let origin: Origin;
  let owner: SignedIn;
  let siteId: string;
  let problems: string[];
  let ipRuleId: string;

  beforeAll(async () => {
    origin = await startOrigin();
    d = await startDashboard({
      shieldEnabled: true,
      shieldPort: 0,
      // The test sends the client address in X-Forwarded-For from loopback, as a proxy would.
      trustedProxies: ['127.0.0.1', '::1'],
      asnDbPath: 'test/fixtures/ip2asn/ip2asn-small.tsv',
      shieldAllowSampleRate: 1,
      rateLimitPerMinute: 100_000,
    });
    owner = await d.signIn('traffic-owner@example.com');
    problems = watchConsole(owner.page);
    const site = await owner.call('POST', '/api/v1/shield/sites', { domain: DOMAIN, origin_url: origin.url, mode: 'block', managed_rules: { enabled: false } });
    expect(site.status, site.text).toBe(201);
    siteId = site.body.id;
    const ipRule = await owner.call('POST', `/api/v1/shield/sites/${siteId}/ip-access`, { type: 'ip', value: BLOCKED_IP, action: 'deny' });
    expect(ipRule.status, ipRule.text).toBe(201);
    ipRuleId = ipRule.body.id;
    const patch = await owner.call('POST', `/api/v1/shield/sites/${siteId}/virtual-patches`, { url_pattern: '/search', method: 'ANY', match_param: 'q', match_regex: 'evil', action: 'block' });
    expect(patch.status, patch.text).toBe(201);
    await d.t.server.gateway!.registry.refresh();
  }, 120_000);
  afterAll(async () => {
    await d?.close();
    await origin?.close();
  });

  /** A request through the gateway, its decision stored (and so published) before returning. */
  async function send(path: string, from: string): Promise<number> {
    const res = await viaGateway(d.t.server.gateway!.url, path, { host: DOMAIN, from });
    await d.t.server.shieldEvents.recorder.flush();
    return res.status;
  }

  const liveRow = (page: Page, path: string) => page.getByTestId('live-decisions').getByRole('row').filter({ has: page.getByRole('cell', { name: path, exact: true }) });
  const statusIs = (page: Page, text: string) => page.getByTestId('live-status').filter({ hasText: new RegExp(`^${text}$`) }).waitFor();

  it('watch a live decision appear while traffic is sent through the gateway; pause, resume and filter', async () => {
    const { page } = owner;
    // The stream never lets the network go idle (checkPage waits for that), so this view is checked
    // the same way by hand: both widths and themes, once the stream is live.
    for (const [viewport, scheme, suffix] of [[NARROW, 'dark', '390-dark'], [WIDE, 'light', '1280']] as const) {
      await page.setViewportSize(viewport);
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(`/shield/sites/${siteId}/live`);
      await page.getByRole('heading', { level: 1, name: DOMAIN }).waitFor();
      await page.getByRole('heading', { level: 2, name: 'Live decisions' }).waitFor();
      await statusIs(page, 'Live');
      await expectAccessible(page, `shield live at ${suffix}`);
      await screenshot(page, `shield-live-${suffix}`);
    }

    // A request the IP rule blocks appears as a row, with what was decided and why.
    expect(await send('/admin', BLOCKED_IP)).toBe(403);
    const row = liveRow(page, '/admin');
    await row.waitFor({ timeout: 10_000 });
    const cells = await row.getByRole('cell').allInnerTexts();
    expect(cells.slice(1)).toEqual(['block', BLOCKED_IP, 'GET', '/admin', `IP access ${ipRuleId}`, '403']);

    // Paused: the next decision is counted, not shown, until Resume.
    await page.getByRole('button', { name: 'Pause' }).click();
    await statusIs(page, 'Paused');
    expect(await send('/search?q=evil', '198.51.100.20')).toBe(403);
    await page.getByTestId('held-count').filter({ hasText: '1 decision has arrived while paused' }).waitFor();
    expect(await liveRow(page, '/search').count()).toBe(0);
    await expectAccessible(page, 'shield live paused');
    await screenshot(page, 'shield-live-paused');
    await page.getByRole('button', { name: 'Resume' }).click();
    await liveRow(page, '/search').waitFor();
    expect(await liveRow(page, '/search').getByRole('cell').nth(5).innerText()).toContain('Virtual patch');
    await statusIs(page, 'Live');
    // Newest first.
    expect(await page.getByTestId('live-decisions').locator('tbody tr').first().innerText()).toContain('/search');

    // Filtered to blocks: an allowed request no longer shows, a blocked one does.
    await page.getByLabel('Action').selectOption('block');
    await statusIs(page, 'Live');
    expect(await send('/welcome', '198.51.100.30')).toBe(200);
    expect(await send('/admin/settings', BLOCKED_IP)).toBe(403);
    await liveRow(page, '/admin/settings').waitFor();
    expect(await liveRow(page, '/welcome').count()).toBe(0);
    await page.getByLabel('Action').selectOption('');
    await statusIs(page, 'Live');
    expect(problems).toEqual([]);
  });

  it('charts the traffic by action, lists the client IP among the top IPs, and changes the range', async () => {
    const { page } = owner;
    // Traffic of its own, so this test stands alone: blocks from one address, allows from another.
    for (let i = 0; i < 3; i++) expect(await send(`/blocked/${i}`, BLOCKED_IP)).toBe(403);
    expect(await send('/', '198.51.100.40')).toBe(200);

    await checkPage(owner, `/shield/sites/${siteId}/analytics`, 'shield-analytics', DOMAIN);
    const chart = page.getByTestId('requests-chart');
    await chart.locator('canvas').first().waitFor();
    expect(await chart.getAttribute('aria-label')).toMatch(/Requests by action per minute|Requests by action per hour/);
    expect(await chart.getAttribute('aria-label')).toMatch(/[1-9]\d* blocked/);
    const topIps = page.getByRole('region', { name: 'Top IP addresses' });
    await topIps.getByRole('cell', { name: BLOCKED_IP, exact: true }).waitFor();
    await page.getByRole('region', { name: 'Top networks (ASN)' }).getByRole('cell', { name: 'AS64500' }).waitFor();
    await page.getByRole('region', { name: 'Top rules' }).getByRole('cell', { name: /IP access/ }).first().waitFor();

    // The chart's data as a table, for those who cannot see the canvas.
    await page.getByText("Show the chart's data as a table").click();
    await page.getByRole('table', { name: /Requests by action, one row per hour/ }).waitFor();
    await expectAccessible(page, 'shield analytics with the data table');

    // Presets: the last hour has a point per minute.
    const asked = page.waitForRequest((r) => r.url().includes('/analytics?') && r.url().includes('start='));
    await page.getByRole('button', { name: 'Last hour' }).click();
    await asked;
    await page.getByText(/Last hour: .* one point per minute\./).waitFor();
    expect(await page.getByRole('button', { name: 'Last hour' }).getAttribute('aria-pressed')).toBe('true');
    await topIps.getByRole('cell', { name: BLOCKED_IP, exact: true }).waitFor();

    // A custom range of days: checked before asking, then sent as from/to.
    await page.getByRole('button', { name: 'Custom range' }).click();
    const today = new Date().toISOString().slice(0, 10);
    await page.getByLabel('First day (UTC)').fill('2099-01-02');
    await page.getByLabel('Last day (UTC)').fill('2099-01-01');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('alert').filter({ hasText: 'The first day must not be after the last day.' }).waitFor();
    await page.getByLabel('First day (UTC)').fill(today);
    await page.getByLabel('Last day (UTC)').fill(today);
    const custom = page.waitForRequest((r) => r.url().includes(`from=${today}`) && r.url().includes(`to=${today}`));
    await page.getByRole('button', { name: 'Apply' }).click();
    await custom;
    await page.getByText(/one point per hour\./).waitFor();
    await topIps.getByRole('cell', { name: BLOCKED_IP, exact: true }).waitFor();

    // At 390 px the chart fits the screen.
    await page.setViewportSize(NARROW);
    await page.waitForFunction(() => {
      const canvas = (globalThis as unknown as { document: { querySelector(s: string): { getBoundingClientRect(): { right: number } } | null } }).document.querySelector('[data-testid="requests-chart"] canvas');
      return canvas !== null && canvas.getBoundingClientRect().right <= 390;
    });
    await screenshot(page, 'shield-analytics-custom-390');
    expect(problems).toEqual([]);
  });

  it('shows a viewer the same views (they are reads: no write button on either)', async () => {
    const viewer = await d.signIn('traffic-viewer@example.com', { role: 'viewer', inviter: owner });
    const { page } = viewer;
    await page.goto(`/shield/sites/${siteId}/live`);
    await statusIs(page, 'Live');
    await page.getByRole('button', { name: 'Pause' }).waitFor();
    await page.goto(`/shield/sites/${siteId}/analytics`);
    await page.getByRole('region', { name: 'Top IP addresses' }).getByRole('cell', { name: BLOCKED_IP, exact: true }).waitFor();
    await page.getByTestId('requests-chart').locator('canvas').first().waitFor();
  });
});
