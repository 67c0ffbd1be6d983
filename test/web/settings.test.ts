// Settings in a real browser: an API key is shown once with Copy, then only by its last four
// characters; rotating shows a new value while the old one works through its grace period; revoking
// stops it. The person's sessions, the audit log with its CSV download, inviting a viewer who then
// sees no write buttons, and axe + screenshots on every settings page and on the New key dialog.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { setPlan } from '../../api/accounts/people/plans.ts';
import { browserSuite, checkPage, expectAccessible, focusedText, screenshot, startDashboard, watchConsole, type Dashboard, type SignedIn } from '../support/browser.ts';

const PAGES = [
  ['/settings/api-keys', 'settings-api-keys', 'API keys'],
  ['/settings/sessions', 'settings-sessions', 'Sessions'],
  ['/settings/audit-log', 'settings-audit-log', 'Audit log'],
  ['/settings/members', 'settings-members', 'Members'],
  ['/settings/plan', 'settings-plan', 'Plan'],
] as const;

browserSuite('settings: API keys, sessions, audit log, members, plan', { timeout: 120_000 }, () => {
  let d: Dashboard;
  let owner: SignedIn;
  let keyId = '';
  const status = async (key: string) => (await fetch(`${d.t.url}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })).status;

  beforeAll(async () => {
    d = await startDashboard();
    owner = await d.signIn('settings-owner@example.com');
  }, 120_000);
  afterAll(() => d?.close(), 120_000);

  it('create and rotate an API key: shown once with Copy, then last 4 only; the old key in grace, then revoked', async () => {
    const { page } = owner;
    const problems = watchConsole(page);
    await page.goto('/settings/api-keys');
    await page.getByRole('heading', { level: 2, name: 'API keys' }).waitFor();
    await page.getByRole('button', { name: 'New key' }).click();
    const form = page.getByRole('dialog', { name: 'New API key' });
    await form.getByLabel('Name').fill('CI pipeline');
    // The trial plan refuses an admin key: the API's message is shown.
    await form.getByRole('checkbox', { name: 'admin' }).check();
    await expectAccessible(page, 'new key dialog');
    await screenshot(page, 'settings-new-key-dialog');
    await form.getByRole('button', { name: 'Create key' }).click();
    await expect.poll(() => form.getByRole('alert').textContent()).toContain('needs the pro or enterprise plan');
    await form.getByRole('checkbox', { name: 'admin' }).uncheck();
    await form.getByRole('checkbox', { name: 'scans:read' }).check();
    await form.getByRole('button', { name: 'Create key' }).click();

    const issued = page.getByRole('dialog', { name: 'Your new API key' });
    const first = (await issued.getByTestId('secret-value').textContent()) ?? '';
    expect(first).toMatch(/^svc_live_/);
    await issued.getByRole('button', { name: 'Copy' }).waitFor();
    await expectAccessible(page, 'new key shown once');
    expect(await status(first)).toBe(200);
    await issued.getByRole('button', { name: 'Done' }).click();
    // Keyboard users are back where they were: on the button that opened the dialog.
    await expect.poll(() => focusedText(page)).toBe('New key');

    // Never again: after a reload only the prefix and the last four characters.
    await page.reload();
    const row = page.getByRole('row', { name: /CI pipeline/ });
    await expect.poll(() => row.textContent()).toContain(`svc_live_…${first.slice(-4)}`);
    expect(await page.content()).not.toContain(first);
    keyId = (await owner.call('GET', '/api/v1/api-keys')).body.data.find((k: { last4: string }) => k.last4 === first.slice(-4)).id;

    await row.getByRole('button', { name: 'Rotate CI pipeline' }).click();
    await page.getByRole('dialog', { name: 'Rotate CI pipeline?' }).getByRole('button', { name: 'Rotate' }).click();
    const rotated = page.getByRole('dialog', { name: 'Your rotated API key' });
    const second = (await rotated.getByTestId('secret-value').textContent()) ?? '';
    expect(second).toMatch(/^svc_live_/);
    expect(second).not.toBe(first);
    await rotated.getByRole('button', { name: 'Copy' }).waitFor();
    await rotated.getByRole('button', { name: 'Done' }).click();
    expect(await status(second)).toBe(200);
    // The old key is in its 7-day grace: it works, and the list says it is rotating, with an expiry.
    expect(await status(first)).toBe(200);
    const old = page.getByTestId(`api-key-${keyId}`);
    await expect.poll(() => old.textContent()).toContain('rotating');
    expect(await old.getByRole('button', { name: /Rotate/ }).count()).toBe(0);

    await old.getByRole('button', { name: 'Revoke CI pipeline' }).click();
    await page.getByRole('dialog', { name: 'Revoke CI pipeline?' }).getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => status(first)).toBe(401);
    expect(await status(second)).toBe(200);
    await expect.poll(() => page.getByTestId(`api-key-${keyId}`).count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it('on the pro plan, makes an admin key (the gate the trial plan refused)', async () => {
    const { page } = owner;
    const orgId: string = (await owner.call('GET', '/api/v1/orgs/current')).body.id;
    // As test/api/plans.test.ts does: the gate reads the plan from the database.
    expect(await setPlan(d.t.server.database.db, undefined, orgId, 'pro')).toBe(true);
    await page.goto('/settings/api-keys');
    await page.getByRole('button', { name: 'New key' }).click();
    const form = page.getByRole('dialog', { name: 'New API key' });
    await form.getByLabel('Name').fill('Terraform');
    await form.getByRole('checkbox', { name: 'admin' }).check();
    await form.getByRole('button', { name: 'Create key' }).click();
    const issued = page.getByRole('dialog', { name: 'Your new API key' });
    const value = (await issued.getByTestId('secret-value').textContent()) ?? '';
    // An admin key may list keys, which only admin may do.
    const listed = await fetch(`${d.t.url}/api/v1/api-keys`, { headers: { authorization: `Bearer ${value}` } });
    expect(listed.status).toBe(200);
    await issued.getByRole('button', { name: 'Done' }).click();
    await setPlan(d.t.server.database.db, undefined, orgId, 'trial');
  });

  it('lists my sessions with the current one marked', async () => {
    const { page } = owner;
    await page.goto('/settings/sessions');
    const current = page.getByTestId('current-session');
    await expect.poll(() => current.textContent()).toContain('this session');
    expect(await current.getByRole('button', { name: 'Sign out of this session' }).count()).toBe(1);
    // Revoking the current session warns first; cancelling keeps it.
    await current.getByRole('button', { name: 'Sign out of this session' }).click();
    const warning = page.getByRole('dialog', { name: 'Sign out of this session?' });
    await expect.poll(() => warning.textContent()).toContain('the session you are using now');
    await warning.getByRole('button', { name: 'Cancel' }).click();
    expect((await owner.call('GET', '/api/v1/me')).status).toBe(200);
  });

  it('shows the key in the audit log, filters it, and downloads the filtered range as CSV', async () => {
    const { page } = owner;
    await page.goto('/settings/audit-log');
    const table = page.getByRole('table', { name: 'Audit events, newest first' });
    await expect.poll(() => table.textContent()).toContain('api_key.created');
    await page.getByLabel('Target').fill(keyId);
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(async () => (await table.getByRole('row').allTextContents()).length).toBe(4);
    const actions = await table.locator('tbody th').allTextContents();
    expect(actions).toEqual(['api_key.revoked', 'api_key.rotated', 'api_key.created']);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download CSV' }).click()]);
    expect(download.suggestedFilename()).toBe('audit-log.csv');
    const csv = readFileSync(await download.path(), 'utf8').trim().split('\r\n');
    expect(csv[0]).toBe('id,created_at,actor_type,actor_id,action,target_type,target_id,ip,metadata');
    expect(csv.slice(1).map((line) => line.split(',')[4])).toEqual(['api_key.revoked', 'api_key.rotated', 'api_key.created']);
    expect(csv.slice(1).every((line) => line.includes(`,api_key,${keyId},`))).toBe(true);
  });

  it('invites a viewer, who sees no write buttons; the last owner cannot be demoted', async () => {
    const { page } = owner;
    await page.goto('/settings/members');
    await page.getByLabel('E-mail address').fill('settings-viewer@example.com');
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Send invite' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Invite sent' }).textContent()).toContain('settings-viewer@example.com as viewer');
    const invites = page.getByRole('table', { name: 'Invites' });
    await expect.poll(() => invites.textContent()).toContain('settings-viewer@example.com');

    // The API's 409 for the last owner is shown as it is.
    await page.getByRole('combobox', { name: 'Role of settings-owner@example.com' }).selectOption('admin');
    await page.getByRole('button', { name: 'Change role of settings-owner@example.com' }).click();
    const confirm = page.getByRole('dialog', { name: 'Make settings-owner@example.com admin?' });
    await confirm.getByRole('button', { name: 'Change role' }).click();
    await expect.poll(() => confirm.getByRole('alert').textContent()).toContain('last owner');
    await confirm.getByRole('button', { name: 'Cancel' }).click();

    const viewer = await d.signIn('settings-viewer@example.com', { role: 'viewer', inviter: owner });
    for (const [path, , heading] of PAGES) {
      await viewer.page.goto(path);
      await viewer.page.getByRole('heading', { level: 2, name: heading }).waitFor();
      await viewer.page.waitForLoadState('networkidle');
      const writes = viewer.page.getByRole('button', { name: /New key|Rotate|Revoke|Send invite|Remove|Change|Resend/ });
      expect(await writes.count(), path).toBe(0);
      expect(await viewer.page.getByRole('link', { name: 'Download CSV' }).count(), path).toBe(0);
    }
    await viewer.page.goto('/settings/api-keys');
    await expect.poll(() => viewer.page.locator('.notice').textContent()).toContain('Only owners and admins');
    await checkPage(viewer, '/settings/members', 'settings-members-viewer', 'Settings');
  });

  it('every settings page passes axe at 390 px dark and 1280 px light', async () => {
    for (const [path, name] of PAGES) await checkPage(owner, path, name, 'Settings');
    await owner.page.getByTestId('current-plan').waitFor();
    expect(await owner.page.getByTestId('current-plan').textContent()).toBe('trial');
  });
});
