// The overview in Chromium: a new organisation sees how to get started (links to start a scan and
// add a site); after a real secrets scan through the API, the open findings by severity and age,
// the recent scan and Shield's blocks show the counts the API computes, and a severity's number
// links to the findings list filtered to what it counts. axe on both states.
import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { browserSuite, checkPage, startDashboard, watchConsole, type Dashboard, type SignedIn } from '../support/browser.ts';
import { eventually } from '../support/gateway.ts';

browserSuite('the overview page', { timeout: 120_000 }, () => {
  let d: Dashboard;
  let owner: SignedIn;
  let repo: string;

  beforeAll(async () => {
    repo = await mkdtemp(join(tmpdir(), 'aegis-web-overview-'));
    await cp('test/fixtures/scanners/secrets/repo/src', join(repo, 'src'), { recursive: true });
    const git = (...args: string[]) => execFileSync('git', ['-C', repo, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-q', '-m', 'initial');
    d = await startDashboard({ allowLocalSources: true, rateLimitPerMinute: 100_000 });
    owner = await d.signIn('overview-owner@example.com');
  }, 120_000);

  afterAll(async () => {
    await d?.close();
    if (repo) await rm(repo, { recursive: true, force: true });
  });

  it('shows a new organisation how to start', async () => {
    const problems = watchConsole(owner.page);
    await checkPage(owner, '/', 'overview-empty', 'Overview');
    const start = owner.page.getByRole('region', { name: 'Get started' });
    expect(await start.getByRole('link', { name: 'Start a scan' }).getAttribute('href')).toBe('/scans');
    expect(await start.getByRole('link', { name: 'Add a Shield site' }).getAttribute('href')).toBe('/shield');
    expect(problems).toEqual([]);
  });

  it('counts what a scan found, as the API does, and links each count to its list', async () => {
    const started = await owner.call('POST', '/api/v1/secrets/scans', { target: `file://${repo}` });
    expect(started.status, started.text).toBe(202);
    await eventually(async () => (await owner.call('GET', `/api/v1/scans/${started.body.id}`)).body.status === 'completed', 60_000, 100);
    const site = await owner.call('POST', '/api/v1/shield/sites', { domain: 'shop.overview.test', origin_url: 'https://origin.example.net', mode: 'block' });
    expect(site.status, site.text).toBe(201);
    const listed = (await owner.call('GET', '/api/v1/vulnerabilities?limit=200&status=open,acknowledged&false_positive=false')).body.data as Array<{ severity: string }>;
    expect(listed.length).toBeGreaterThan(0);

    await checkPage(owner, '/', 'overview', 'Overview');
    const page = owner.page;
    expect(await page.getByRole('region', { name: 'Get started' }).count()).toBe(0);
    expect(await page.getByTestId('open-total').textContent()).toBe(String(listed.length));
    for (const severity of ['critical', 'high', 'medium', 'low', 'info']) {
      expect(await page.getByTestId(`open-${severity}`).locator('.stat').textContent(), severity).toBe(String(listed.filter((f) => f.severity === severity).length));
    }
    // All new: every open finding is under 7 days old.
    expect(await page.getByTestId('age-under_7_days').textContent()).toBe(String(listed.length));
    expect(await page.getByTestId('age-over_90_days').textContent()).toBe('0');
    const scans = page.getByTestId('recent-scan');
    expect(await scans.count()).toBe(1);
    await scans.getByText('completed').waitFor();
    expect(await page.getByTestId('blocked-total').textContent()).toBe('0');
    await page.getByTestId('site-blocks').getByRole('link', { name: 'shop.overview.test' }).waitFor();

    const top = listed.map((f) => f.severity).find((s) => s === 'critical' || s === 'high') ?? listed[0]!.severity;
    await page.getByTestId(`open-${top}`).click();
    await page.waitForURL((url) => url.pathname === '/findings' && url.searchParams.get('severity') === top && url.searchParams.get('status') === 'open,acknowledged');
    await page.getByRole('heading', { level: 1, name: 'Findings' }).waitFor();
    await expect.poll(async () => page.getByTestId('finding-row').count()).toBe(listed.filter((f) => f.severity === top).length);
  });
});
