// The impact preview in the dashboard: traffic sent through the real gateway and recorded, then the
// Shield forms (an IP rule, a virtual patch, a rate limit, the mode, the managed rules' level) asked
// what their change would have done to it before saving — the counts as the traffic was sent, the
// proposal exactly what Save would send, a refused proposal shown like Save's refusal, a site with
// no traffic said so, and nothing ever saved. Then the live view's "would block" lane: what a rule
// of a log-mode site would have blocked, apart from the other decisions. axe on each new state.
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { browserSuite, expectAccessible, NARROW, screenshot, startDashboard, watchConsole, WIDE, type Dashboard, type SignedIn } from '../support/browser.ts';
import { viaGateway } from '../support/gateway.ts';
import { startOrigin, type Origin } from '../support/origin.ts';

const DOMAIN = 'shop.impact-web.test';
const QUIET_DOMAIN = 'quiet.impact-web.test';
const LOG_DOMAIN = 'log.impact-web.test';
/** Sent 3 requests, all answered 200 by the origin. */
const EXPORTER = '192.0.2.50';
/** Denied by the log-mode site's rule: logged, not blocked. */
const WOULD_BLOCK_IP = '198.51.100.66';

browserSuite('Shield impact preview and the would-block lane', { timeout: 150_000 }, () => {
  let d: Dashboard;
  let origin: Origin;
  let owner: SignedIn;
  let problems: string[];
  let siteId: string;
  let quietSiteId: string;
  let logSiteId: string;

  async function createSite(domain: string, mode: 'block' | 'log'): Promise<string> {
    const site = await owner.call('POST', '/api/v1/shield/sites', { domain, origin_url: origin.url, mode });
    expect(site.status, site.text).toBe(201);
    return site.body.id as string;
  }

  async function send(domain: string, path: string, from: string, expected: number): Promise<void> {
    const res = await viaGateway(d.t.server.gateway!.url, path, { host: domain, from });
    expect(res.status, `${path} from ${from}`).toBe(expected);
  }

  beforeAll(async () => {
    origin = await startOrigin();
    d = await startDashboard({
      shieldEnabled: true,
      shieldPort: 0,
      // The test sends the client address in X-Forwarded-For from loopback, as a proxy would.
      trustedProxies: ['127.0.0.1', '::1'],
      // Every request keeps its values, so value-reading rules (virtual patches) count them all.
      shieldTrafficValueSampleRate: 1,
      shieldAllowSampleRate: 1,
      rateLimitPerMinute: 100_000,
    });
    owner = await d.signIn('impact-owner@example.com');
    problems = watchConsole(owner.page);
    siteId = await createSite(DOMAIN, 'block');
    quietSiteId = await createSite(QUIET_DOMAIN, 'block');
    logSiteId = await createSite(LOG_DOMAIN, 'log');
    const rule = await owner.call('POST', `/api/v1/shield/sites/${logSiteId}/ip-access`, { type: 'ip', value: WOULD_BLOCK_IP, action: 'deny' });
    expect(rule.status, rule.text).toBe(201);
    await d.t.server.gateway!.registry.refresh();

    for (let i = 0; i < 3; i++) await send(DOMAIN, '/admin/export?format=csv', EXPORTER, 200);
    for (let i = 1; i <= 5; i++) await send(DOMAIN, `/products/${i}?q=shoes`, `198.51.100.${i}`, 200);
    for (let i = 0; i < 2; i++) await send(DOMAIN, '/page?debug=1', '198.51.100.88', 200);
    // Blocked today by the managed rules (level 1): a weaker mode would let them through.
    for (let i = 0; i < 2; i++) await send(DOMAIN, `/search?q=${encodeURIComponent('<script>alert(1)</script>')}`, '203.0.113.66', 403);
    // Passes at paranoia level 1, flagged from level 2.
    await send(DOMAIN, `/search?q=${encodeURIComponent('eval(x)')}`, '198.51.100.99', 200);
    await d.t.server.shieldEvents.traffic!.flush();
  }, 120_000);
  afterAll(async () => {
    await d?.close();
    await origin?.close();
  });

  const impactOf = (page: Page) => page.getByRole('region', { name: 'Impact preview' });

  /** Clicks Preview impact in `scope` and returns the body the page sent. */
  async function previewIn(page: Page, scope: Locator): Promise<unknown> {
    const asked = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/impact'));
    await scope.getByRole('button', { name: 'Preview impact' }).click();
    return (await asked).postDataJSON() as unknown;
  }

  it('previews a new IP deny from the form: the 3 requests of that address, answered 2xx, and saves nothing', async () => {
    const { page } = owner;
    await page.goto(`/shield/sites/${siteId}/ip-access`);
    await page.getByText('No IP access rules').waitFor();
    await page.getByRole('button', { name: 'New IP access rule' }).click();
    const dialog = page.getByRole('dialog', { name: 'New IP access rule' });
    await dialog.getByLabel('Value').fill(EXPORTER);
    await dialog.getByLabel('Note').fill('exports everything');

    // The proposal is what Create rule would send, as one batch operation.
    const sent = await previewIn(page, dialog);
    expect(sent).toEqual({ operations: [{ op: 'create', kind: 'ip_access_rule', spec: { type: 'ip', value: EXPORTER, action: 'deny', note: 'exports everything', expires_at: null, labels: {} } }] });
    const impact = impactOf(page);
    await impact.getByText('Would have newly blocked 3 requests from 1 client in the last 24 h.').waitFor();
    await impact.getByText('3 of them were answered 2xx by the origin.').waitFor();
    await impact.getByText(/false positive or an exploit that worked/).waitFor();
    expect(await impact.getByRole('list', { name: 'Newly blocked: top clients' }).innerText()).toBe(`${EXPORTER} — 3 requests`);
    // Examples are redacted by the API: the parameter's name, the client's network.
    const examples = impact.getByRole('list', { name: 'Newly blocked: examples' }).getByRole('listitem');
    expect(await examples.count()).toBeGreaterThanOrEqual(1);
    expect(await examples.count()).toBeLessThanOrEqual(3);
    expect(await examples.first().innerText()).toMatch(/^GET \/admin\/export\?format=… — answered 200, from 192\.0\.2\.0\/24, /);
    await expectAccessible(page, 'ip rule impact preview');
    await screenshot(page, 'shield-impact-ip-rule');

    // A change to the form makes the preview stale: it goes.
    await dialog.getByLabel('Action').selectOption('challenge');
    await expect.poll(() => impact.count()).toBe(0);

    // A proposal Save would refuse is refused the same way, naming the field.
    await dialog.getByLabel('Value').fill('999.1.1.1');
    await previewIn(page, dialog);
    const refusal = dialog.getByRole('alert').filter({ hasText: 'Cannot preview this change' });
    await refusal.getByText(/is not an IPv4 or IPv6 address/).first().waitFor();
    expect(await refusal.locator('.field-problems').textContent()).toContain('Value');
    await expectAccessible(page, 'ip rule impact refused');

    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await owner.call('GET', `/api/v1/shield/sites/${siteId}/ip-access`)).body.data).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('previews a virtual patch and a rate limit from their forms, at 390 px too', async () => {
    const { page } = owner;
    await page.goto(`/shield/sites/${siteId}/virtual-patches`);
    await page.getByRole('button', { name: 'New virtual patch' }).click();
    const patch = page.getByRole('dialog', { name: 'New virtual patch' });
    await patch.getByLabel('URL pattern').fill('/*');
    await patch.getByLabel('Parameter').fill('debug');
    await patch.getByLabel('Pattern (RE2)').fill('^1$');
    const sent = await previewIn(page, patch);
    expect(sent).toEqual({ operations: [{ op: 'create', kind: 'virtual_patch', spec: { url_pattern: '/*', method: 'ANY', match_param: 'debug', match_regex: '^1$', action: 'block', labels: {} } }] });
    await impactOf(page).getByText('Would have newly blocked 2 requests from 1 client in the last 24 h.').waitFor();
    expect(await impactOf(page).getByRole('list', { name: 'Newly blocked: examples' }).getByRole('listitem').first().innerText()).toMatch(/^GET \/page\?debug=… — answered 200/);
    await patch.getByRole('button', { name: 'Cancel' }).click();

    await page.setViewportSize(NARROW);
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(`/shield/sites/${siteId}/rate-limits`);
    await page.getByRole('button', { name: 'New rate limit' }).click();
    const limit = page.getByRole('dialog', { name: 'New rate limit' });
    await limit.getByLabel('URL pattern').fill('/admin/export');
    await limit.getByLabel('Method').selectOption('GET');
    await limit.getByLabel('Budget').fill('2');
    await previewIn(page, limit);
    // Replayed over the recorded timestamps: the third of three requests within a minute is over budget.
    await impactOf(page).getByText('Would have newly blocked 1 request from 1 client in the last 24 h.').waitFor();
    await expectAccessible(page, 'rate limit impact preview at 390 dark');
    await screenshot(page, 'shield-impact-rate-limit-390-dark');
    await limit.getByRole('button', { name: 'Cancel' }).click();
    await page.setViewportSize(WIDE);
    await page.emulateMedia({ colorScheme: 'light' });

    expect((await owner.call('GET', `/api/v1/shield/sites/${siteId}/virtual-patches`)).body.data).toEqual([]);
    expect((await owner.call('GET', `/api/v1/shield/sites/${siteId}/rate-limits`)).body.data).toEqual([]);
  });

  it('previews a weaker mode and a higher paranoia level on the settings tab without changing either', async () => {
    const { page } = owner;
    await page.goto(`/shield/sites/${siteId}/settings`);
    const modeForm = page.locator('form').filter({ has: page.getByRole('button', { name: 'Change mode' }) });
    expect(await modeForm.getByRole('button', { name: 'Preview impact' }).isDisabled()).toBe(true);
    await page.getByLabel('Mode', { exact: true }).selectOption('log');
    expect(await previewIn(page, modeForm)).toEqual({ site: { mode: 'log' } });
    const impact = modeForm.getByRole('region', { name: 'Impact preview' });
    await impact.getByText('Would have newly blocked 0 requests from 0 clients in the last 24 h.').waitFor();
    await impact.getByText('Would have newly allowed 2 requests from 1 client.').waitFor();
    expect(await impact.getByRole('list', { name: 'Newly allowed: top clients' }).innerText()).toBe('203.0.113.66 — 2 requests');
    await expectAccessible(page, 'mode impact preview');
    await screenshot(page, 'shield-impact-mode');

    const managedForm = page.locator('form').filter({ has: page.getByRole('button', { name: 'Save managed rules' }) });
    await page.getByLabel('Paranoia level').selectOption('2');
    expect(await previewIn(page, managedForm)).toEqual({ site: { managed_rules: { enabled: true, paranoia_level: 2 } } });
    await managedForm.getByText('Would have newly blocked 1 request from 1 client in the last 24 h.').waitFor();
    await screenshot(page, 'shield-impact-paranoia');

    const site = (await owner.call('GET', `/api/v1/shield/sites/${siteId}`)).body;
    expect(site.mode).toBe('block');
    expect(site.managed_rules.paranoia_level).toBe(1);
  });

  it('says so when the site has no recorded traffic', async () => {
    const { page } = owner;
    await page.goto(`/shield/sites/${quietSiteId}/ip-access`);
    await page.getByRole('button', { name: 'New IP access rule' }).click();
    const dialog = page.getByRole('dialog', { name: 'New IP access rule' });
    await dialog.getByLabel('Value').fill(EXPORTER);
    await previewIn(page, dialog);
    await impactOf(page).getByText('No traffic recorded for this site yet').waitFor();
    expect(await impactOf(page).getByText(/Would have newly blocked/).count()).toBe(0);
    await expectAccessible(page, 'impact preview without traffic');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });

  it('shows what a log-mode rule would have blocked in its own lane of the live view', async () => {
    const { page } = owner;
    await page.goto(`/shield/sites/${logSiteId}/live`);
    await page.getByTestId('live-status').filter({ hasText: /^Live$/ }).waitFor();
    const lane = page.getByTestId('would-block-lane');
    await lane.getByText('None yet').waitFor();

    // Log mode: the denied address gets through, and the decision says what would have happened.
    await send(LOG_DOMAIN, '/admin', WOULD_BLOCK_IP, 200);
    await send(LOG_DOMAIN, '/welcome', '198.51.100.30', 200);
    await d.t.server.shieldEvents.recorder.flush();

    const laneRow = lane.getByTestId('live-would-block').getByRole('row').filter({ has: page.getByRole('cell', { name: '/admin', exact: true }) });
    await laneRow.waitFor({ timeout: 10_000 });
    expect((await laneRow.getByRole('cell').allInnerTexts()).slice(1, 3)).toEqual(['log (would block)', WOULD_BLOCK_IP]);
    // The other decisions are listed apart, and the lane holds nothing else.
    const others = page.getByTestId('live-decisions');
    await others.getByRole('cell', { name: '/welcome', exact: true }).waitFor();
    expect(await others.getByRole('cell', { name: '/admin', exact: true }).count()).toBe(0);
    expect(await lane.getByRole('cell', { name: '/welcome', exact: true }).count()).toBe(0);
    await lane.getByRole('heading', { name: 'Would block (1)' }).waitFor();
    await expectAccessible(page, 'live view with the would-block lane');
    await screenshot(page, 'shield-live-would-block');

    // Filtered to blocks, there can be no logged decision: the lane goes.
    await page.getByLabel('Action').selectOption('block');
    await expect.poll(() => lane.count()).toBe(0);
    expect(problems).toEqual([]);
  });
});
