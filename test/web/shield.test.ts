// The Shield configuration pages in Chromium against a real server: a site and a virtual patch made
// through the dialogs (and the API's 422 shown by the form), the confirmation before a weaker mode,
// the all-or-nothing CSV import with its refused rows, editing and deleting rules, managed objects
// marked, a viewer without write buttons, and axe on every page and open dialog.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { browserSuite, checkPage, expectAccessible, NARROW, screenshot, startDashboard, watchConsole, WIDE, type Dashboard, type SignedIn } from '../support/browser.ts';

// A private literal address: the origin policy refuses only link-local and metadata addresses, and a
// literal needs no DNS.
const ORIGIN = 'http://10.0.0.5:8080';

browserSuite('Shield configuration pages', { timeout: 120_000 }, () => {
  let d: Dashboard;
  let owner: SignedIn;
  let problems: string[];
  let siteId: string;
  const domain = 'shop.shield-web.test';

  beforeAll(async () => {
    // Many page loads within a minute: the default API rate limit (100 a minute) is not under test here.
    d = await startDashboard({ rateLimitPerMinute: 100_000 });
    owner = await d.signIn('shield-owner@example.com');
    problems = watchConsole(owner.page);
  }, 120_000);
  afterAll(() => d?.close(), 120_000);

  it('creates a site and a virtual patch through the dialogs, with the API refusal shown by the form', async () => {
    const { page } = owner;
    await checkPage(owner, '/shield', 'shield-list-empty', 'Shield');
    await page.getByRole('button', { name: 'New site' }).click();
    const dialog = page.getByRole('dialog', { name: 'New site' });
    await dialog.getByLabel('Domain').fill(domain);
    await dialog.getByLabel('Origin URL').fill(ORIGIN);
    await dialog.getByLabel('Mode', { exact: true }).selectOption('block');
    await expectAccessible(page, 'new site dialog');
    await screenshot(page, 'shield-new-site-dialog');
    await dialog.getByRole('button', { name: 'Create site' }).click();
    await page.getByRole('heading', { level: 1, name: domain }).waitFor();
    siteId = /\/shield\/sites\/([^/]+)\/settings$/.exec(new URL(page.url()).pathname)?.[1] ?? '';
    expect(siteId).toMatch(/^site_/);

    await page.getByRole('navigation', { name: 'Site' }).getByRole('link', { name: 'Virtual patches' }).click();
    await page.waitForURL(`**/shield/sites/${siteId}/virtual-patches`);
    await page.getByText('No virtual patches').waitFor();
    await page.getByRole('button', { name: 'New virtual patch' }).click();
    const patch = page.getByRole('dialog', { name: 'New virtual patch' });
    await patch.getByLabel('URL pattern').fill('/search');
    await patch.getByLabel('Method').selectOption('GET');
    await patch.getByLabel('Parameter').fill('q');
    // Lookbehind is not RE2: the API refuses it with 422 naming the field, shown next to the form.
    await patch.getByLabel('Pattern (RE2)').fill('(?<=x)union');
    await patch.getByRole('button', { name: 'Create patch' }).click();
    await patch.getByText(/is not a valid RE2 pattern/).first().waitFor();
    expect(await patch.locator('.field-problems').textContent()).toContain('Pattern (RE2)');
    await expectAccessible(page, 'virtual patch dialog with errors');
    await screenshot(page, 'shield-new-patch-errors');
    await patch.getByLabel('Pattern (RE2)').fill('(?i)union\\s+select');
    await patch.getByRole('button', { name: 'Create patch' }).click();
    await page.getByRole('cell', { name: '(?i)union\\s+select' }).waitFor();
    expect(await page.getByRole('dialog').count()).toBe(0);

    const listed = await owner.call('GET', `/api/v1/shield/sites/${siteId}/virtual-patches`);
    expect(listed.body.data).toMatchObject([{ url_pattern: '/search', method: 'GET', match_param: 'q', match_regex: '(?i)union\\s+select', action: 'block' }]);
    expect(problems).toEqual([]);
  });

  it('asks before weakening the mode, and not before strengthening it', async () => {
    const { page } = owner;
    await page.goto(`/shield/sites/${siteId}/settings`);
    const mode = page.getByLabel('Mode', { exact: true });
    await mode.selectOption('log');
    await page.getByRole('button', { name: 'Change mode' }).click();
    const confirm = page.getByRole('dialog', { name: /Weaken .* to Log only/ });
    await confirm.getByText(/Nothing is blocked or challenged any more/).waitFor();
    await expectAccessible(page, 'weaken mode dialog');
    await screenshot(page, 'shield-weaken-mode');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    expect((await owner.call('GET', `/api/v1/shield/sites/${siteId}`)).body.mode).toBe('block');

    await mode.selectOption('challenge');
    await page.getByRole('button', { name: 'Change mode' }).click();
    await page.getByRole('dialog', { name: /Weaken .* to Challenge/ }).getByRole('button', { name: 'Switch to Challenge' }).click();
    await page.getByText('Mode changed to Challenge').waitFor();
    expect((await owner.call('GET', `/api/v1/shield/sites/${siteId}`)).body.mode).toBe('challenge');

    // Stronger: applied without a question.
    await page.getByLabel('Mode', { exact: true }).selectOption('block');
    await page.getByRole('button', { name: 'Change mode' }).click();
    await page.getByText('Mode changed to Block').waitFor();
    expect(await page.getByRole('dialog').count()).toBe(0);
    expect((await owner.call('GET', `/api/v1/shield/sites/${siteId}`)).body.mode).toBe('block');
  });

  it('imports a CSV all or nothing and shows each refused row', async () => {
    const { page } = owner;
    await page.goto(`/shield/sites/${siteId}/ip-access`);
    await page.getByText('No IP access rules').waitFor();
    await page.getByRole('button', { name: 'Import CSV' }).click();
    const dialog = page.getByRole('dialog', { name: 'Import IP access rules' });
    await dialog.getByText(/none\s+of the rows is imported/).waitFor();
    await dialog.getByLabel('Or paste the CSV').fill('type,value,action,note\nip,203.0.113.7,deny,scanner\nip,999.1.1.1,deny,typo\ncountry,NL,allow,office\n');
    await dialog.getByRole('button', { name: 'Import', exact: true }).click();
    const refused = dialog.getByRole('table', { name: 'Refused rows' });
    await refused.waitFor();
    const row = refused.getByRole('row').nth(1);
    expect(await row.getByRole('cell').nth(0).textContent()).toBe('3');
    expect(await row.getByRole('cell').nth(1).textContent()).toBe('value');
    expect(await row.getByRole('cell').nth(2).textContent()).toBe('ip,999.1.1.1,deny,typo');
    expect(await row.getByRole('cell').nth(3).textContent()).toContain('is not an IPv4 or IPv6 address');
    await dialog.getByText('Nothing was imported.').waitFor();
    await expectAccessible(page, 'csv import with errors');
    await screenshot(page, 'shield-csv-import-errors');
    expect((await owner.call('GET', `/api/v1/shield/sites/${siteId}/ip-access`)).body.data).toEqual([]);

    await dialog.getByLabel('Or paste the CSV').fill('type,value,action,note\nip,203.0.113.7,deny,scanner\nip,198.51.100.9,deny,fixed\ncountry,NL,allow,office\n');
    await dialog.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByText('Imported 3 rules').waitFor();
    await page.getByRole('cell', { name: '198.51.100.9', exact: true }).waitFor();
  });

  it('edits and deletes rules, and marks the ones a config repository manages', async () => {
    const { page } = owner;
    const created = await owner.call('POST', `/api/v1/shield/sites/${siteId}/rate-limits`, {
      identity: 'ip', url_pattern: '/login', method: 'POST', budget: 10, window_seconds: 60, action: 'block', labels: { 'aegis.dev/source': 'repo-main' },
    });
    expect(created.status).toBe(201);
    await page.goto(`/shield/sites/${siteId}/rate-limits`);
    await page.getByText('managed by repo-main').waitFor();
    await page.getByRole('button', { name: /^Edit POST \/login/ }).click();
    const edit = page.getByRole('dialog', { name: 'Edit rate limit' });
    expect(await edit.getByRole('note').textContent()).toContain('managed by repo-main');
    await edit.getByLabel('Budget').fill('25');
    await edit.getByRole('button', { name: 'Save rule' }).click();
    await page.getByRole('cell', { name: '25 per 60 s', exact: true }).waitFor();
    expect((await owner.call('GET', `/api/v1/shield/sites/${siteId}/rate-limits/${created.body.id}`)).body).toMatchObject({ budget: 25, labels: { 'aegis.dev/source': 'repo-main' } });

    await page.getByRole('button', { name: /^Delete POST \/login/ }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete this rate limit?' });
    await confirm.getByText(/its next sync will create it again/).waitFor();
    await confirm.getByRole('button', { name: 'Delete rate limit' }).click();
    await page.getByText('No rate limits on this site.').waitFor();
    expect((await owner.call('GET', `/api/v1/shield/sites/${siteId}/rate-limits/${created.body.id}`)).status).toBe(404);

    // An IP rule: action and note change, the value is its identity.
    await page.goto(`/shield/sites/${siteId}/ip-access`);
    await page.getByRole('button', { name: 'Edit ip 203.0.113.7' }).click();
    const ipEdit = page.getByRole('dialog', { name: 'Edit IP access rule' });
    await ipEdit.getByLabel('Action').selectOption('challenge');
    await ipEdit.getByLabel('Note').fill('seen probing /admin');
    await ipEdit.getByRole('button', { name: 'Save rule' }).click();
    await page.getByRole('cell', { name: 'seen probing /admin', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Delete ip 203.0.113.7' }).click();
    await page.getByRole('dialog', { name: 'Delete this IP access rule?' }).getByRole('button', { name: 'Delete IP access rule' }).click();
    await expect.poll(() => page.getByRole('cell', { name: '203.0.113.7', exact: true }).count()).toBe(0);
  });

  it('uploads a schema and shows its summary', async () => {
    const { page } = owner;
    await page.goto(`/shield/sites/${siteId}/schema`);
    await page.getByText('No schema').waitFor();
    const doc = 'openapi: 3.1.0\ninfo: { title: Shop, version: "1" }\npaths:\n  /orders/{id}:\n    get:\n      operationId: getOrder\n      parameters:\n        - { name: id, in: path, required: true, schema: { type: integer } }\n      responses: { "200": { description: ok } }\n';
    await page.getByLabel('Or paste the document').fill(doc);
    await page.getByRole('button', { name: 'Upload schema' }).click();
    await page.getByRole('cell', { name: 'getOrder', exact: true }).waitFor();
    await page.getByText('3.1.0', { exact: true }).waitFor();
    await page.getByLabel('Enforcement strictness').selectOption('strict');
    await page.getByRole('button', { name: 'Change strictness' }).click();
    await expect.poll(async () => (await owner.call('GET', `/api/v1/shield/sites/${siteId}/schema-config`)).body.strictness).toBe('strict');
    await page.getByLabel('Enforcement strictness').selectOption('lenient');
    await page.getByRole('button', { name: 'Change strictness' }).click();
    await page.getByRole('dialog', { name: 'Lower the schema strictness?' }).getByRole('button', { name: 'Lower to lenient' }).click();
    await expect.poll(async () => (await owner.call('GET', `/api/v1/shield/sites/${siteId}/schema-config`)).body.strictness).toBe('lenient');
  });

  it('passes axe on the list, the site settings and every rule tab', async () => {
    await checkPage(owner, '/shield', 'shield-list', 'Shield');
    await checkPage(owner, `/shield/sites/${siteId}/settings`, 'shield-site-settings', domain);
    await checkPage(owner, `/shield/sites/${siteId}/virtual-patches`, 'shield-virtual-patches', domain);
    await checkPage(owner, `/shield/sites/${siteId}/ip-access`, 'shield-ip-access', domain);
    await checkPage(owner, `/shield/sites/${siteId}/rate-limits`, 'shield-rate-limits', domain);
    await checkPage(owner, `/shield/sites/${siteId}/schema`, 'shield-schema', domain);
    // At 390 px nothing widens the page: wide tables scroll inside their own box.
    await owner.page.setViewportSize(NARROW);
    for (const tab of ['settings', 'virtual-patches', 'ip-access', 'schema']) {
      await owner.page.goto(`/shield/sites/${siteId}/${tab}`);
      await owner.page.getByRole('heading', { level: 2 }).first().waitFor();
      await owner.page.waitForLoadState('networkidle');
      expect(await owner.page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth), tab).toBeLessThanOrEqual(NARROW.width);
    }
    await owner.page.setViewportSize(WIDE);
    // The managed rules catalogue, opened.
    await owner.page.goto(`/shield/sites/${siteId}/settings`);
    await owner.page.getByRole('heading', { level: 2, name: 'Managed rules' }).waitFor();
    await owner.page.locator('summary', { hasText: 'Catalogue' }).click();
    await owner.page.getByRole('cell', { name: 'sqli.tautology', exact: true }).waitFor();
    await expectAccessible(owner.page, 'managed rules catalogue');
    await screenshot(owner.page, 'shield-managed-rules');
    // A rule switched off for the whole site is a site-wide exclusion, and back on removes it.
    await owner.page.getByRole('button', { name: 'Turn off sqli.tautology' }).click();
    await owner.page.getByRole('button', { name: 'Turn on sqli.tautology' }).waitFor();
    expect((await owner.call('GET', `/api/v1/shield/sites/${siteId}`)).body.managed_rules.exclusions).toEqual([{ rules: ['sqli.tautology'] }]);
    await owner.page.getByRole('button', { name: 'Turn on sqli.tautology' }).click();
    await owner.page.getByRole('button', { name: 'Turn off sqli.tautology' }).waitFor();
    expect((await owner.call('GET', `/api/v1/shield/sites/${siteId}`)).body.managed_rules.exclusions).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('shows a viewer no create, edit, delete or import button', async () => {
    const viewer = await d.signIn('shield-viewer@example.com', { role: 'viewer', inviter: owner });
    const { page } = viewer;
    const writes = /^(New site|New virtual patch|New IP access rule|New rate limit|Import CSV|Edit|Delete|Change mode|Change strictness|Upload schema|Remove schema|Save managed rules|Turn off)/;
    await page.goto('/shield');
    await page.getByRole('link', { name: domain }).waitFor();
    expect(await page.getByRole('button', { name: writes }).count()).toBe(0);
    for (const tab of ['settings', 'virtual-patches', 'ip-access', 'rate-limits', 'schema']) {
      await page.goto(`/shield/sites/${siteId}/${tab}`);
      await page.getByRole('heading', { level: 2 }).first().waitFor();
      await page.waitForLoadState('networkidle');
      expect(await page.getByRole('button', { name: writes }).count(), tab).toBe(0);
    }
  });

  it('edits a site and deletes it after confirmation; the create dialog passes axe at 390 px dark', async () => {
    const { page } = owner;
    await page.setViewportSize(NARROW);
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto('/shield');
    await page.getByRole('button', { name: 'New site' }).click();
    await page.getByRole('dialog', { name: 'New site' }).getByLabel('Domain').waitFor();
    await expectAccessible(page, 'new site dialog at 390 dark');
    await screenshot(page, 'shield-new-site-dialog-390-dark');
    await page.getByRole('dialog', { name: 'New site' }).getByRole('button', { name: 'Cancel' }).click();
    await page.setViewportSize(WIDE);
    await page.emulateMedia({ colorScheme: 'light' });

    await page.goto(`/shield/sites/${siteId}/settings`);
    await page.getByRole('button', { name: 'Edit site' }).click();
    const edit = page.getByRole('dialog', { name: `Edit ${domain}` });
    await edit.getByLabel('Origin URL').fill('http://10.0.0.6:8081');
    await edit.getByRole('button', { name: 'Save site' }).click();
    await page.getByText('http://10.0.0.6:8081', { exact: true }).waitFor();

    await page.getByRole('button', { name: 'Delete site' }).click();
    const confirm = page.getByRole('dialog', { name: `Delete ${domain}?` });
    await confirm.getByText(/all its rules and its schema are deleted/).waitFor();
    await confirm.getByRole('button', { name: 'Delete site' }).click();
    await page.waitForURL((url) => url.pathname === '/shield');
    await page.getByText('No sites yet').waitFor();
    expect((await owner.call('GET', `/api/v1/shield/sites/${siteId}`)).status).toBe(404);
    expect(problems).toEqual([]);
  });
});
