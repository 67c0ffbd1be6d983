// URL scans end to end: a real server with its in-process worker and the Shield gateway, and the
// deliberately vulnerable fixture apps of test/fixtures/web (each lists its planted flaws). Scans
// are started over HTTP and their findings read back; a virtual patch made from the SQL-injection
// finding makes the gateway block the attack; fixing the fixture and verifying resolves the
// finding and removes the patch.
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusedAddress } from '../../platform/net/address-policy.ts';
import { startCveTarget } from '../fixtures/web/cve-target.ts';
import { startVulnerableApi } from '../fixtures/web/vulnerable-api.ts';
import { startVulnerableShop } from '../fixtures/web/vulnerable-shop.ts';
import { eventually, viaGateway } from '../support/gateway.ts';
import { sarifValidator } from '../support/sarif.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
const closers: (() => Promise<void>)[] = [];

interface Scan {
  id: string;
  status: string;
  error: string | null;
  summary: Record<string, number>;
}
interface Vulnerability {
  id: string;
  rule_id: string;
  status: string;
  resolution: string | null;
  location: { kind: string; url: string; method: string; parameter?: string };
  details: { attack?: { class: string; method: string; path: string; parameter: string; in: string }; policy?: string };
  verification: { status: string; evidence: string | null; error: string | null } | null;
  virtual_patch: { id: string; auto_remove: boolean } | null;
}

const FAST = { requests_per_second: 200, max_requests: 5_000 };

async function scanned(path: string, body: Record<string, unknown>): Promise<{ scan: Scan; findings: Vulnerability[] }> {
  const started = await t.call<Scan>('POST', path, { body });
  expect(started.status, started.text).toBe(202);
  let scan = started.body;
  await eventually(async () => {
    scan = (await t.call<Scan>('GET', `/api/v1/scans/${started.body.id}`)).body;
    return scan.status === 'completed' || scan.status === 'failed';
  }, 90_000, 100);
  expect(scan.error).toBeNull();
  expect(scan.status).toBe('completed');
  const findings = (await t.call<{ data: Vulnerability[] }>('GET', `/api/v1/vulnerabilities?scan_id=${scan.id}&limit=200`)).body.data;
  return { scan, findings };
}

const rules = (findings: Vulnerability[]) => [...new Set(findings.map((f) => f.rule_id))].sort();

beforeAll(async () => {
  t = await startTestServer({ allowPrivateTargets: true, shieldEnabled: true, rateLimitPerMinute: 100_000 });
}, 60_000);

afterAll(async () => {
  for (const close of closers) await close();
  await t?.close();
});

