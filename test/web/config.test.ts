// The Config-as-code pages in Chromium against a real server (local sources allowed): a bare git
// repository of YAML registered from the form (webhook secret shown once), its first sync in the
// history, a new commit synced with Sync now and its plan shown (a VirtualPatch to create) with its
// impact on recorded traffic, the repository removed; a viewer only reads what "managed" means;
// every page axe-clean.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { browserSuite, checkPage, expectAccessible, startDashboard, watchConsole, type Dashboard, type SignedIn } from '../support/browser.ts';

const site = `apiVersion: aegis/v1
kind: ShieldSite
metadata: { name: shop }
spec: { domain: shop.web-config.test, origin_url: 'http://127.0.0.1:9', mode: block }
`;
const patch = `apiVersion: aegis/v1
kind: VirtualPatch
metadata: { name: search-sqli }
spec: { site: shop, url_pattern: /search, method: GET, match_param: q, match_regex: '(?i)union\\s+select', action: block }
`;

browserSuite('the Config-as-code pages', { timeout: 120_000 }, () => {
  let d: Dashboard;
  let owner: SignedIn;
  let root: string;
  let bare: string;
  let work: string;
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-C', cwd, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', ...args], { stdio: 'pipe' }).toString().trim();
  const commit = async (name: string, content: string, message: string) => {
    await writeFile(join(work, name), content);
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '-m', message);
    git(work, 'push', '-q', 'origin', 'main');
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'aegis-web-config-'));
    bare = join(root, 'config.git');
    work = join(root, 'work');
    execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
    execFileSync('git', ['clone', '-q', bare, work], { stdio: 'pipe' });
    await commit('site.yaml', site, 'the shop site');
    d = await startDashboard({ allowLocalSources: true, rateLimitPerMinute: 100_000 });
    owner = await d.signIn('config-owner@example.com');
  }, 120_000);

  afterAll(async () => {
    await d?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('registers a repository, syncs it now and shows the plan of each sync', async () => {
    const { page } = owner;
    const problems = watchConsole(page);
    await checkPage(owner, '/config', 'config-list-empty', 'Config as code');
    expect(await page.getByRole('heading', { name: 'Objects a repository manages' }).count()).toBe(1);

    await page.getByRole('link', { name: 'Add a repository' }).click();
    await page.getByRole('heading', { level: 1, name: 'Add a config repository' }).waitFor();
    await expectAccessible(page, 'add config repository');
    // The API's refusal (a bad name) is shown with its field.
    await page.getByLabel('Name').fill('Not A Valid Name');
    await page.getByLabel('Repository URL').fill(`file://${bare}`);
    await page.getByRole('button', { name: 'Add repository' }).click();
    await page.getByRole('list', { name: 'Fields to correct' }).waitFor();
    expect(await page.getByRole('list', { name: 'Fields to correct' }).textContent()).toContain('name');

    await page.getByLabel('Name').fill('shop-config');
    await page.getByLabel('Poll interval in seconds (optional)').fill('3600');
    await page.getByRole('button', { name: 'Add repository' }).click();
    await page.getByRole('heading', { level: 1, name: 'Added shop-config' }).waitFor();
    expect(await page.getByTestId('secret-value').textContent()).toMatch(/^whsec_/);
    await page.getByRole('link', { name: 'Open shop-config and follow its first sync' }).click();
    await page.getByRole('heading', { level: 1, name: 'shop-config' }).waitFor();
    const repoUrl = new URL(page.url()).pathname;

    // The first sync (queued at registration) appears in the history and completes, live.
    const firstRow = page.getByTestId('sync-row').first();
    await firstRow.waitFor();
    await page.getByTestId('sync-row').filter({ hasText: 'applied' }).first().waitFor({ timeout: 30_000 });
    expect(await firstRow.textContent()).toMatch(/1 to create/);

    // A new commit, synced at once from the dashboard: its plan creates the virtual patch.
    await commit('patch.yaml', patch, 'block SQL injection in search');
    await page.getByRole('button', { name: 'Sync now' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sync of shop-config' }).waitFor();
    await page.getByTestId('sync-result').filter({ hasText: 'applied' }).waitFor({ timeout: 30_000 });
    const changes = page.getByTestId('sync-changes');
    expect(await changes.textContent()).toMatch(/Create VirtualPatch shop\/search-sqli/);
    // Its impact on recorded traffic (the site has none recorded, and the section says so).
    expect(await page.getByTestId('sync-impact').textContent()).toMatch(/Impact on recorded traffic[\s\S]*shop/);
    const planUrl = new URL(page.url()).pathname;
    await checkPage(owner, planUrl, 'config-sync-plan', 'Sync of shop-config');

    await page.getByRole('link', { name: 'Back to shop-config' }).click();
    await page.getByRole('heading', { level: 1, name: 'shop-config' }).waitFor();
    await page.getByTestId('sync-row').nth(1).waitFor();
    expect(await page.getByTestId('sync-row').count()).toBe(2);
    expect(await page.getByTestId('sync-row').first().textContent()).toMatch(/manual/);
    await checkPage(owner, repoUrl, 'config-repo', 'shop-config');

    // The patch exists in Shield, labelled with the repository's source.
    const sites = await owner.call('GET', '/api/v1/shield/sites');
    const shop = sites.body.data.find((s: { domain: string }) => s.domain === 'shop.web-config.test');
    const patches = await owner.call('GET', `/api/v1/shield/sites/${shop.id}/virtual-patches`);
    expect(patches.body.data[0].labels['aegis.dev/source']).toBeTruthy();

    await checkPage(owner, '/config', 'config-list', 'Config as code');
    const row = page.getByTestId('config-repo-row').first();
    expect(await row.textContent()).toMatch(/synced/);
    expect(problems).toEqual([]);
  });

  it('shows a viewer no repository and no write button', async () => {
    const viewer = await d.signIn('config-viewer@example.com', { role: 'viewer', inviter: owner });
    await checkPage(viewer, '/config', 'config-viewer', 'Config as code');
    expect(await viewer.page.getByRole('button', { name: /Sync now/ }).count()).toBe(0);
    expect(await viewer.page.getByRole('link', { name: 'Add a repository' }).count()).toBe(0);
    expect(await viewer.page.getByText('managed by the organisation').count()).toBe(1);
  });

  it('removes a repository after a confirmation', async () => {
    const { page } = owner;
    await page.goto('/config');
    await page.getByRole('link', { name: 'shop-config' }).click();
    await page.getByRole('heading', { level: 1, name: 'shop-config' }).waitFor();
    await page.getByRole('button', { name: 'Remove' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove shop-config?' });
    await dialog.waitFor();
    await expectAccessible(page, 'remove config repository dialog');
    await dialog.getByRole('button', { name: 'Remove repository' }).click();
    await page.getByRole('heading', { level: 1, name: 'Config as code' }).waitFor();
    await page.getByText('No config repository yet.').waitFor();
  });
});
