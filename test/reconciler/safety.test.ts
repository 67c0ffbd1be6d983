// The reconciler's guard rails, end to end against a running server.
import { createServer, request as httpRequest, type Server } from 'node:http';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAegis } from '../support/cli.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
const dirs: string[] = [];
beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 1_000_000 });
});
afterAll(async () => {
  await t.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'aegis-safety-'));
  dirs.push(dir);
  return dir;
}

const site = (name: string, domain: string, ipRules: number) => `apiVersion: aegis/v1
kind: ShieldSite
metadata:
  name: ${name}
spec:
  domain: ${domain}
  origin_url: http://127.0.0.1:9
  mode: block
  ip_access:
${Array.from({ length: ipRules }, (_, i) => `    - name: r${i}\n      type: ip\n      value: 192.0.2.${i}\n      action: deny`).join('\n')}
`;

describe('validation before anything is written', () => {
  it('an invalid repo reports every error with file:line:col and exits 1 without a single write', async () => {
    const repo = tempRepo();
    cpSync('examples/gitops', repo, { recursive: true });
    writeFileSync(join(repo, 'broken.yaml'), 'apiVersion: aegis/v1\nkind: ShieldSite\nmetadata: {name: x\n');
    writeFileSync(
      join(repo, 'mistakes.yaml'),
      `apiVersion: aegis/v1
kind: VirtualPatch
metadata:
  name: bad-regex
spec:
  site: shop
  url_pattern: /x
  method: GET
  match_param: q
  match_regex: "(a)\\\\1"
---
apiVersion: aegis/v1
kind: IpAccessRule
metadata:
  name: dangling
spec:
  site: nowhere
  type: ip
  value: 192.0.2.1
  action: deny
---
apiVersion: aegis/v1
kind: ScanSchedule
metadata:
  name: typo
spec:
  name: typo
  scan_type: dast
  target: https://shop.example.com
  cron: "0 3 * * *"
  colour: red
`,
    );
    const before = (await t.call('GET', '/api/v1/audit-log?limit=200')).body.data.length;
    const env = { AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey };
    for (const command of [['plan', repo], ['apply', repo, '--yes'], ['validate', repo]]) {
      const result = await runAegis([...command, '--source', 'x'].filter((a) => !(command[0] === 'validate' && (a === '--source' || a === 'x'))), env);
      expect(result.code, command.join(' ')).toBe(1);
      const output = result.stdout + result.stderr;
      expect(output).toMatch(/broken\.yaml:\d+:\d+/);
      expect(output).toMatch(/mistakes\.yaml:10:\d+ VirtualPatch\/bad-regex: .*RE2/);
      expect(output).toMatch(/mistakes\.yaml:1\d:\d+ IpAccessRule\/dangling: .*nowhere/);
      expect(output).toMatch(/mistakes\.yaml:3\d:\d+ ScanSchedule\/typo: .*colour/);
    }
    expect((await t.call('GET', '/api/v1/audit-log?limit=200')).body.data.length).toBe(before);
    expect((await t.call('GET', '/api/v1/shield/sites')).body.data).toEqual([]);
  });
});

