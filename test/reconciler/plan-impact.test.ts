// `aegis plan` / `aegis apply` with the impact preview, end to end: traffic sent through the real
// gateway to a real origin is recorded, then the CLI (run as a user runs it) plans config changes
// and shows, under each change, what it would have done to that traffic — counted exactly against
// what the test sent — and --max-new-blocks gates plan and apply on it. A watcher's pass
// (reconcile) carries the same preview; an API that cannot preview leaves the plan as it was.
import { createServer, request as httpRequest, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAegisClient } from '../../client/client.ts';
import { restResources } from '../../reconciler/live/rest-resources.ts';
import { emptyStats, mergeGroups, parseImpactWindow, restImpactPreviewer, type ImpactGroup } from '../../reconciler/plan/impact.ts';
import { changeImpactLines } from '../../reconciler/output/impact-text.ts';
import { reconcile } from '../../reconciler/sync/reconcile.ts';
import { describeEvent, passReport } from '../../reconciler/sync/watch-events.ts';
import { runAegis } from '../support/cli.ts';
import { viaGateway, recordingGateway } from '../support/gateway.ts';
import { listenOnLoopback } from '../support/loopback.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

interface Stats {
  requests: number;
  clients: number;
  origin_statuses: { classes: Record<string, number> };
}
interface ChangeImpactJson {
  site_id: string;
  coverage: { exact: boolean };
  newly_blocked: Stats;
  newly_challenged: Stats;
  newly_allowed: Stats;
  objects: { object: { kind: string; id: string | null; operation?: number } }[];
}
interface PlanJson {
  changes: { action: string; kind: string; name: string; impact: ChangeImpactJson | null }[];
  impact: { window: string; sites: { site: string; site_id: string; status: string; note: string | null; totals?: { newly_blocked: Stats; newly_allowed: Stats } }[]; notes: string[] } | null;
  errors: string[];
}

let t: TestServer;
let origin: { url: string; close(): Promise<void> };
let env: Record<string, string>;
let dir: string;
const SOURCE = 'impact-src';
const SHOP = 'shop.plan-impact.test';
const QUIET = 'quiet.plan-impact.test';
/** Sends 3 requests; the others come from four other clients, one each. */
const DENIED = '192.0.2.50';

const siteYaml = (name: string, domain: string, options: { mode?: string; deny?: string[] } = {}) => `apiVersion: aegis/v1
kind: ShieldSite
metadata:
  name: ${name}
spec:
  domain: ${domain}
  origin_url: ${origin.url}
  mode: ${options.mode ?? 'block'}
${(options.deny ?? []).length > 0 ? `  ip_access:\n${options.deny!.map((ip) => `    - type: ip\n      value: ${ip}\n      action: deny`).join('\n')}\n` : ''}`;

function writeConfig(shop: { mode?: string; deny?: string[] }, quiet: { deny?: string[] } = {}): void {
  writeFileSync(join(dir, 'shop.yaml'), siteYaml('shop', SHOP, shop));
  writeFileSync(join(dir, 'quiet.yaml'), siteYaml('quiet', QUIET, quiet));
}

const aegis = (args: string[], environment = env) => runAegis([...args, dir, '--source', SOURCE], environment);
const planJson = async (args: string[] = [], environment = env): Promise<{ code: number; plan: PlanJson; stderr: string }> => {
  const result = await aegis(['plan', '--json', ...args], environment);
  return { code: result.code, plan: JSON.parse(result.stdout) as PlanJson, stderr: result.stderr };
};
/** The detail lines printed under the change whose heading contains `heading`. */
function linesUnder(text: string, heading: string): string[] {
  const lines = text.split('\n');
  const at = lines.findIndex((line) => line.includes(heading));
  expect(at, heading).toBeGreaterThanOrEqual(0);
  const end = lines.findIndex((line, i) => i > at && !line.startsWith('      '));
  return lines.slice(at + 1, end);
}
const siteIdOf = async (domain: string): Promise<string> => (await t.call('GET', `/api/v1/shield/sites?domain=${domain}`)).body.data[0].id as string;
const ipRulesOf = async (domain: string): Promise<{ value: string; action: string }[]> => (await t.call('GET', `/api/v1/shield/sites/${await siteIdOf(domain)}/ip-access`)).body.data;