describe('DAST', () => {
  it('finds the planted XSS, SQL injection, open redirect and traversal, and nothing on the clean twin', async () => {
    const shop = await startVulnerableShop({ fixed: false });
    closers.push(shop.close);
    const { scan, findings } = await scanned('/api/v1/scans', { target: shop.url, ...FAST });
    console.log(`DAST of the vulnerable shop: ${findings.length} findings, rules ${rules(findings).join(', ')}`);
    for (const family of ['dast-xss-reflected', 'dast-sqli', 'dast-open-redirect', 'dast-path-traversal']) {
      expect(findings.some((f) => f.rule_id.startsWith(family)), family).toBe(true);
    }
    expect(scan.summary.total).toBe(findings.length);
    const coverage = (await t.call('GET', `/api/v1/scans/${scan.id}/coverage`)).body;
    expect(coverage).toMatchObject({ complete: true });
    expect(coverage.requests).toBeGreaterThan(20);
    expect(coverage.items).toBeGreaterThan(5);
    // The scan's completion and each new finding are events.
    const events = (await t.call<{ data: { type: string; data: { object: { id: string; first_scan_id?: string; status?: string } } }[] }>('GET', '/api/v1/events?type=scan.completed,vulnerability.created&limit=200')).body.data;
    expect(events.some((e) => e.type === 'scan.completed' && e.data.object.id === scan.id && e.data.object.status === 'completed')).toBe(true);
    expect(events.filter((e) => e.type === 'vulnerability.created' && e.data.object.first_scan_id === scan.id)).toHaveLength(findings.length);

    // GET /scans/:id/sarif serves URL scans too: one result per finding, located at its absolute URL.
    const sarif = await t.call('GET', `/api/v1/scans/${scan.id}/sarif`);
    expect(sarif.status, sarif.text).toBe(200);
    expect(sarif.headers.get('content-type')).toMatch(/^application\/sarif\+json/);
    const validate = sarifValidator();
    expect(validate(sarif.body), JSON.stringify(validate.errors)).toBe(true);
    type Result = { ruleId: string; partialFingerprints: Record<string, string>; locations: { physicalLocation: { artifactLocation: { uri: string; uriBaseId?: string }; region?: unknown } }[]; properties: Record<string, unknown> };
    const run = sarif.body.runs[0] as { results: Result[]; originalUriBaseIds?: unknown; properties: { scan_type: string; target: string; coverage?: { requests: number } }; tool: { driver: { rules: { id: string; properties: { tags: string[] } }[] } } };
    expect(run.properties.scan_type).toBe('dast');
    expect(run.properties.target.startsWith(shop.url)).toBe(true);
    expect(run.properties.coverage?.requests).toBe(coverage.requests);
    expect(run.originalUriBaseIds).toBeUndefined();
    expect(run.results).toHaveLength(findings.length);
    const byId = new Map(findings.map((f) => [f.id, f]));
    for (const r of run.results) {
      const f = byId.get(r.properties['aegis/vulnerability_id'] as string)!;
      expect(f, JSON.stringify(r.properties)).toBeDefined();
      expect(r.ruleId).toBe(f.rule_id);
      expect(r.locations[0]!.physicalLocation).toEqual({ artifactLocation: { uri: f.location.url } });
      expect(r.locations[0]!.physicalLocation.artifactLocation.uri).toMatch(/^https?:\/\//);
      expect(r.properties['aegis/method']).toBe(f.location.method);
      expect(r.partialFingerprints.primaryLocationLineHash).toMatch(/^[0-9a-f]{64}$/);
    }
    const sqli = run.tool.driver.rules.find((rule) => rule.id.startsWith('dast-sqli'))!;
    expect(sqli.properties.tags).toEqual(expect.arrayContaining(['security', 'dast', 'external/cwe/cwe-89']));

    const clean = await startVulnerableShop({ fixed: true });
    closers.push(clean.close);
    const twin = await scanned('/api/v1/scans', { target: clean.url, ...FAST });
    expect(twin.findings).toEqual([]);
  }, 120_000);

  it('refuses private targets unless the server allows them', async () => {
    const strict = await startTestServer();
    try {
      for (const target of ['http://127.0.0.1:9/', 'http://10.1.2.3/', 'http://[::1]:8080/', 'http://localhost:3000/']) {
        const res = await strict.call('POST', '/api/v1/scans', { body: { target } });
        expect(res.status, target).toBe(422);
        expect(res.body.error.message).toMatch(/AEGIS_ALLOW_PRIVATE_TARGETS/);
      }
      const pinned = await strict.call('POST', '/api/v1/scans', { body: { target: 'http://shop.example.com/', scope: { resolve: { 'shop.example.com': '192.168.1.5' } } } });
      expect(pinned.status).toBe(422);
      const outOfScope = await strict.call('POST', '/api/v1/scans', { body: { target: 'http://shop.example.com/', scope: { hosts: ['other.example.com'] } } });
      expect(outOfScope.status).toBe(422);
      // A name is judged by the address it resolves to, when the scan runs: this machine's own name.
      const own = await lookup(hostname()).catch(() => null);
      if (own && refusedAddress(own.address)) {
        const started = await strict.call<Scan>('POST', '/api/v1/scans', { body: { target: `http://${hostname()}:9/` } });
        expect(started.status).toBe(202);
        let scan = started.body;
        await eventually(async () => {
          scan = (await strict.call<Scan>('GET', `/api/v1/scans/${scan.id}`)).body;
          return scan.status === 'failed';
        }, 10_000, 100);
        expect(scan.error).toMatch(/private, loopback|AEGIS_ALLOW_PRIVATE_TARGETS/);
      }
    } finally {
      await strict.close();
    }
  });
});

describe('API and CVE scans', () => {
  it('the API scan finds the unauthenticated operation and the schema violation', async () => {
    const api = await startVulnerableApi({ fixed: false });
    closers.push(api.close);
    const { findings } = await scanned('/api/v1/api-scans', { base_url: api.url, document: api.document, auth: { headers: { authorization: 'Bearer user-1-token' } }, ...FAST });
    console.log(`API scan: ${findings.length} findings, rules ${rules(findings).join(', ')}`);
    expect(rules(findings)).toEqual(expect.arrayContaining(['api-auth-bypass', 'api-schema-violation']));
    // The credentials are sealed: not in the scan as the API shows it.
    const scans = (await t.call('GET', '/api/v1/scans?scan_type=api')).text;
    expect(scans).not.toContain('user-1-token');

    const invalid = await t.call('POST', '/api/v1/api-scans', { body: { base_url: api.url, document: { openapi: '3.0.3' } } });
    expect(invalid.status).toBe(422);
  }, 120_000);

  it('a CVE template matches the imitation of the vulnerable version and not the patched one', async () => {
    const vulnerable = await startCveTarget({ patched: false });
    const patched = await startCveTarget({ patched: true });
    closers.push(vulnerable.close, patched.close);
    const hit = await scanned('/api/v1/cve-scans', { target: vulnerable.url, cves: ['CVE-2021-41773'], ...FAST });
    expect(rules(hit.findings)).toEqual(['CVE-2021-41773']);
    const miss = await scanned('/api/v1/cve-scans', { target: patched.url, cves: ['CVE-2021-41773'], ...FAST });
    expect(miss.findings).toEqual([]);
    const unknown = await t.call('POST', '/api/v1/cve-scans', { body: { target: vulnerable.url, cves: ['CVE-1999-99999'] } });
    expect(unknown.status).toBe(422);
  }, 60_000);
});

describe('virtual patch from a finding, verify-fix', () => {
  it('shields the SQL injection at the gateway, then verifying the fix resolves it and removes the patch', async () => {
    const shop = await startVulnerableShop({ fixed: false });
    closers.push(shop.close);
    const port = new URL(shop.url).port;
    // Managed rules off: the test shows that the patch, and then its removal, decide what passes.
    const site = await t.call('POST', '/api/v1/shield/sites', { body: { domain: 'shop.aegis.test', origin_url: shop.url, mode: 'block', managed_rules: { enabled: false } } });
    expect(site.status, site.text).toBe(201);
    // The scan reaches the app under the site's name, the way it would in production.
    const { findings } = await scanned('/api/v1/scans', { target: `http://shop.aegis.test:${port}/`, scope: { resolve: { 'shop.aegis.test': '127.0.0.1' } }, ...FAST });
    const sqli = findings.find((f) => f.rule_id.startsWith('dast-sqli') && f.details.attack?.in === 'query' && f.details.attack.method === 'GET');
    expect(sqli, rules(findings).join(', ')).toBeDefined();
    const attack = sqli!.details.attack!;

    const patched = await t.call('POST', `/api/v1/vulnerabilities/${sqli!.id}/virtual-patch`, { body: { auto_remove: true } });
    expect(patched.status, patched.text).toBe(201);
    expect(patched.body).toMatchObject({ url_pattern: attack.path, match_param: attack.parameter, action: 'block', source_finding_id: sqli!.id });

    const gateway = t.server.gateway!.url;
    const attackPath = `${attack.path}?${attack.parameter}=${encodeURIComponent("1' OR '1'='1")}`;
    const normalPath = `${attack.path}?${attack.parameter}=1`;
    await eventually(async () => (await viaGateway(gateway, attackPath, { host: 'shop.aegis.test' })).status === 403, 5_000);
    expect((await viaGateway(gateway, normalPath, { host: 'shop.aegis.test' })).status).toBe(200);

    // Another finding cannot be patched on a site that does not exist.
    const elsewhere = await scanned('/api/v1/scans', { target: shop.url, ...FAST });
    const unpatchable = elsewhere.findings.find((f) => f.details.attack);
    expect((await t.call('POST', `/api/v1/vulnerabilities/${unpatchable!.id}/virtual-patch`, { body: {} })).status).toBe(409);

    // Still vulnerable: verifying reproduces it and keeps it open.
    const first = await t.call<Vulnerability>('POST', `/api/v1/vulnerabilities/${sqli!.id}/verify`);
    expect(first.status, first.text).toBe(202);
    expect(first.body.verification?.status).toBe('queued');
    let vuln!: Vulnerability;
    await eventually(async () => {
      vuln = (await t.call<Vulnerability>('GET', `/api/v1/vulnerabilities/${sqli!.id}`)).body;
      return vuln.verification?.status === 'reproduced';
    }, 30_000, 100);
    expect(vuln.status).toBe('open');

    await shop.fixSqli();
    await t.call('POST', `/api/v1/vulnerabilities/${sqli!.id}/verify`);
    await eventually(async () => {
      vuln = (await t.call<Vulnerability>('GET', `/api/v1/vulnerabilities/${sqli!.id}`)).body;
      return vuln.verification?.status === 'not_reproduced';
    }, 30_000, 100);
    expect(vuln).toMatchObject({ status: 'resolved', resolution: 'verified', virtual_patch: null });
    const patches = (await t.call('GET', `/api/v1/shield/sites/${site.body.id}/virtual-patches`)).body.data as { id: string }[];
    expect(patches.map((p) => p.id)).not.toContain(patched.body.id);
    await eventually(async () => (await viaGateway(gateway, attackPath, { host: 'shop.aegis.test' })).status === 200, 5_000);
  }, 180_000);
});