describe('thresholds', () => {
  it('deleting 40 % of 100 owned rules is refused without --force', async () => {
    const repo = tempRepo();
    const env = { AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey };
    writeFileSync(join(repo, 'site.yaml'), site('bulk', 'bulk.example.com', 100));
    expect((await runAegis(['apply', repo, '--source', 'bulk-src', '--yes'], env)).code).toBe(0);
    writeFileSync(join(repo, 'site.yaml'), site('bulk', 'bulk.example.com', 60));
    const refused = await runAegis(['apply', repo, '--source', 'bulk-src', '--yes'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/40 updates\/replacements\/deletions .* floor of 5 .* 25% of the 101 objects/);
    expect(refused.stderr).toContain('--force');
    const siteId = (await t.call('GET', '/api/v1/shield/sites?domain=bulk.example.com')).body.data[0].id;
    const count = async () => (await t.call('GET', `/api/v1/shield/sites/${siteId}/ip-access?limit=200`)).body.data.length;
    expect(await count()).toBe(100);
    const forced = await runAegis(['apply', repo, '--source', 'bulk-src', '--yes', '--force'], env);
    expect(forced.code, forced.stderr).toBe(0);
    expect(await count()).toBe(60);
  });

  it('--deny-weakening turns weakening changes into errors', async () => {
    const repo = tempRepo();
    const env = { AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey };
    writeFileSync(join(repo, 'site.yaml'), site('weak', 'weak.example.com', 1));
    expect((await runAegis(['apply', repo, '--source', 'weak-src', '--yes'], env)).code).toBe(0);
    writeFileSync(join(repo, 'site.yaml'), site('weak', 'weak.example.com', 1).replace('mode: block', 'mode: log'));
    const warned = await runAegis(['plan', repo, '--source', 'weak-src'], env);
    expect(warned.code).toBe(2);
    expect(warned.stdout).toMatch(/warning: ShieldSite\/weak: weakened \(mode block → log\)/);
    const denied = await runAegis(['plan', repo, '--source', 'weak-src', '--deny-weakening'], env);
    expect(denied.code).toBe(1);
    expect(denied.stdout).toMatch(/error: ShieldSite\/weak: weakened/);
  });
});

describe('failure mid-apply', () => {
  let proxy: Server;
  let proxyUrl: string;
  let writesAllowed = Infinity;
  let failReadsOf: RegExp | null = null;
  beforeAll(async () => {
    // Forwards to the real server, but answers 500 to writes once the allowance is used up, and to
    // reads of the paths matching failReadsOf.
    proxy = createServer((req, res) => {
      const write = req.method !== 'GET';
      if ((write && writesAllowed-- <= 0) || (!write && failReadsOf?.test(req.url ?? ''))) {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'internal', message: 'injected failure', details: {} } }));
        req.resume();
        return;
      }
      const target = new URL(req.url ?? '/', t.url);
      const upstream = httpRequest(target, { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      req.pipe(upstream);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const address = proxy.address();
    proxyUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(() => new Promise<void>((r) => proxy.close(() => r())));

  it('reports what was applied and what was not; re-running converges', async () => {
    const repo = tempRepo();
    mkdirSync(join(repo, 'sites'));
    writeFileSync(join(repo, 'sites/one.yaml'), site('one', 'one.example.com', 30));
    writesAllowed = 4;
    const failed = await runAegis(['apply', repo, '--source', 'fail-src', '--yes'], { AEGIS_API_URL: proxyUrl, AEGIS_API_KEY: t.adminKey });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/Applied 4 step\(s\)/);
    expect(failed.stdout).toMatch(/FAILED: create IpAccessRule one\/r\d+: .*injected failure/);
    expect(failed.stdout).toMatch(/Not attempted \(\d+\)/);
    writesAllowed = Infinity;
    const env = { AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey };
    const rerun = await runAegis(['apply', repo, '--source', 'fail-src', '--yes'], env);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stdout).toMatch(/Plan: \d+ to create, 0 to update, 0 to replace, 0 to delete/);
    expect((await runAegis(['plan', repo, '--source', 'fail-src'], env)).code).toBe(0);
    const siteId = (await t.call('GET', '/api/v1/shield/sites?domain=one.example.com')).body.data[0].id;
    expect((await t.call('GET', `/api/v1/shield/sites/${siteId}/ip-access?limit=200`)).body.data).toHaveLength(30);
    expect(readFileSync(join(repo, 'sites/one.yaml'), 'utf8')).toContain('one.example.com');
  });

  it('fails closed: a collection that cannot be read gets no deletions, and the command fails', async () => {
    const repo = tempRepo();
    const env = { AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey };
    writeFileSync(join(repo, 'site.yaml'), site('closed', 'closed.example.com', 3));
    expect((await runAegis(['apply', repo, '--source', 'closed-src', '--yes'], env)).code).toBe(0);
    writeFileSync(join(repo, 'site.yaml'), site('closed', 'closed.example.com', 0).replace('  ip_access:\n', ''));
    failReadsOf = /\/ip-access/;
    try {
      const result = await runAegis(['plan', repo, '--source', 'closed-src', '--json'], { AEGIS_API_URL: proxyUrl, AEGIS_API_KEY: t.adminKey });
      expect(result.code).toBe(1);
      const plan = JSON.parse(result.stdout) as { changes: { action: string }[]; incomplete: { collection: string }[]; errors: string[] };
      expect(plan.changes.filter((c) => c.action === 'delete')).toEqual([]);
      expect(plan.incomplete[0]?.collection).toMatch(/^IpAccessRule@site_/);
      expect(plan.errors.join('\n')).toContain('no deletions planned');
    } finally {
      failReadsOf = null;
    }
    const ok = await runAegis(['plan', repo, '--source', 'closed-src', '--json'], env);
    expect(ok.code).toBe(2);
    expect((JSON.parse(ok.stdout) as { summary: { delete: number } }).summary.delete).toBe(3);
  });
});
