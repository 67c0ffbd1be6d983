// The API scan against the planted-flaw API (test/fixtures/web/vulnerable-api.ts) and its fixed twin.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { ApiDocumentError, parseApiDocument, recheckApi, scanApi } from '../../scanners/api-scan/scan.ts';
import { ScanHttp } from '../../scanners/web/http.ts';
import type { WebScanContext, WebScanOutput } from '../../scanners/web/types.ts';
import { FIXTURE_TOKENS, startVulnerableApi, type VulnerableApi } from '../fixtures/web/vulnerable-api.ts';

function contextFor(url: string): WebScanContext {
  const http = new ScanHttp({
    scope: { hosts: [new URL(url).host], pathPrefixes: ['/'] },
    limits: { requestsPerSecond: 1000, timeoutMs: 5000 },
    auth: { headers: { authorization: `Bearer ${FIXTURE_TOKENS.alice}` } },
    allowPrivate: true,
  });
  return { http, signal: new AbortController().signal };
}

async function scan(api: VulnerableApi, document: unknown = api.document): Promise<{ output: WebScanOutput; ms: number }> {
  const ctx = contextFor(api.url);
  const started = performance.now();
  try {
    const output = await scanApi({ document, baseUrl: api.url }, ctx);
    return { output, ms: Math.round(performance.now() - started) };
  } finally {
    await ctx.http.close();
  }
}

const summary = (output: WebScanOutput) => output.findings.map((f) => `${f.rule_id} ${f.location.method} ${String(f.details.operation)}${f.location.parameter ? ` ${f.location.parameter}` : ''}`).sort();

