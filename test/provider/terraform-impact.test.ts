// `terraform plan` with the impact preview (issue 43), the real terraform binary against a running
// server: traffic sent through the real gateway is recorded, then planned changes of Shield rules
// and sites show, as a warning on the changed resource, what they would have done to it. A site
// without recorded traffic shows none.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { viaGateway, recordingGateway } from '../support/gateway.ts';
import { listenOnLoopback } from '../support/loopback.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { terraformWorkspace, type TerraformWorkspace } from '../support/terraform.ts';

const SHOP = 'shop.impact.example';
const QUIET = 'quiet.impact.example';
const SCRAPER = '192.0.2.50';

let t: TestServer;
let origin: { url: string; close(): Promise<void> };
let tf: TerraformWorkspace;
let emptyConfig = '';

const sites = (shopMode: string): string => `terraform {
  required_providers {
    aegis = { source = "aegis/aegis" }
  }
}

provider "aegis" {}

resource "aegis_shield_site" "shop" {
  domain     = "${SHOP}"
  origin_url = "${origin.url}"
  mode       = "${shopMode}"
}

resource "aegis_shield_site" "quiet" {
  domain     = "${QUIET}"
  origin_url = "${origin.url}"
  mode       = "block"
}
`;

const denyRule = (name: string, site: string, value: string): string => `
resource "aegis_ip_access_rule" "${name}" {
  site_id = aegis_shield_site.${site}.id
  type    = "ip"
  value   = "${value}"
  action  = "deny"
}
`;

const writeConfig = (text: string) => writeFileSync(join(tf.dir, 'main.tf'), text);

interface JsonDiagnostic {
  severity: string;
  summary: string;
  detail: string;
  address?: string;
}

/** `terraform plan -json`: exit status and the diagnostics it reported. */
async function planJson(): Promise<{ status: number | null; diagnostics: JsonDiagnostic[]; output: string }> {
  const plan = await tf.run('plan', '-json');
  const diagnostics = plan.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { type?: string; diagnostic?: JsonDiagnostic })
    .flatMap((message) => (message.type === 'diagnostic' && message.diagnostic ? [message.diagnostic] : []));
  return { status: plan.status, diagnostics, output: plan.stdout + plan.stderr };
}

const impactWarnings = (diagnostics: JsonDiagnostic[]) => diagnostics.filter((d) => d.summary === 'Impact on recorded traffic');

beforeAll(async () => {
  origin = await listenOnLoopback(createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end('ok'))));
  t = await startTestServer({
    rateLimitPerMinute: 1_000_000,
    ...recordingGateway(),
  });
  emptyConfig = mkdtempSync(join(tmpdir(), 'aegis-tf-impact-'));
  tf = terraformWorkspace(emptyConfig, t.url, t.adminKey);
  writeConfig(sites('block'));
  const init = await tf.run('init');
  expect(init.status, init.stderr + init.stdout).toBe(0);
  const apply = await tf.run('apply', '-auto-approve');
  expect(apply.status, apply.stderr + apply.stdout).toBe(0);
  expect(apply.stdout).toMatch(/Resources: 2 added, 0 changed, 0 destroyed/);
  await t.server.gateway!.registry.refresh();
}, 180_000);
afterAll(async () => {
  await t?.close();
  await origin?.close();
  tf?.remove();
  if (emptyConfig) rmSync(emptyConfig, { recursive: true, force: true });
});