beforeAll(async () => {
  origin = await listenOnLoopback(createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end('ok'))));
  t = await startTestServer({
    rateLimitPerMinute: 100_000,
    analyticsRateLimitPerMinute: 100_000,
    ...recordingGateway(),
  });
  env = { AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey };
  dir = mkdtempSync(join(tmpdir(), 'aegis-plan-impact-'));
  writeConfig({});
  const applied = await aegis(['apply', '--yes', '--no-impact']);
  expect(applied.code, applied.stderr + applied.stdout).toBe(0);
  await t.server.gateway!.registry.refresh();
  const gateway = t.server.gateway!.url;
  const send = async (from: string, path: string) => expect((await viaGateway(gateway, path, { host: SHOP, from })).status).toBe(200);
  for (let i = 0; i < 3; i++) await send(DENIED, `/products/${i}`);
  for (let i = 1; i <= 4; i++) await send(`198.51.100.${i}`, '/');
  await t.server.shieldEvents.traffic!.flush();
}, 120_000);
afterAll(async () => {
  await t?.close();
  await origin?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the impact of a plan', { timeout: 120_000 }, () => {
  it('plan --json: a new IP deny would newly block exactly the 3 requests of that address; a site without traffic shows none', async () => {
    writeConfig({ deny: [DENIED] }, { deny: ['203.0.113.7'] });
    const { code, plan } = await planJson();
    expect(code).toBe(2);
    const deny = plan.changes.find((c) => c.name === `shop/ip-${DENIED}`)!;
    expect(deny.action).toBe('create');
    expect(deny.impact).toMatchObject({ site_id: await siteIdOf(SHOP), coverage: { exact: true }, newly_blocked: { requests: 3, clients: 1, origin_statuses: { classes: { '2xx': 3 } } }, newly_allowed: { requests: 0 } });
    expect(deny.impact!.objects.map((o) => o.object)).toEqual([{ kind: 'ip_access', id: null, operation: 0 }]);
    expect(plan.impact!.window).toBe('24h');
    const [shop, quiet] = ['shop', 'quiet'].map((name) => plan.impact!.sites.find((s) => s.site === name));
    expect(shop).toMatchObject({ status: 'previewed', totals: { newly_blocked: { requests: 3 } } });
    expect(quiet).toMatchObject({ status: 'no_traffic' });
    expect(plan.changes.find((c) => c.name === 'quiet/ip-203.0.113.7')!.impact).toBeNull();
    expect(plan.impact!.notes).toEqual([]);
  });

  it('the text plan shows the impact under the change, and Markdown carries it too', async () => {
    const text = await aegis(['plan']);
    expect(text.code).toBe(2);
    expect(linesUnder(text.stdout, `IpAccessRule shop/ip-${DENIED}`)).toContain('      impact (last 24 h): would newly block 3 requests from 1 client (3 answered 2xx by the origin); 0 newly allowed');
    // Coverage is said only when the counts are not exact; an IP rule's are.
    expect(text.stdout).not.toContain('values sampled');
    expect(linesUnder(text.stdout, 'IpAccessRule quiet/ip-203.0.113.7').join('\n')).not.toContain('impact');
    expect(text.stdout).toContain('  quiet: no traffic recorded; no impact to show');
    expect(text.stdout).toContain('  shop: would newly block 3 requests from 1 client (3 answered 2xx by the origin); 0 newly allowed');

    const markdown = await aegis(['plan', '--markdown']);
    expect(markdown.code).toBe(2);
    expect(markdown.stdout).toContain('impact (last 24 h): would newly block 3 requests from 1 client (3 answered 2xx by the origin); 0 newly allowed');
    expect(markdown.stdout).toMatch(/Impact on recorded traffic \(last 24 h\), per site/);
  });

  it('--impact-window sets the window, a bad one is a usage error, --no-impact skips the preview', async () => {
    expect((await aegis(['plan', '--impact-window', '6h'])).stdout).toContain('impact (last 6 h): would newly block 3 requests');
    for (const bad of ['2w', '0h', '24', '1.5h']) {
      const result = await aegis(['plan', '--impact-window', bad]);
      expect(result.code, bad).toBe(1);
      expect(result.stderr).toContain('--impact-window must be');
      expect(result.stdout).toBe('');
    }
    const skipped = await planJson(['--no-impact']);
    expect(skipped.code).toBe(2);
    expect(skipped.plan.impact).toBeNull();
    expect(skipped.plan.changes.every((c) => c.impact === null)).toBe(true);
    const both = await aegis(['plan', '--no-impact', '--max-new-blocks', '3']);
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(/cannot be used with/);
  });

  it('--max-new-blocks 2: plan exits 1 with the reason, apply refuses and changes nothing', async () => {
    const { code, plan } = await planJson(['--max-new-blocks', '2']);
    expect(code).toBe(1);
    expect(plan.errors).toContain('shop would newly block 3 requests (limit 2) (--max-new-blocks)');
    const refused = await aegis(['apply', '--yes', '--max-new-blocks', '2']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('refusing to apply: shop would newly block 3 requests (limit 2)');
    expect(refused.stdout).not.toContain('Applied');
    expect(await ipRulesOf(SHOP)).toEqual([]);
    expect(await ipRulesOf(QUIET)).toEqual([]);
    // A limit the plan stays within is no error: exit 2, changes pending, as without the flag.
    expect((await planJson(['--max-new-blocks', '3'])).code).toBe(2);
  });

  it('--max-new-blocks 5: apply goes ahead', async () => {
    const applied = await aegis(['apply', '--yes', '--max-new-blocks', '5']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain('Applied 2 step(s).');
    expect(await ipRulesOf(SHOP)).toMatchObject([{ value: DENIED, action: 'deny' }]);
    expect(await ipRulesOf(QUIET)).toMatchObject([{ value: '203.0.113.7', action: 'deny' }]);
    expect((await aegis(['plan'])).code).toBe(0);
  });

  it("a site-settings change is attributed to the site's change: block → log lets the denied address's requests through", async () => {
    writeConfig({ mode: 'log', deny: [DENIED] }, { deny: ['203.0.113.7'] });
    const { code, plan } = await planJson();
    expect(code).toBe(2);
    expect(plan.changes).toHaveLength(1);
    const [site] = plan.changes;
    expect(site).toMatchObject({ kind: 'ShieldSite', name: 'shop', action: 'update' });
    expect(site!.impact).toMatchObject({ newly_blocked: { requests: 0 }, newly_allowed: { requests: 3, clients: 1 } });
    expect(site!.impact!.objects.map((o) => o.object.kind)).toEqual(['mode']);
  });

  it("a watcher's pass carries the same preview, and prints it under the change", async () => {
    const client = createAegisClient({ baseUrl: t.url, apiKey: t.adminKey });
    const outcome = await reconcile({
      api: restResources(client),
      path: dir,
      source: SOURCE,
      prune: true,
      apply: true,
      impact: { previewer: restImpactPreviewer(client), window: parseImpactWindow('24h')!, maxNewBlocks: 0 },
    });
    // Nothing newly blocked: the limit of 0 holds, and the pass applies.
    expect(outcome.result).toBe('applied');
    expect(outcome.impact!.sites.map((s) => [s.site, s.status])).toEqual([['shop', 'previewed']]);
    const { event } = passReport('files', outcome, null, { at: new Date(), durationMs: 1 });
    const { details } = describeEvent(event!);
    expect(details).toEqual(expect.arrayContaining(['  update ShieldSite shop (mode)', '      impact (last 24 h): would newly block 0 requests; 3 newly allowed']));
    const site = (await t.call('GET', `/api/v1/shield/sites/${await siteIdOf(SHOP)}`)).body as { mode: string };
    expect(site.mode).toBe('log');
  });
});

describe('an API that cannot preview', { timeout: 120_000 }, () => {
  let proxy: Server;
  let proxyEnv: Record<string, string>;
  /** The answer the proxy gives impact previews instead of the server's. */
  let impactAnswer: { status: number; headers: Record<string, string>; body: string } = { status: 404, headers: {}, body: '' };
  beforeAll(async () => {
    proxy = createServer((req, res) => {
      if (/\/impact$/.test(req.url ?? '')) {
        req.resume();
        res.writeHead(impactAnswer.status, { 'content-type': 'application/json', ...impactAnswer.headers }).end(impactAnswer.body);
        return;
      }
      const upstream = httpRequest(new URL(req.url ?? '/', t.url), { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      req.pipe(upstream);
    });
    const { url } = await listenOnLoopback(proxy);
    proxyEnv = { AEGIS_API_URL: url, AEGIS_API_KEY: t.adminKey };
    writeConfig({ mode: 'log', deny: [DENIED, '198.51.100.1'] }, { deny: ['203.0.113.7'] });
  });
  afterAll(() => new Promise<void>((done) => proxy.close(() => done())));

  it('a server without the route (404): the plan prints as before, with a note', async () => {
    impactAnswer = { status: 404, headers: {}, body: JSON.stringify({ error: { code: 'not_found', message: 'Route POST /impact not found', details: {} } }) };
    const result = await aegis(['plan'], proxyEnv);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toContain('IpAccessRule shop/ip-198.51.100.1');
    expect(result.stdout).not.toContain('impact (last 24 h)');
    expect(result.stdout).toContain('note: impact unavailable for site shop: the server offers no impact preview (404)');
  });

  it('rate-limited (429): a note; --max-new-blocks cannot be checked, so it fails', async () => {
    impactAnswer = { status: 429, headers: { 'retry-after': '60' }, body: JSON.stringify({ error: { code: 'rate_limited', message: 'slow down', details: {} } }) };
    const { code, plan } = await planJson([], proxyEnv);
    expect(code).toBe(2);
    expect(plan.impact!.notes).toEqual(['impact unavailable for site shop: rate-limited (429); try again in a minute, or pass --no-impact']);
    expect(plan.changes.every((c) => c.impact === null)).toBe(true);
    const gated = await aegis(['apply', '--yes', '--max-new-blocks', '100'], proxyEnv);
    expect(gated.code).toBe(1);
    expect(gated.stderr).toContain('refusing to apply: shop: impact unavailable (rate-limited (429)');
    expect((await ipRulesOf(SHOP)).map((r) => r.value)).toEqual([DENIED]);
  });
});

describe('impact in words', () => {
  const stats = (requests: number, clients: number, twoxx: number, client: string) => ({
    ...emptyStats(),
    requests,
    clients,
    networks: clients,
    top_clients: [{ value: client, requests }],
    origin_statuses: { classes: { '2xx': twoxx }, exact: { '200': twoxx } },
    first_seen: '2026-01-01T10:00:00.000Z',
    last_seen: '2026-01-01T11:00:00.000Z',
  });
  const group = (blocked: ReturnType<typeof stats>, exact: boolean): ImpactGroup => ({
    coverage: { records: 5000, with_values: 120, exact },
    newly_blocked: blocked,
    newly_challenged: emptyStats(),
    newly_allowed: emptyStats(),
  });

  it('says how far counts that read values go, with thousands apart', () => {
    const impact = { siteId: 's', objects: [], group: group(stats(37, 4, 2, '192.0.2.1'), false) };
    expect(changeImpactLines(impact, 'last 24 h')).toEqual([
      'impact (last 24 h): would newly block 37 requests from 4 clients (2 answered 2xx by the origin); 0 newly allowed',
      'values sampled: 120 of 5 000 requests',
    ]);
  });

  it("adds up several objects' counts: requests exactly, clients as an upper bound", () => {
    const merged = mergeGroups([group(stats(3, 1, 3, '192.0.2.1'), true), group(stats(4, 2, 0, '192.0.2.1'), false)], { records: 5000, with_values: 120, exact: false });
    expect(merged.newly_blocked).toMatchObject({ requests: 7, clients: 3, top_clients: [{ value: '192.0.2.1', requests: 7 }], origin_statuses: { classes: { '2xx': 3 } } });
    expect(merged.coverage.exact).toBe(false);
    const lines = changeImpactLines({ siteId: 's', objects: [{ object: { kind: 'mode', id: null }, ...merged }, { object: { kind: 'managed', id: 'x' }, ...merged }], group: merged }, 'last 7 d');
    expect(lines[0]).toBe('impact (last 7 d): would newly block 7 requests from up to 3 clients (3 answered 2xx by the origin); 0 newly allowed');
  });

  it('reads the windows the flag accepts', () => {
    expect(['30m', '6h', '24h', '7d'].map((w) => parseImpactWindow(w)?.ms)).toEqual([1_800_000, 21_600_000, 86_400_000, 604_800_000]);
    expect(parseImpactWindow('1d12h')).toEqual({ flag: '1d12h', label: 'last 1 d 12 h', ms: 36 * 3_600_000 });
    for (const bad of ['', '24', 'h', '0m', '-1h', '1.5h', '2w', '365d']) expect(parseImpactWindow(bad), bad).toBeNull();
  });
});
