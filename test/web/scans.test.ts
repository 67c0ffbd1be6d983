// The Scans pages in Chromium against a real server (local sources allowed): a secrets scan of a
// local git repository started from the form, followed live until it completes, with its findings,
// diff and coverage; a 422 from the API shown on the form; a running DAST scan canceled; a viewer
// sees no Start or Cancel; every page axe-clean at both widths.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { browserSuite, checkPage, expectAccessible, screenshot, startDashboard, watchConsole, type Dashboard, type SignedIn } from '../support/browser.ts';

browserSuite('the Scans pages', { timeout: 120_000 }, () => {
  let d: Dashboard;
  let owner: SignedIn;
  let repo: string;
  // A web server that accepts connections and never answers: a DAST scan of it keeps running.
  let silent: Server;
  const sockets: Socket[] = [];
  let completedScanId = '';

  beforeAll(async () => {
    repo = await mkdtemp(join(tmpdir(), 'aegis-web-scan-'));
    // Fake keys the secrets rules find (test/fixtures/scanners/secrets/repo/.env).
    await writeFile(join(repo, '.env'), 'NODE_ENV=production\nAWS_ACCESS_KEY_ID=AKIA4VISCG5BI2EIRQO7\nAWS_SECRET_ACCESS_KEY=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\n');
    await writeFile(join(repo, 'README.md'), '# orders service\n');
    const git = (...args: string[]) => execFileSync('git', ['-C', repo, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-q', '-m', 'initial');
    silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    d = await startDashboard({ allowLocalSources: true, allowPrivateTargets: true, rateLimitPerMinute: 100_000 });
    owner = await d.signIn('scans-owner@example.com');
  }, 120_000);

  afterAll(async () => {
    await d?.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent?.close(resolve));
    if (repo) await rm(repo, { recursive: true, force: true });
  });

  it('starts a secrets scan of a local repository and shows its findings', async () => {
    const { page } = owner;
    const problems = watchConsole(page);
    await checkPage(owner, '/scans', 'scans-list-empty', 'Scans');
    await page.getByRole('link', { name: 'Start a scan' }).first().click();
    await page.getByRole('heading', { level: 1, name: 'Start a scan' }).waitFor();
    await expectAccessible(page, 'choose a kind of scan');
    await page.getByRole('navigation', { name: 'Kind of scan' }).getByRole('link', { name: 'Secrets' }).click();
    await page.getByRole('heading', { level: 1, name: 'New Secrets scan' }).waitFor();
    await expectAccessible(page, 'new secrets scan');

    // The API's validation error is shown with the field it names.
    await page.getByRole('button', { name: 'Start scan' }).click();
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/target/);
    expect(await page.getByRole('list', { name: 'Fields to correct' }).textContent()).toContain('target');

    await page.getByRole('textbox', { name: 'Repository URL or path' }).fill(repo);
    await page.getByRole('button', { name: 'Start scan' }).click();
    await page.waitForURL(/\/scans\/scn_|\/scans\/[^/]+$/);
    completedScanId = new URL(page.url()).pathname.split('/').pop()!;
    await page.getByRole('heading', { level: 1, name: 'Secrets scan' }).waitFor();
    // Live progress: the same page, without a reload, reaches completed.
    await page.locator(`[data-testid="scan-status-${completedScanId}"][data-status="completed"]`).waitFor({ timeout: 60_000 });
    const findings = page.getByTestId('scan-findings');
    await findings.waitFor();
    expect(await findings.locator('tbody tr').count()).toBeGreaterThanOrEqual(1);
    expect(await findings.textContent()).toMatch(/AWS/i);
    expect(await findings.textContent()).toContain('.env');
    const all = page.getByRole('link', { name: /All \d+ findings of this scan/ });
    expect(await all.getAttribute('href')).toBe(`/findings?scan_id=${encodeURIComponent(completedScanId)}`);
    // First scan of the target: everything is new; coverage counts the files.
    expect(Number(await page.getByTestId('diff-new').textContent())).toBeGreaterThanOrEqual(1);
    expect(await page.getByTestId('scan-coverage').textContent()).toMatch(/Files scanned\d+/);
    expect(await page.getByRole('link', { name: 'Download SARIF' }).getAttribute('href')).toBe(`/api/v1/scans/${completedScanId}/sarif`);
    await checkPage(owner, `/scans/${completedScanId}`, 'scans-detail', 'Secrets scan');

    await page.getByRole('link', { name: 'All scans' }).click();
    const row = page.getByTestId('scan-row').first();
    await row.waitFor();
    expect(await row.textContent()).toContain(repo);
    expect(await row.getByTestId(`scan-status-${completedScanId}`).getAttribute('data-status')).toBe('completed');
    await checkPage(owner, '/scans', 'scans-list', 'Scans');
    // The type filter asks the API: no DAST scan yet.
    await page.getByLabel('Type').selectOption('dast');
    await page.getByText('No scan matches these filters.').waitFor();
    expect(problems).toEqual([]);
  });

  it('cancels a running scan from its page', async () => {
    const { page } = owner;
    await checkPage(owner, '/scans/new/api', 'scans-new-api', 'New API scan');
    await checkPage(owner, '/scans/new/cve', 'scans-new-cve', 'New CVE scan');
    // A CVE scan needs CVE ids or tags: the API's refusal is shown.
    await page.getByLabel('Target URL').fill('http://127.0.0.1:9/');
    await page.getByRole('button', { name: 'Start scan' }).click();
    expect(await page.getByRole('alert').textContent()).toMatch(/cve|tag/i);
    await checkPage(owner, '/scans/new/dast', 'scans-new-dast', 'New DAST scan');
    const address = silent.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    await page.getByLabel('Start URL').fill(`http://127.0.0.1:${address.port}/`);
    await page.getByRole('button', { name: 'Start scan' }).click();
    // On the scan's own page, whose path ends in its id (the form's heading, "New DAST scan", also contains "DAST scan").
    await page.waitForURL(/\/scans\/scn_|\/scans\/[^/]+$/);
    await page.getByRole('heading', { level: 1, name: 'DAST scan', exact: true }).waitFor();
    const id = new URL(page.url()).pathname.split('/').pop()!;
    await page.getByRole('button', { name: 'Cancel scan' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel this scan?' });
    await dialog.waitFor();
    await expectAccessible(page, 'cancel dialog');
    await screenshot(page, 'scans-cancel-dialog');
    await dialog.getByRole('button', { name: 'Cancel scan' }).click();
    // The page shows the status the next poll reads: allow for a busy machine.
    await page.locator(`[data-testid="scan-status-${id}"][data-status="canceled"]`).waitFor({ timeout: 60_000 });
    expect(await page.getByRole('button', { name: 'Cancel scan' }).count()).toBe(0);
    const scan = await owner.call('GET', `/api/v1/scans/${id}`);
    expect(scan.body.status).toBe('canceled');
  }, 120_000);

  it('shows a viewer no Start or Cancel', async () => {
    const viewer = await d.signIn('scans-viewer@example.com', { role: 'viewer', inviter: owner });
    await checkPage(viewer, '/scans', 'scans-list-viewer', 'Scans');
    await viewer.page.getByTestId('scan-row').first().waitFor();
    expect(await viewer.page.getByRole('link', { name: 'Start a scan' }).count()).toBe(0);
    // A running scan (started by the owner's API call) shows the viewer no Cancel button.
    const address = silent.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    const started = await owner.call('POST', '/api/v1/scans', { target: `http://127.0.0.1:${address.port}/` });
    expect(started.status, started.text).toBe(202);
    await viewer.page.goto(`/scans/${started.body.id}`);
    await viewer.page.getByRole('heading', { level: 1, name: 'DAST scan', exact: true }).waitFor();
    await viewer.page.getByText(completedScanId ? 'Summary' : 'Summary').waitFor();
    expect(await viewer.page.getByRole('button', { name: 'Cancel scan' }).count()).toBe(0);
    await owner.call('DELETE', `/api/v1/scans/${started.body.id}`);
  });
});
