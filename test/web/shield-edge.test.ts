// The TLS & domain tab of a Shield site in Chromium against a real server (issue 41): a certificate
// uploaded through the API shows its issuer, names, expiry and fingerprint (and a warning once it
// expires within 30 days); a site that serves nothing until its domain is proved shows the TXT record
// and token, and its Check button verifies it through a real DNS server; an ACME order that really
// failed (its CA refuses it) shows its error. axe on each state.
import { createServer } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { browserSuite, checkPage, expectAccessible, NARROW, startDashboard, watchConsole, WIDE, type Dashboard, type SignedIn } from '../support/browser.ts';
import { makeCa, makeLeaf, type TestCa } from '../support/certificates.ts';
import { startDnsServer, type DnsServer } from '../support/dns-server.ts';
import { listenOnLoopback } from '../support/loopback.ts';
import { freePort } from '../support/loopback.ts';

// A private literal address: the origin policy refuses only link-local and metadata addresses, and a
// literal needs no DNS.
const ORIGIN = 'http://10.0.0.5:8080';
const DAY_MS = 86_400_000;

/** Whole days left, counted as the page counts them. */
const daysUntil = (iso: string) => Math.floor((Date.parse(iso) - Date.now()) / DAY_MS);

browserSuite('Shield site TLS & domain tab', { timeout: 120_000 }, () => {
  let d: Dashboard;
  let dns: DnsServer;
  let ca: TestCa;
  let refusingCa: { url: string; close(): Promise<void> };
  let owner: SignedIn;
  let problems: string[];

  beforeAll(async () => {
    dns = await startDnsServer();
    ca = makeCa('Aegis Dashboard Test CA');
    // An ACME directory that refuses everyone (a 4xx, which acme-client does not retry).
    refusingCa = await listenOnLoopback(createServer((_req, res) => {
      res.writeHead(403, { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify({ type: 'urn:ietf:params:acme:error:unauthorized', detail: 'this test CA issues nothing', status: 403 }));
    }));
    d = await startDashboard({
      rateLimitPerMinute: 100_000,
      // A multi-tenant service: a site serves nothing until its domain is proved, through this DNS server.
      shieldDomainProof: 'required',
      verificationDnsServers: [dns.server],
      // A TLS port makes new sites `acme` (no gateway listens on it here); every order really fails.
      shieldTlsPort: await freePort(),
      acmeDirectoryUrl: `${refusingCa.url}/directory`,
      acmeCheckIntervalMs: 200,
    });
    owner = await d.signIn('edge-owner@example.com');
    problems = watchConsole(owner.page);
  }, 120_000);
  afterAll(async () => {
    await d?.close();
    await dns?.close();
    await refusingCa?.close();
    ca?.close();
  });

  async function createSite(domain: string, tls?: { mode: 'acme' | 'custom' | 'off' }): Promise<{ id: string; domain_verification: { txt_record: { name: string; value: string }; http_token: { url: string; body: string } } }> {
    const res = await owner.call('POST', '/api/v1/shield/sites', { domain, origin_url: ORIGIN, mode: 'log', ...(tls ? { tls } : {}) });
    expect(res.status, res.text).toBe(201);
    return res.body;
  }

  it('shows an uploaded certificate: issuer, names, expiry and fingerprint, and warns within 30 days of expiry', async () => {
    const domain = 'shop.edge-web.test';
    const site = await createSite(domain, { mode: 'off' });
    const leaf = makeLeaf(ca, [domain, `www.${domain}`], { days: 90 });
    const uploaded = await owner.call('PUT', `/api/v1/shield/sites/${site.id}/certificate`, { certificate: leaf.chainPem, private_key: leaf.keyPem });
    expect(uploaded.status, uploaded.text).toBe(200);

    const { page } = owner;
    await page.goto(`/shield/sites/${site.id}/tls`);
    const certificate = page.getByRole('region', { name: 'Certificate' });
    await certificate.getByText('issued', { exact: true }).waitFor();
    const fact = (label: string) => certificate.locator('dt', { hasText: label }).locator('xpath=following-sibling::dd[1]');
    expect(await fact('Issuer').textContent()).toContain('Aegis Dashboard Test CA');
    expect(await fact('Source').textContent()).toBe('uploaded');
    expect(await fact('Names covered').locator('li').allTextContents()).toEqual([domain, `www.${domain}`]);
    const notAfter = uploaded.body.not_after as string;
    expect(await fact('Expires').locator('time').getAttribute('datetime')).toBe(notAfter);
    expect(await fact('Expires').textContent()).toContain(`(in ${daysUntil(notAfter)} days)`);
    expect(daysUntil(notAfter)).toBeGreaterThanOrEqual(89);
    expect(await fact('Fingerprint (SHA-256)').textContent()).toBe(leaf.fingerprint);
    expect(await certificate.getByText(/expires in \d+ days?, on/).count()).toBe(0);
    // The upload switched the site to its certificate.
    const tls = page.getByRole('region', { name: 'TLS settings' });
    expect(await tls.locator('dt', { hasText: 'TLS mode' }).locator('xpath=following-sibling::dd[1]').textContent()).toContain('Uploaded certificate');
    // The key never comes back, so it cannot be on the page.
    const keyBody = leaf.keyPem.split('\n')[1]!;
    expect(await page.content()).not.toContain(keyBody);
    await checkPage(owner, `/shield/sites/${site.id}/tls`, 'shield-site-tls-issued', domain);

    // A certificate with days to live: the warning says when, and what to do about an uploaded one.
    const short = makeLeaf(ca, [domain], { days: 10 });
    const replaced = await owner.call('PUT', `/api/v1/shield/sites/${site.id}/certificate`, { certificate: short.chainPem, private_key: short.keyPem });
    expect(replaced.status, replaced.text).toBe(200);
    await page.reload();
    const days = daysUntil(replaced.body.not_after as string);
    expect(days).toBeLessThan(10);
    const warning = certificate.getByRole('note').filter({ hasText: 'This certificate expires in' });
    await warning.waitFor();
    expect(await warning.textContent()).toContain(`expires in ${days} day${days === 1 ? '' : 's'}, on`);
    expect(await warning.textContent()).toContain('Upload a renewed certificate before then.');
    expect(await fact('Fingerprint (SHA-256)').textContent()).toBe(short.fingerprint);
    await expectAccessible(page, 'certificate expiring soon');
    expect(problems).toEqual([]);
  });

  it('shows a site pending verification the TXT record and token, and verifies it with the Check button', async () => {
    const domain = 'pending.edge-web.test';
    const site = await createSite(domain);
    const token = site.domain_verification.http_token.body;
    expect(token.length).toBeGreaterThan(16);

    const { page } = owner;
    // The site's heading says it serves nothing and leads to the tab.
    await page.goto(`/shield/sites/${site.id}/settings`);
    await page.getByRole('link', { name: 'Verify the domain' }).click();
    await page.waitForURL(`**/shield/sites/${site.id}/tls`);
    const proof = page.getByRole('region', { name: 'Domain verification' });
    await proof.getByRole('note').filter({ hasText: 'does not serve this site’s traffic until you prove' }).waitFor();
    expect(await proof.getByText('unverified', { exact: true }).count()).toBe(1);
    await proof.getByText(`_aegis-verify.${domain}`, { exact: true }).waitFor();
    await proof.getByText(`aegis-verify=${token}`, { exact: true }).waitFor();
    await proof.getByText(`http://${domain}/.well-known/aegis-verify/${token}`, { exact: true }).waitFor();
    await checkPage(owner, `/shield/sites/${site.id}/tls`, 'shield-site-tls-pending', domain);
    // At 390 px the long record names and token URL wrap instead of widening the page.
    await page.setViewportSize(NARROW);
    await page.goto(`/shield/sites/${site.id}/tls`);
    await proof.getByText(`_aegis-verify.${domain}`, { exact: true }).waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth)).toBeLessThanOrEqual(NARROW.width);
    await page.setViewportSize(WIDE);

    // Not published yet: the API's refusal says what is missing.
    await proof.getByRole('button', { name: 'Check DNS record' }).click();
    const refusal = proof.getByRole('alert');
    await refusal.getByText(`no TXT record at _aegis-verify.${domain}`, { exact: false }).waitFor();
    expect(await refusal.textContent()).toContain(`${domain} is not verified`);
    await expectAccessible(page, 'domain check refused');
    expect((await owner.call('GET', `/api/v1/shield/sites/${site.id}`)).body).toMatchObject({ status: 'pending', domain_verification: { status: 'unverified' } });

    // Published as the page says: verified, and the site serves.
    dns.setTxt(`_aegis-verify.${domain}`, [`aegis-verify=${token}`]);
    await proof.getByRole('button', { name: 'Check DNS record' }).click();
    await proof.getByRole('status').filter({ hasText: `Verified: your organisation controls ${domain} (DNS TXT record).` }).waitFor();
    await proof.getByText('verified', { exact: true }).waitFor();
    expect(await proof.locator('dt', { hasText: 'Proved by' }).locator('xpath=following-sibling::dd[1]').textContent()).toBe('DNS TXT record');
    expect(await proof.getByRole('note').count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Verify the domain' }).count()).toBe(0);
    expect((await owner.call('GET', `/api/v1/shield/sites/${site.id}`)).body).toMatchObject({ status: 'active', domain_verification: { status: 'verified', method: 'dns' } });
    expect(problems).toEqual([]);
  });

  it('shows a failed ACME order with its error, and no Check buttons to a viewer', async () => {
    const domain = 'acme.edge-web.test';
    const site = await createSite(domain, { mode: 'acme' });
    const { page } = owner;
    // The scheduler orders within 200 ms; the order fails as soon as the directory refuses it.
    await expect.poll(async () => (await owner.call('GET', `/api/v1/shield/sites/${site.id}`)).body.certificate?.acme_order?.status, { timeout: 60_000, interval: 200 }).toBe('failed');
    const { certificate: summary } = (await owner.call('GET', `/api/v1/shield/sites/${site.id}`)).body;
    expect(summary.acme_order.error).toBeTruthy();
    await page.goto(`/shield/sites/${site.id}/tls`);
    const certificate = page.getByRole('region', { name: 'Certificate' });
    await certificate.getByText('failed', { exact: true }).first().waitFor();
    await certificate.getByText('The last certificate order failed').waitFor();
    expect(await certificate.locator('.error').textContent()).toContain(summary.acme_order.error);
    expect(await certificate.locator('time').first().getAttribute('datetime')).toBe(summary.acme_order.next_attempt_at);
    await checkPage(owner, `/shield/sites/${site.id}/tls`, 'shield-site-tls-acme-failed', domain);

    const viewer = await d.signIn('edge-viewer@example.com', { role: 'viewer', inviter: owner });
    await viewer.page.goto(`/shield/sites/${site.id}/tls`);
    const proof = viewer.page.getByRole('region', { name: 'Domain verification' });
    await proof.getByText(`_aegis-verify.${domain}`, { exact: true }).waitFor();
    expect(await proof.getByRole('button').count()).toBe(0);
  });
});
