// The findings pages in Chromium against a real server. Findings come from real scans through the
// API: a secrets scan and a SAST scan of a local git repository (fixtures). Then: filters live in
// the URL and the rows match them; sorting asks the server (severity most severe first, then the
// other way); a small page size pages to page 2 with the sort kept; a bad filter shows the API's
// message; a code finding's page shows its source → sink path, and triage (status, false positive,
// notes) persists across a reload and appears in the history, as do AI triage (the bundled
// fallback) and verify-fix with their results; a ticket is created in a Jira stand-in and a second
// request shows the 409 with the existing ticket's link; a URL finding shows its request and
// response, and deploying its virtual patch shows the API's refusal until a site serves its host;
// a viewer sees no action buttons. axe on every page and dialog.
import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { browserSuite, checkPage, expectAccessible, startDashboard, watchConsole, type Dashboard, type SignedIn } from '../support/browser.ts';
import { eventually } from '../support/gateway.ts';
import { newId } from '../../platform/ids.ts';
import { loadProviderSettings } from '../../api/integrations/providers/settings.ts';
import { startJiraStandIn, type JiraStandIn } from '../support/providers/jira.ts';

interface Finding {
  id: string;
  title: string;
  severity: string;
  scan_type: string;
  details: Record<string, unknown>;
}

const RANK: Record<string, number> = { critical: 5, high: 4, medium: 3, low: 2, info: 1 };