describe('terraform plan shows the impact of Shield changes on recorded traffic', () => {
  it('no warning while the site has no recorded traffic', async () => {
    writeConfig(sites('block') + denyRule('scraper', 'shop', SCRAPER));
    const plan = await tf.run('plan', '-detailed-exitcode');
    expect(plan.status, plan.stdout + plan.stderr).toBe(2);
    expect(plan.stdout).toMatch(/aegis_ip_access_rule\.scraper will be created/);
    expect(plan.stdout).not.toMatch(/Impact on recorded traffic/);
    expect(impactWarnings((await planJson()).diagnostics)).toEqual([]);
  }, 120_000);

  it('a new IP deny rule: the requests that address sent, on that resource only', async () => {
    const gateway = t.server.gateway!.url;
    for (let i = 0; i < 3; i++) expect((await viaGateway(gateway, `/products/${i}`, { host: SHOP, from: SCRAPER })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await viaGateway(gateway, '/', { host: SHOP, from: '198.51.100.7' })).status).toBe(200);
    await t.server.shieldEvents.traffic!.flush();

    // The quiet site has no traffic: its new rule gets no warning.
    writeConfig(sites('block') + denyRule('scraper', 'shop', SCRAPER) + denyRule('quiet_scraper', 'quiet', SCRAPER));
    const plan = await tf.run('plan');
    expect(plan.status, plan.stdout + plan.stderr).toBe(0);
    const shown = plan.stdout.replace(/\s+/g, ' '); // terraform wraps the detail at 78 columns
    expect(shown).toMatch(/Warning: Impact on recorded traffic with aegis_ip_access_rule\.scraper,/);
    expect(shown).toMatch(/would have blocked 3 requests from 1 client in the last 24 h \(3 answered 200 by the origin\)\./);
    expect(shown).not.toMatch(/aegis_ip_access_rule\.quiet_scraper,/);
    expect(shown.match(/Impact on recorded traffic/g)).toHaveLength(1);

    const json = await planJson();
    expect(json.status, json.output).toBe(0);
    const warnings = impactWarnings(json.diagnostics);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ severity: 'warning', address: 'aegis_ip_access_rule.scraper' });
    expect(warnings[0]!.detail).toMatch(/^would have blocked 3 requests from 1 client in the last 24 h/);
  }, 120_000);

  it('a deletion and a site mode change: what the rule blocks today would pass', async () => {
    writeConfig(sites('block') + denyRule('scraper', 'shop', SCRAPER));
    const apply = await tf.run('apply', '-auto-approve');
    expect(apply.status, apply.stderr + apply.stdout).toBe(0);
    expect(apply.stdout).toMatch(/Resources: 1 added, 0 changed, 0 destroyed/);
    // An unchanged configuration asks nothing and warns nothing.
    const unchanged = await planJson();
    expect(impactWarnings(unchanged.diagnostics)).toEqual([]);

    // The recorded requests, replayed under today's configuration (the deny rule), are blocked;
    // without the rule, or in log mode, they would pass.
    writeConfig(sites('log'));
    const json = await planJson();
    expect(json.status, json.output).toBe(0);
    const warnings = impactWarnings(json.diagnostics);
    expect(warnings).toHaveLength(2);
    const siteWarning = warnings.find((w) => w.address === 'aegis_shield_site.shop');
    expect(siteWarning?.detail).toMatch(/^would have let through 3 requests from 1 client in the last 24 h \(blocked or challenged now\)\./);
    // Terraform gives a removed resource's diagnostics no address: the detail names the rule.
    const deleteWarning = warnings.find((w) => w !== siteWarning);
    expect(deleteWarning?.detail).toMatch(/^Deleting aegis_ip_access_rule ip 192\.0\.2\.50 \(deny\) would have let through 3 requests from 1 client in the last 24 h/);
  }, 120_000);

  it('impact_window sets the window replayed and named', async () => {
    writeConfig(sites('block').replace('provider "aegis" {}', 'provider "aegis" {\n  impact_window = "2h"\n}') + denyRule('scraper', 'shop', SCRAPER) + denyRule('other', 'shop', '198.51.100.7'));
    const json = await planJson();
    expect(json.status, json.output).toBe(0);
    const warnings = impactWarnings(json.diagnostics);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ address: 'aegis_ip_access_rule.other' });
    expect(warnings[0]!.detail).toMatch(/^would have blocked 2 requests from 1 client in the last 2 h \(2 answered 200 by the origin\)/);
  }, 120_000);
});
