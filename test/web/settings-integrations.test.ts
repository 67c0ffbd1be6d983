// Settings → Webhooks, Integrations and SSO in Chromium against a real server. A webhook is made
// through the UI pointing at a local receiver: its secret is shown once, "Send test" delivers a
// ping the receiver gets, the delivery log shows it with its status and response code, its detail
// lists the attempt, and "Redeliver" makes another. Integrations: none, then GitHub connected with
// a token through the UI (against the GitHub stand-in) and disconnected with a confirmation. SSO
// on a trial organisation shows the Enterprise gate and the API's refusal. A viewer sees no write
// buttons. Every page passes axe at both widths and themes.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadProviderSettings } from '../../api/integrations/providers/settings.ts';
import { setPlan } from '../../api/accounts/people/plans.ts';
import { browserSuite, checkPage, expectAccessible, startDashboard, watchConsole, type Dashboard, type SignedIn } from '../support/browser.ts';
import { eventually } from '../support/gateway.ts';
import { startOidcProvider, type OidcProvider } from '../support/oidc-provider.ts';
import { startGithubStandIn, type GithubStandIn } from '../support/providers/github/index.ts';

interface Receiver {
  url: string;
  bodies: string[];
  close(): Promise<void>;
}

/** A webhook endpoint on 127.0.0.1 that answers 200 "ok" and keeps what it is sent. */
async function startReceiver(): Promise<Receiver> {
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      res.end('ok');
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    bodies,
    close: () => new Promise<void>((done) => { server.closeAllConnections(); server.close(() => done()); }),
  };
}