browserSuite('the findings pages', { timeout: 120_000 }, () => {
  let d: Dashboard;
  let owner: SignedIn;
  let repo: string;
  let findings: Finding[] = [];
  let jira: JiraStandIn;

  async function scan(kind: 'secrets' | 'sast') {
    const started = await owner.call('POST', `/api/v1/${kind}/scans`, { target: `file://${repo}` });
    expect(started.status, started.text).toBe(202);
    await eventually(async () => ['completed', 'failed'].includes((await owner.call('GET', `/api/v1/scans/${started.body.id}`)).body.status), 60_000, 100);
    expect((await owner.call('GET', `/api/v1/scans/${started.body.id}`)).body.status).toBe('completed');
  }

  beforeAll(async () => {
    repo = await mkdtemp(join(tmpdir(), 'aegis-web-findings-'));
    await cp('test/fixtures/scanners/secrets/repo/src', join(repo, 'src'), { recursive: true });
    await cp('test/fixtures/scanners/sast/express-shop', join(repo, 'shop'), { recursive: true });
    const git = (...args: string[]) => execFileSync('git', ['-C', repo, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-q', '-m', 'initial');
    jira = await startJiraStandIn({ projects: ['SEC'] });
    d = await startDashboard({ allowLocalSources: true, allowPrivateTargets: true, rateLimitPerMinute: 100_000, providers: { ...loadProviderSettings({}), jira: jira.settings } });
    owner = await d.signIn('findings-owner@example.com');
    const connected = await owner.call('POST', '/api/v1/integrations/jira/connect', { ...jira.issueToken(), url: jira.url });
    expect(connected.status, connected.text).toBeLessThan(300);
    await Promise.all([scan('secrets'), scan('sast')]);
    findings = (await owner.call('GET', '/api/v1/vulnerabilities?limit=200')).body.data;
  }, 120_000);

  afterAll(async () => {
    await d?.close();
    await jira?.close();
    if (repo) await rm(repo, { recursive: true, force: true });
  });

  const rowSeverities = async (page: SignedIn['page']) => page.getByTestId('finding-row').locator('td:first-child .badge').allTextContents();

  it('lists, filters through the URL, and sorts on the server', async () => {
    expect(findings.length).toBeGreaterThan(6);
    const page = owner.page;
    const problems = watchConsole(page);
    await checkPage(owner, '/findings', 'findings-list', 'Findings');
    await expect.poll(async () => page.getByTestId('finding-row').count()).toBe(Math.min(50, findings.length));

    // Filter by a severity that some (not all) findings have: the URL carries it, every row has it.
    const counts = new Map<string, number>();
    for (const f of findings) counts.set(f.severity, (counts.get(f.severity) ?? 0) + 1);
    const severity = [...counts.keys()].sort((a, b) => RANK[b]! - RANK[a]!)[0]!;
    await page.getByLabel('Severity').selectOption(severity);
    await page.waitForURL((url) => url.searchParams.get('severity') === severity);
    await expect.poll(async () => page.getByTestId('finding-row').count()).toBe(Math.min(50, counts.get(severity)!));
    expect(new Set(await rowSeverities(page))).toEqual(new Set([severity]));
    // Reloading keeps the filter (shareable URL).
    await page.reload();
    await expect.poll(async () => page.getByTestId('finding-row').count()).toBe(Math.min(50, counts.get(severity)!));
    expect(await page.getByLabel('Severity').inputValue()).toBe(severity);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.waitForURL((url) => !url.searchParams.has('severity'));

    // Sort by severity: most severe first, then least severe first.
    await page.getByRole('button', { name: /^Severity/ }).click();
    await page.waitForURL((url) => url.searchParams.get('sort') === '-severity');
    const most = Math.max(...findings.map((f) => RANK[f.severity]!));
    const least = Math.min(...findings.map((f) => RANK[f.severity]!));
    await expect.poll(async () => RANK[(await rowSeverities(page))[0]!]).toBe(most);
    expect(await page.getByRole('columnheader', { name: /Severity/ }).getAttribute('aria-sort')).toBe('descending');
    await page.getByRole('button', { name: /^Severity/ }).click();
    await page.waitForURL((url) => url.searchParams.get('sort') === 'severity');
    await expect.poll(async () => RANK[(await rowSeverities(page))[0]!]).toBe(least);
    expect(problems).toEqual([]);
  });

  it('pages through the cursor with the sort kept', async () => {
    const page = owner.page;
    await page.goto('/findings?sort=-severity&limit=5');
    await expect.poll(async () => page.getByTestId('finding-row').count()).toBe(5);
    const first = await page.getByTestId('finding-row').getByRole('link').allTextContents();
    await page.getByRole('navigation', { name: 'Finding pages' }).getByRole('button', { name: 'Next' }).click();
    await page.getByText('Page 2').waitFor();
    await expect.poll(async () => (await page.getByTestId('finding-row').getByRole('link').allTextContents()).join('|')).not.toBe(first.join('|'));
    const api = (await owner.call('GET', '/api/v1/vulnerabilities?sort=-severity&limit=10')).body.data as Finding[];
    expect(await page.getByTestId('finding-row').getByRole('link').allTextContents()).toEqual(api.slice(5, 10).map((f) => f.title));
    await page.getByRole('button', { name: 'Previous' }).click();
    await page.getByText('Page 1').waitFor();
  });

  it('shows an API refusal with its message', async () => {
    await owner.page.goto('/findings?severity=urgent');
    await owner.page.getByRole('alert').getByText(/unknown values: urgent/).waitFor();
  });

  it("opens a code finding with its source → sink path, and triage persists with its history", async () => {
    const page = owner.page;
    const coded = findings.find((f) => Array.isArray(f.details.path) && (f.details.path as unknown[]).length > 0) ?? findings.find((f) => f.scan_type === 'sast')!;
    await page.goto('/findings?scan_type=sast');
    await page.getByRole('link', { name: coded.title }).first().waitFor();
    await page.goto(`/findings/${coded.id}`);
    await page.getByRole('heading', { level: 1, name: coded.title }).waitFor();
    if (Array.isArray(coded.details.path)) await page.getByRole('heading', { name: 'Source → sink' }).waitFor();
    await checkPage(owner, `/findings/${coded.id}`, 'finding-detail', coded.title);

    await page.getByLabel('Status').selectOption('acknowledged');
    await page.getByLabel('False positive').check();
    await page.getByLabel('Notes').fill('Test fixture, not production code.');
    await page.getByRole('button', { name: 'Save triage' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();

    await page.reload();
    await page.getByRole('heading', { level: 1, name: coded.title }).waitFor();
    expect(await page.getByLabel('Status').inputValue()).toBe('acknowledged');
    expect(await page.getByLabel('False positive').isChecked()).toBe(true);
    expect(await page.getByLabel('Notes').inputValue()).toBe('Test fixture, not production code.');
    const history = page.getByRole('list', { name: 'History, newest first' });
    await history.getByText(`Changed by ${owner.email}`).first().waitFor();
    await history.getByText(/status: open → acknowledged/).waitFor();
    await history.getByText(/false positive: false → true/).waitFor();
    expect((await owner.call('GET', `/api/v1/vulnerabilities/${coded.id}`)).body).toMatchObject({ status: 'acknowledged', false_positive: true });

    // AI triage (the bundled fallback: no AI connection) runs as a job; its verdict appears.
    await page.getByRole('button', { name: 'AI triage' }).click();
    await page.getByRole('status').getByText(/AI triage queued/).waitFor();
    await page.getByRole('region', { name: 'AI triage' }).getByText(/^Verdict:/).waitFor({ timeout: 30_000 });
    await page.getByRole('list', { name: 'History, newest first' }).getByText(`AI triage requested by ${owner.email}`).waitFor();

    // Verify-fix re-runs the scan; the finding is still in the code, so it is reproduced.
    await page.getByRole('button', { name: 'Verify fix' }).click();
    await page.getByRole('region', { name: 'Verify-fix' }).getByText('reproduced', { exact: true }).waitFor({ timeout: 60_000 });
    await page.getByRole('list', { name: 'History, newest first' }).getByText(`Verify-fix requested by ${owner.email}`).waitFor();

    // The list filtered to false positives shows it.
    await page.goto('/findings?false_positive=true');
    await expect.poll(async () => page.getByTestId('finding-row').getByRole('link').allTextContents()).toEqual([coded.title]);

  });

  it('creates a ticket in a connected tracker, and a second one shows the 409 with the link', async () => {
    const page = owner.page;
    const f = findings.find((x) => x.scan_type === 'secrets') ?? findings[0]!;
    await page.goto(`/findings/${f.id}`);
    await page.getByRole('heading', { level: 1, name: f.title }).waitFor();
    await page.getByRole('button', { name: 'Create ticket' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create a ticket' });
    await dialog.waitFor();
    await expect.poll(async () => dialog.getByLabel('Connection').locator('option').count()).toBe(2);
    await expectAccessible(page, 'ticket dialog');
    await dialog.getByLabel('Connection').selectOption({ index: 1 });
    await dialog.getByLabel('Project').fill('SEC');
    await dialog.getByRole('button', { name: 'Create ticket' }).click();
    await page.getByRole('status').getByText(/Ticket requested/).waitFor();
    // The job creates it at the tracker; the page looks again until the link is there.
    await page.getByRole('link', { name: /^SEC-\d+$/ }).waitFor({ timeout: 30_000 });

    await page.getByRole('button', { name: 'Create ticket' }).click();
    await dialog.getByLabel('Connection').selectOption({ index: 1 });
    await dialog.getByLabel('Project').fill('SEC');
    await dialog.getByRole('button', { name: 'Create ticket' }).click();
    await dialog.getByRole('alert').getByText(/already has a ticket/).waitFor();
    expect(await dialog.getByRole('link', { name: /SEC-\d+/ }).count()).toBe(1);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('list', { name: 'History, newest first' }).getByText(`Ticket requested by ${owner.email}`).waitFor();
  });

  it('shows a URL finding with its request and response; a virtual patch refusal shows the API message, then deploys', async () => {
    // A DAST finding as the URL scanner records it (no web target to scan here): written to the
    // database, then read and acted on through the API like any other.
    const orgId = (await owner.call('GET', '/api/v1/me')).body.organization.id as string;
    const id = newId('vuln');
    await d.t.server.database.db
      .insertInto('vulnerabilities')
      .values({
        id,
        org_id: orgId,
        scan_type: 'dast',
        target: 'https://shop.findings.test',
        fingerprint: `fp-${id}`,
        rule_id: 'dast-sqli-error',
        title: 'SQL injection (error based)',
        severity: 'critical',
        cwe: 'CWE-89',
        location: JSON.stringify({ kind: 'url', url: 'https://shop.findings.test/search?q=1', method: 'GET', parameter: 'q' }),
        evidence: 'You have an error in your SQL syntax',
        details: JSON.stringify({
          check: {},
          attack: { class: 'sqli', method: 'GET', path: '/search', parameter: 'q', in: 'query' },
          request: "GET /search?q=1' HTTP/1.1\nHost: shop.findings.test",
          response: 'HTTP/1.1 500 Internal Server Error\n\nYou have an error in your SQL syntax',
        }),
        status: 'open',
        first_scan_id: 'scan_seed',
        last_scan_id: 'scan_seed',
        first_seen_at: new Date(),
        last_seen_at: new Date(),
      })
      .execute();
    const page = owner.page;
    await checkPage(owner, `/findings/${id}`, 'finding-detail-url', 'SQL injection (error based)');
    expect(await page.getByLabel('Request', { exact: true }).textContent()).toContain("GET /search?q=1'");
    expect(await page.getByLabel('Response', { exact: true }).textContent()).toContain('500 Internal Server Error');

    await page.getByRole('button', { name: 'Deploy virtual patch' }).click();
    const dialog = page.getByRole('dialog', { name: 'Deploy a virtual patch' });
    await dialog.getByRole('button', { name: 'Deploy' }).click();
    await dialog.getByRole('alert').getByText(/no Shield site of this organisation serves shop\.findings\.test/).waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    const site = await owner.call('POST', '/api/v1/shield/sites', { domain: 'shop.findings.test', origin_url: 'https://origin.example.net', mode: 'block' });
    expect(site.status, site.text).toBe(201);
    await page.getByRole('button', { name: 'Deploy virtual patch' }).click();
    await dialog.getByRole('button', { name: 'Deploy' }).click();
    await page.getByRole('status').getByText(/Virtual patch .* deployed on \/search/).waitFor();
    await page.getByRole('button', { name: 'Virtual patch deployed' }).waitFor();
    await page.getByRole('list', { name: 'History, newest first' }).getByText(`Virtual patch deployed by ${owner.email}`).waitFor();
  });

  it('shows a viewer the findings but no action buttons', async () => {
    const viewer = await d.signIn('findings-viewer@example.com', { role: 'viewer', inviter: owner });
    const id = findings[0]!.id;
    await checkPage(viewer, `/findings/${id}`, 'finding-detail-viewer', findings[0]!.title);
    await viewer.page.getByRole('heading', { name: 'History' }).waitFor();
    for (const name of ['Save triage', 'Verify fix', 'Create ticket', 'AI triage', 'Deploy virtual patch']) {
      expect(await viewer.page.getByRole('button', { name }).count(), name).toBe(0);
    }
    expect(await viewer.page.getByLabel('Notes').count()).toBe(0);
    const refused = await viewer.call('PATCH', `/api/v1/vulnerabilities/${id}`, { status: 'resolved' });
    expect(refused.status).toBe(403);
  });
});