describe('API scan', () => {
  let vulnerable: VulnerableApi;
  let fixed: VulnerableApi;
  let found: WebScanOutput;

  beforeAll(async () => {
    [vulnerable, fixed] = await Promise.all([startVulnerableApi({ fixed: false }), startVulnerableApi({ fixed: true })]);
    const { output, ms } = await scan(vulnerable);
    found = output;
    console.log(`vulnerable API: ${output.coverage.requests} requests, ${output.coverage.items} operations, ${output.findings.length} findings, ${ms} ms`);
  });

  afterAll(async () => {
    await Promise.all([vulnerable?.close(), fixed?.close()]);
  });

  it('finds the unauthenticated operation and the schema violation, and the other planted flaws', () => {
    expect(summary(found)).toEqual([
      'api-auth-bypass GET GET /orders/{id}',
      'api-bola GET GET /users/{id} id',
      'api-injection-error GET GET /products sort',
      'api-injection-sqli GET GET /search q',
      'api-schema-violation GET GET /products',
      'api-server-error POST POST /items',
    ]);
    const byRule = new Map(found.findings.map((f) => [f.rule_id, f]));

    const bypass = byRule.get('api-auth-bypass')!;
    expect(bypass).toMatchObject({ severity: 'high', cwe: 'CWE-306', location: { kind: 'url', url: `${vulnerable.url}/orders/1`, method: 'GET' } });
    expect(bypass.details.check).toMatchObject({ rule: 'api-auth-bypass', request: { method: 'GET', url: `${vulnerable.url}/orders/1`, anonymous: true } });
    // No credential is stored in a finding: ScanHttp adds it when sending.
    expect(JSON.stringify(found.findings)).not.toContain(FIXTURE_TOKENS.alice);

    const schema = byRule.get('api-schema-violation')!;
    expect(schema).toMatchObject({ severity: 'medium', cwe: 'CWE-684' });
    expect(schema.evidence).toContain('/1/price must be number');

    const sqli = byRule.get('api-injection-sqli')!;
    expect(sqli).toMatchObject({ severity: 'high', cwe: 'CWE-89', location: { kind: 'url', url: `${vulnerable.url}/search?q=lamp'`, method: 'GET', parameter: 'q' } });
    expect(sqli.details.attack).toEqual({ class: 'sqli', method: 'GET', path: '/search', parameter: 'q', in: 'query' });
    expect(sqli.evidence).toContain('SQLITE_ERROR');

    const hidden = byRule.get('api-injection-error')!;
    expect(hidden).toMatchObject({ severity: 'medium', cwe: 'CWE-89', location: { url: `${vulnerable.url}/products?sort=name'`, parameter: 'sort' } });
    expect(hidden.details.attack).toEqual({ class: 'sqli', method: 'GET', path: '/products', parameter: 'sort', in: 'query' });
    expect(hidden.details.check).toMatchObject({ control: { url: `${vulnerable.url}/products?sort=name''` } });

    expect(byRule.get('api-server-error')).toMatchObject({ cwe: 'CWE-755', location: { url: `${vulnerable.url}/items`, method: 'POST' } });
    expect(byRule.get('api-bola')).toMatchObject({ cwe: 'CWE-639', location: { url: `${vulnerable.url}/users/2`, parameter: 'id' } });
    for (const f of found.findings) expect(f.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(found.coverage.items).toBe(7);
  });

  it('reports nothing on the fixed twin, and fingerprints do not depend on the host', async () => {
    const { output, ms } = await scan(fixed);
    console.log(`fixed API: ${output.coverage.requests} requests, ${output.coverage.items} operations, ${output.findings.length} findings, ${ms} ms`);
    expect(output.findings).toEqual([]);
    expect(output.coverage.items).toBe(7);
    // Same document on another port: the same fingerprints.
    const again = await scan(vulnerable, { ...vulnerable.document, servers: [{ url: 'http://other.example' }] });
    expect(again.output.findings.map((f) => f.fingerprint).sort()).toEqual(found.findings.map((f) => f.fingerprint).sort());
  });

  it('contacts only the base URL, never the servers the document names', async () => {
    let decoyHits = 0;
    const decoy: Server = createServer((_req, res) => {
      decoyHits += 1;
      res.end('{}');
    });
    await new Promise<void>((resolve) => decoy.listen(0, '127.0.0.1', resolve));
    const decoyUrl = `http://127.0.0.1:${(decoy.address() as AddressInfo).port}`;
    try {
      const document = structuredClone(fixed.document) as Record<string, Record<string, Record<string, unknown>>>;
      document.servers = [{ url: decoyUrl }] as unknown as Record<string, Record<string, unknown>>;
      document.paths!['/health']!.servers = [{ url: `${decoyUrl}/v2` }];
      const { output } = await scan(fixed, document);
      expect(decoyHits).toBe(0);
      expect(output.coverage.notes.join('\n')).toContain(`the document's servers are not contacted (${decoyUrl})`);
      expect(output.findings).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => decoy.close(() => resolve()));
    }
  });

  it('stays inside the scope: operations under other path prefixes are skipped and noted', async () => {
    const before = fixed.requests;
    const http = new ScanHttp({ scope: { hosts: [new URL(fixed.url).host], pathPrefixes: ['/orders'] }, limits: { requestsPerSecond: 1000 }, allowPrivate: true });
    try {
      const output = await scanApi({ document: fixed.document, baseUrl: fixed.url }, { http, signal: new AbortController().signal });
      expect(output.coverage.items).toBe(2);
      expect(fixed.requests - before).toBe(output.coverage.requests);
      expect(output.coverage.notes).toContain(`skipped, out of scope: GET ${fixed.url}/products`);
    } finally {
      await http.close();
    }
  });

  it('recheck reproduces every finding on the vulnerable API and none once fixed', async () => {
    const ctxVulnerable = contextFor(vulnerable.url);
    const ctxFixed = contextFor(fixed.url);
    try {
      for (const f of found.findings) {
        const check = f.details.check as Record<string, unknown>;
        const again = await recheckApi(check, ctxVulnerable);
        expect(again.reproduced, `${f.rule_id}: ${again.evidence}`).toBe(true);
        // The same check against the fixed deployment.
        const moved = JSON.parse(JSON.stringify(check).replaceAll(vulnerable.url, fixed.url)) as Record<string, unknown>;
        const after = await recheckApi(moved, ctxFixed);
        expect(after.reproduced, `${f.rule_id} after the fix: ${after.evidence}`).toBe(false);
        expect(after.evidence).toMatch(/^not reproduced: answered \d{3}/);
      }
      console.log(`rechecks: ${ctxVulnerable.http.requests} requests (vulnerable), ${ctxFixed.http.requests} (fixed)`);
    } finally {
      await Promise.all([ctxVulnerable.http.close(), ctxFixed.http.close()]);
    }
  });

  it('ignores rules the policy ignores, without sending their requests', async () => {
    const ctx = contextFor(vulnerable.url);
    try {
      const policy = { 'api-auth-bypass': 'ignore', 'api-injection-sqli': 'ignore', 'api-injection-error': 'ignore', 'api-bola': 'ignore' } as const;
      const output = await scanApi({ document: vulnerable.document, baseUrl: vulnerable.url, policy }, ctx);
      expect(summary(output)).toEqual(['api-schema-violation GET GET /products', 'api-server-error POST POST /items']);
      // the valid request of each operation only
      expect(output.coverage.requests).toBe(7);
    } finally {
      await ctx.http.close();
    }
  });

  it('stops at the request budget with what it found so far, and stops at once when canceled', async () => {
    const http = new ScanHttp({ scope: { hosts: [new URL(vulnerable.url).host], pathPrefixes: ['/'] }, limits: { maxRequests: 4, requestsPerSecond: 1000 }, allowPrivate: true });
    try {
      const output = await scanApi({ document: vulnerable.document, baseUrl: vulnerable.url }, { http, signal: new AbortController().signal });
      expect(output.coverage.requests).toBe(4);
      expect(output.coverage.notes).toContain('stopped: request budget of 4 used up');
      const canceled = new AbortController();
      canceled.abort();
      await expect(scanApi({ document: vulnerable.document, baseUrl: vulnerable.url }, { http, signal: canceled.signal })).rejects.toThrow(/abort/i);
      await expect(recheckApi({ scanner: 'api', version: 1, rule: 'api-bola' }, { http, signal: new AbortController().signal })).rejects.toThrow(/not an API scan check/);
    } finally {
      await http.close();
    }
  });

  it('parses JSON and YAML documents and refuses invalid ones with clear reasons', async () => {
    let started = performance.now();
    // The route's way: validated on a worker thread.
    expect(await parseApiDocument(toYaml(vulnerable.document))).toEqual(vulnerable.document);
    console.log(`document parsing on a worker thread: ${Math.round(performance.now() - started)} ms`);
    started = performance.now();
    const inProcess = { worker: false } as const;
    expect(await parseApiDocument(JSON.stringify(vulnerable.document), inProcess)).toEqual(vulnerable.document);
    await expect(parseApiDocument('{"swagger": "2.0", "info": {}}', inProcess)).rejects.toThrow(/Swagger 2\.0 documents are not supported/);
    const missing = await parseApiDocument('openapi: 3.0.3\ninfo:\n  version: "1"\npaths: {}\n', inProcess).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ApiDocumentError);
    expect((missing as ApiDocumentError).reasons.join('\n')).toMatch(/title/);
    await expect(parseApiDocument('openapi: 3.0.3\ninfo: [unclosed\n', inProcess)).rejects.toThrow(/not valid YAML/);
    await expect(parseApiDocument('{"openapi": "3.0.3", "info": {"title": "x", "version": "1"}, "paths": {"/a": {"get": {"responses": {"200": {"$ref": "https://evil.example/r.json"}}}}}}', inProcess)).rejects.toThrow(/external \$ref/);
    const ctx = contextFor(vulnerable.url);
    await expect(scanApi({ document: 'not a document', baseUrl: vulnerable.url }, ctx)).rejects.toThrow(ApiDocumentError);
    expect(ctx.http.requests).toBe(0);
    await ctx.http.close();
    console.log(`document parsing in process (5 documents): ${Math.round(performance.now() - started)} ms`);
  });
});