browserSuite('settings: webhooks, integrations, SSO', { timeout: 150_000 }, () => {
  let d: Dashboard;
  let receiver: Receiver;
  let github: GithubStandIn;
  let op: OidcProvider;
  let owner: SignedIn;
  beforeAll(async () => {
    receiver = await startReceiver();
    op = await startOidcProvider({ clients: { 'aegis-sso-ui': 'sso-ui-secret' } });
    github = await startGithubStandIn();
    d = await startDashboard({ allowPrivateTargets: true, providers: { ...loadProviderSettings({}), github: github.settings } });
    owner = await d.signIn('settings-owner@example.com');
  }, 120_000);
  afterAll(async () => {
    await d?.close();
    await receiver?.close();
    await github?.close();
    await op?.close();
  });

  it("creates a webhook, shows its secret once, sends a test and shows the delivery log, redelivers", async () => {
    const { page } = owner;
    const problems = watchConsole(page);
    await page.goto('/settings/webhooks');
    await page.getByText('No webhooks yet.').waitFor();
    await page.getByRole('button', { name: 'New webhook' }).click();
    const dialog = page.getByRole('dialog', { name: 'New webhook' });
    await dialog.getByLabel('Endpoint URL').fill(receiver.url);
    await dialog.getByLabel('Description').fill('The test receiver');
    await dialog.getByRole('checkbox', { name: 'scan.completed' }).check();
    await expectAccessible(page, 'new webhook dialog');
    await dialog.getByRole('button', { name: 'Create webhook' }).click();

    const secret = page.getByRole('region', { name: 'Signing secret' });
    expect(await secret.getByTestId('secret-value').textContent()).toMatch(/^whsec_/);
    await page.getByRole('link', { name: receiver.url }).waitFor();
    await page.getByRole('link', { name: 'open its delivery log' }).click();
    await page.getByRole('heading', { level: 2, name: /Webhook/ }).waitFor();
    await page.getByText('No deliveries yet.').waitFor();

    await page.getByRole('button', { name: 'Send test' }).click();
    await page.getByRole('status').filter({ hasText: 'Test ping succeeded: the endpoint answered 200' }).waitFor();
    expect(receiver.bodies.some((b) => JSON.parse(b).type === 'ping')).toBe(true);
    const row = page.getByTestId('delivery-row').first();
    await row.getByText('ping').waitFor();
    expect(await row.textContent()).toMatch(/ping.*succeeded.*200.*1/);

    await row.getByRole('button', { name: 'Details' }).click();
    const detail = page.getByRole('dialog', { name: 'Delivery of ping' });
    await detail.getByText('Attempts (1)').waitFor();
    // The request body is the event as it was signed and sent.
    expect(JSON.parse((await detail.getByTestId('request-body').textContent()) ?? '{}')).toMatchObject({ object: 'event', type: 'ping', data: { object: { object: 'ping' } } });
    expect(await detail.textContent()).toMatch(/test · succeeded · response 200/);
    await expectAccessible(page, 'delivery detail');
    await detail.getByRole('button', { name: 'Close' }).click();

    await row.getByRole('button', { name: /^Redeliver/ }).click();
    await page.getByRole('status').filter({ hasText: 'Redelivery of ping queued' }).waitFor();
    await eventually(async () => receiver.bodies.filter((b) => JSON.parse(b).type === 'ping').length >= 2, 15_000);
    await expect.poll(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      return page.getByTestId('delivery-row').first().textContent();
    }, { timeout: 15_000 }).toMatch(/ping.*succeeded.*200.*2/);

    // Rotating shows the new secret once; a reload shows neither secret.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog', { name: 'Rotate the signing secret?' }).getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = await page.getByRole('region', { name: 'New signing secret' }).getByTestId('secret-value').textContent();
    expect(rotated).toMatch(/^whsec_/);
    await page.reload();
    await page.getByRole('heading', { level: 2, name: /Webhook/ }).waitFor();
    expect(await page.content()).not.toContain(rotated ?? 'none');

    await checkPage(owner, page.url().replace(d.t.url, ''), 'settings-webhook-detail', 'Settings');
    await checkPage(owner, '/settings/webhooks', 'settings-webhooks', 'Settings');
    expect(problems).toEqual([]);
  });

  it('lists no integration, then one connected with a token, and disconnects it after a confirmation', async () => {
    const { page } = owner;
    await page.goto('/settings/integrations');
    await page.getByText('No provider is connected.').waitFor();
    await checkPage(owner, '/settings/integrations', 'settings-integrations-empty', 'Settings');

    await page.getByRole('button', { name: 'Connect a provider' }).click();
    const dialog = page.getByRole('dialog', { name: 'Connect a provider' });
    await dialog.getByLabel('Provider').selectOption('github');
    await dialog.getByLabel('Personal access token').fill('ghp_nothing_github_knows');
    await dialog.getByRole('button', { name: 'Connect GitHub' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'github refused the credential' }).waitFor();
    await dialog.getByLabel('Personal access token').fill(github.issueToken('octo-admin'));
    await dialog.getByRole('button', { name: 'Connect GitHub' }).click();
    expect(await dialog.getByRole('region', { name: 'Inbound webhook secret' }).getByTestId('secret-value').textContent()).toMatch(/^iwhsec_/);
    await expectAccessible(page, 'connected dialog');
    await dialog.getByRole('button', { name: 'Done' }).click();

    const row = page.getByTestId('integration-row').first();
    await row.getByText('octo-admin').waitFor();
    expect(await row.textContent()).toMatch(/github.*token.*source control.*octo-admin.*active.*repo/);
    await checkPage(owner, '/settings/integrations', 'settings-integrations', 'Settings');

    await page.getByTestId('integration-row').first().getByRole('button', { name: /^Disconnect/ }).click();
    const confirm = page.getByRole('dialog', { name: 'Disconnect github?' });
    await expectAccessible(page, 'disconnect dialog');
    await confirm.getByRole('button', { name: 'Disconnect' }).click();
    await page.getByText('No provider is connected.').waitFor();
  });

  it('shows the Enterprise gate and the API’s refusal on the SSO page of a trial organisation', async () => {
    const { page } = owner;
    await page.goto('/settings/sso');
    await page.getByTestId('plan-gate').filter({ hasText: 'Enterprise' }).waitFor();
    await page.getByText('No identity provider is connected yet.').waitFor();
    await page.getByLabel('Issuer URL').fill('https://idp.example.com');
    await page.getByLabel('Client ID').fill('aegis');
    await page.getByLabel('Client secret').fill('s3cret');
    await page.getByRole('button', { name: 'Save SSO settings' }).click();
    const refused = page.getByRole('alert').filter({ hasText: 'SSO needs the enterprise plan; this organisation is on trial' });
    await refused.waitFor();
    expect(await refused.textContent()).toContain('plan_required');
    await checkPage(owner, '/settings/sso', 'settings-sso', 'Settings');
  });

  it('configures OIDC SSO on an Enterprise organisation and runs Try login', async () => {
    const first = await d.signIn('sso-admin@example.com');
    const orgId = (await first.call('GET', '/api/v1/me')).body.organization.id as string;
    expect(await setPlan(d.t.server.database.db, undefined, orgId, 'enterprise')).toBe(true);
    // A new session reads the plan afresh (the first one's authorisation is cached).
    const admin = await d.signIn('sso-admin@example.com');
    const { page } = admin;
    await page.goto('/settings/sso');
    await page.getByText('No identity provider is connected yet.').waitFor();
    expect(await page.getByTestId('plan-gate').count()).toBe(0);
    await page.getByLabel('Issuer URL').fill(op.issuer);
    await page.getByLabel('Client ID').fill('aegis-sso-ui');
    await page.getByLabel('Client secret').fill('sso-ui-secret');
    await page.getByLabel('Just-in-time domains').fill('sso-ui.example');
    await page.getByRole('button', { name: 'Save SSO settings' }).click();
    await page.getByRole('heading', { name: 'Connection' }).waitFor();
    expect(await page.getByRole('main').textContent()).toMatch(/stored \(never shown\).*never since the settings changed.*sso-ui\.example \(as member\)/);
    // The listed domain admits nobody until verified; the domains section shows the record to publish.
    expect(await page.getByRole('main').textContent()).toContain('not verified yet, so admitting nobody: sso-ui.example');
    await page.getByLabel('Domain', { exact: true }).fill('sso-ui.example');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('cell', { name: /_aegis-verify\.sso-ui\.example/ }).waitFor();

    await page.getByRole('button', { name: 'Try login' }).click();
    const link = page.getByRole('link', { name: 'Open the Try login page' });
    const url = (await link.getAttribute('href')) ?? '';
    expect(url).toContain('/auth/sso/start/');
    op.user = { email: 'sso-admin@example.com', email_verified: true, name: 'SSO Admin' };
    const tryPage = await admin.context.newPage();
    await tryPage.goto(url);
    await tryPage.getByRole('heading', { name: 'SSO works' }).waitFor();
    await tryPage.close();
    await page.reload();
    await page.getByRole('heading', { name: 'Connection' }).waitFor();
    expect(await page.getByRole('main').textContent()).not.toContain('never since the settings changed');
    await page.getByRole('button', { name: 'Enforce SSO' }).click();
    await expectAccessible(page, 'enforce SSO dialog');
    await page.getByRole('dialog', { name: 'Enforce SSO?' }).getByRole('button', { name: 'Cancel' }).click();
    await checkPage(admin, '/settings/sso', 'settings-sso-enterprise', 'Settings');
  });

  it('shows a viewer no write buttons', async () => {
    const viewer = await d.signIn('settings-viewer@example.com', { role: 'viewer', inviter: owner });
    for (const [path, name] of [['/settings/webhooks', 'webhooks'], ['/settings/integrations', 'integrations'], ['/settings/sso', 'SSO']] as const) {
      await viewer.page.goto(path);
      await viewer.page.getByRole('note').filter({ hasText: `Only owners and admins can see and manage the organisation's ${name}` }).or(viewer.page.getByRole('note').filter({ hasText: 'SSO settings' })).waitFor();
      const buttons = await viewer.page.getByRole('main').getByRole('button').allTextContents();
      expect(buttons.filter((b) => /New webhook|Connect|Disconnect|Save|Try login|Enforce|Delete|Rotate|Send test|Redeliver/.test(b)), path).toEqual([]);
    }
    await checkPage(viewer, '/settings/webhooks', 'settings-webhooks-viewer', 'Settings');
  });
});
