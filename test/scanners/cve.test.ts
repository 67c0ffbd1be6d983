// CVE-targeted scans: the bundled template library (every file loads, selection by CVE id and tag,
// unknown ids reported), the template validator's errors, the engine's matchers and extractors, and
// scans and rechecks against a fixture that imitates vulnerable and patched versions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTemplate } from '../../scanners/cve/engine.ts';
import { bundledTemplates, knownTags, loadTemplates, selectTemplates, templateCatalog } from '../../scanners/cve/library.ts';
import { checkCveSelection, CveSelectionError, recheckCve, scanCve } from '../../scanners/cve/scan.ts';
import { compileTemplate, TemplateError, type CveTemplate } from '../../scanners/cve/template.ts';
import { ScanHttp, type ScanLimits } from '../../scanners/web/http.ts';
import type { WebScanContext, WebScanOutput } from '../../scanners/web/types.ts';
import { startCveTarget, type CveTarget } from '../fixtures/web/cve-target.ts';

let vulnerable: CveTarget;
let patched: CveTarget;
const clients: ScanHttp[] = [];

beforeAll(async () => {
  [vulnerable, patched] = await Promise.all([startCveTarget({ patched: false }), startCveTarget({ patched: true })]);
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all([vulnerable.close(), patched.close()]);
});

function context(target: CveTarget, options: { limits?: Partial<ScanLimits>; pathPrefixes?: string[] } = {}): WebScanContext {
  const http = new ScanHttp({
    scope: { hosts: [new URL(target.url).host], pathPrefixes: options.pathPrefixes ?? ['/'] },
    limits: { requestsPerSecond: 1000, ...options.limits },
    allowPrivate: true,
  });
  clients.push(http);
  return { http, signal: new AbortController().signal };
}

async function scan(target: CveTarget, path: string, selection: { cves?: string[]; tags?: string[] }, label: string): Promise<WebScanOutput> {
  const before = target.requests;
  const started = performance.now();
  const out = await scanCve({ target: `${target.url}${path}`, ...selection }, context(target));
  console.log(`${label}: ${out.coverage.items} template(s), ${out.coverage.requests} request(s) sent, ${target.requests - before} served, ${out.findings.length} finding(s), ${(performance.now() - started).toFixed(0)} ms`);
  return out;
}

const ids = (out: WebScanOutput) => out.findings.map((f) => f.rule_id).sort();

/** A one-request template for engine tests. */
function inline(http: unknown[], id = 'inline-test'): CveTemplate {
  return compileTemplate({ id, info: { name: 'inline', severity: 'info', tags: 'test' }, http }, 'inline');
}

describe('bundled library', () => {
  it('loads and validates every template, each named after its CVE', () => {
    const templates = loadTemplates();
    expect(templates.length).toBeGreaterThanOrEqual(12);
    for (const t of templates) {
      expect(t.cveIds, t.id).toContain(t.id);
      expect(t.tags.length, t.id).toBeGreaterThan(0);
      expect(t.references.length, t.id).toBeGreaterThan(0);
      expect(t.description.length, t.id).toBeGreaterThan(40);
      expect(t.cvssScore, t.id).not.toBeNull();
      // Read-only detection: the schema only admits these methods.
      for (const r of t.requests) expect(['GET', 'HEAD', 'POST', 'OPTIONS']).toContain(r.method);
    }
    expect(bundledTemplates()).toBe(bundledTemplates());
    expect(templateCatalog().map((c) => c.id)).toEqual(templates.map((t) => t.id));
  });

  it('selects by CVE id (any case) and by tag, as a union', () => {
    expect(selectTemplates({ cves: ['cve-2021-41773'] }).templates.map((t) => t.id)).toEqual(['CVE-2021-41773']);
    const apache = selectTemplates({ tags: ['apache'] }).templates.map((t) => t.id);
    expect(apache).toEqual(expect.arrayContaining(['CVE-2021-41773', 'CVE-2021-42013', 'CVE-2017-5638']));
    expect(apache).not.toContain('CVE-2022-22965');
    const union = selectTemplates({ cves: ['CVE-2022-22965'], tags: ['httpd'] }).templates.map((t) => t.id);
    expect(union.sort()).toEqual(['CVE-2021-41773', 'CVE-2021-42013', 'CVE-2022-22965']);
    expect(knownTags()).toEqual(expect.arrayContaining(['traversal', 'rce', 'confluence', 'struts', 'spring']));
  });

  it('reports unknown CVE ids and tags, and an empty selection', () => {
    const sel = selectTemplates({ cves: ['CVE-2021-41773', 'CVE-1999-0001'], tags: ['nope'] });
    expect(sel.templates.map((t) => t.id)).toEqual(['CVE-2021-41773']);
    expect(sel.unknownCves).toEqual(['CVE-1999-0001']);
    expect(sel.unknownTags).toEqual(['nope']);
    expect(checkCveSelection({ cves: ['CVE-2021-41773', 'CVE-1999-0001'] })).toMatch(/no bundled template covers CVE-1999-0001/);
    expect(checkCveSelection({ tags: ['nope'] })).toMatch(/no bundled template is tagged nope \(known tags: .*traversal/);
    expect(checkCveSelection({})).toMatch(/at least one CVE id/);
    expect(checkCveSelection({ cves: [], tags: [] })).toMatch(/at least one CVE id/);
    expect(checkCveSelection({ cves: ['CVE-2021-41773'], tags: ['rce'] })).toBeNull();
  });

  it('version-only templates draw the line at the fixed releases', () => {
    const versionRegex = (id: string) => {
      const t = bundledTemplates().find((x) => x.id === id)!;
      const re = t.requests[0]!.matchers.find((m) => m.type === 'regex')!.patterns[0]!.re!;
      return (text: string) => re.test(text);
    };
    const drupal = versionRegex('CVE-2018-7600');
    const changelog = (v: string) => `Drupal ${v}, 2018-01-01\n-----------------------\n- Fixed security issues.\n`;
    for (const v of ['7.0', '7.9', '7.49', '7.57', '8.0.0', '8.2.7', '8.3.8', '8.4.5', '8.5.0']) expect(drupal(changelog(v)), v).toBe(true);
    for (const v of ['7.58', '7.59', '7.100', '8.3.9', '8.4.6', '8.5.1', '8.6.0', '9.0.0', '6.38']) expect(drupal(changelog(v)), v).toBe(false);
    // Only the first entry counts: every copy lists the old releases further down.
    expect(drupal(`${changelog('7.58')}\n${changelog('7.57')}`)).toBe(false);

    const confluence = versionRegex('CVE-2023-22515');
    const page = (v: string) => `<head><meta name="ajs-version-number" content="${v}"></head>`;
    for (const v of ['8.0.0', '8.2.3', '8.3.2', '8.4.0', '8.4.2', '8.5.0', '8.5.1']) expect(confluence(page(v)), v).toBe(true);
    for (const v of ['7.19.16', '8.3.3', '8.4.3', '8.5.2', '8.5.10', '8.6.0', '9.0.1']) expect(confluence(page(v)), v).toBe(false);
  });

  it('refuses to scan an empty selection, and runs what is known of a partly unknown one', async () => {
    await expect(scanCve({ target: vulnerable.url, cves: ['CVE-1999-0001'] }, context(vulnerable))).rejects.toThrow(CveSelectionError);
    const out = await scan(vulnerable, '', { cves: ['CVE-2021-41773', 'CVE-1999-0001'] }, 'partly unknown selection');
    expect(ids(out)).toEqual(['CVE-2021-41773']);
    expect(out.coverage.notes).toContain('no bundled template covers CVE-1999-0001');
  });
});

describe('template validation', () => {
  const base = { method: 'GET', path: ['{{BaseURL}}/'], matchers: [{ type: 'status', status: [200] }] };
  const bad = (http: unknown[], extra: Record<string, unknown> = {}) => () => compileTemplate({ id: 'bad-one', info: { name: 'x', severity: 'low', tags: ['t'] }, http, ...extra }, 'bad.yaml');

  it('names the file, the template and the field', () => {
    expect(bad([{ ...base, matchers: [{ type: 'word', part: 'body' }] }])).toThrow(/bad\.yaml \(bad-one\): http\[0\]\.matchers\[0\]: missing "words"/);
    expect(bad([{ ...base, colour: 'red' }])).toThrow(/http\[0\]: unknown field "colour"/);
    expect(bad([{ ...base, method: 'PUT' }])).toThrow(/http\[0\]\.method: must be one of GET, HEAD, POST, OPTIONS/);
    expect(bad([{ ...base, path: ['http://elsewhere.example/'] }])).toThrow(/http\[0\]\.path\[0\]/);
    expect(bad([base], { info: { name: 'x', severity: 'urgent', tags: 't' } })).toThrow(/info\.severity: must be one of critical/);
    expect(() => compileTemplate({ id: 'CVE-2020-0001', info: { name: 'x', severity: 'low', tags: 't', classification: { 'cve-id': 'CVE-2020-0002' } }, http: [base] }, 'f.yaml')).toThrow(/cve-id must include the template id/);
    expect(() => compileTemplate({ id: 'x-y', info: { name: 'x', severity: 'low', tags: 't', classification: { 'cve-id': 'cve-1' } }, http: [base] }, 'f.yaml')).toThrow(/cve-id: must be a CVE id/);
  });

  it('compiles every regex on RE2 and refuses what RE2 cannot run', () => {
    expect(bad([{ ...base, matchers: [{ type: 'regex', regex: ['(?<=a)b'] }] }])).toThrow(/matchers\[0\]\.regex\[0\] is not a valid RE2 pattern/);
    expect(bad([{ ...base, matchers: [{ type: 'regex', regex: ['a*'] }] }])).toThrow(/matches the empty string/);
    expect(bad([{ ...base, extractors: [{ type: 'regex', regex: ['a(b)'], group: 2 }] }])).toThrow(/group: 2 but regex\[0\] has 1 group/);
  });

  it('checks variables, numbered parts and matcher fields', () => {
    expect(bad([{ ...base, path: ['{{BaseURL}}/{{token}}'] }])).toThrow(/path\[0\]: \{\{token\}\} is not defined/);
    // An extractor's value exists for later paths of its request and for later requests, not its first path.
    expect(bad([{ ...base, path: ['{{BaseURL}}/{{tok}}'], extractors: [{ type: 'regex', name: 'tok', regex: ['x'] }] }])).toThrow(/\{\{tok\}\} is not defined/);
    expect(() => inline([{ ...base, path: ['{{BaseURL}}/', '{{BaseURL}}/{{tok}}'], extractors: [{ type: 'regex', name: 'tok', regex: ['x'] }] }])).not.toThrow();
    expect(bad([{ ...base, matchers: [{ type: 'status', part: 'status_2', status: [200] }] }])).toThrow(/needs req-condition: true/);
    expect(bad([{ ...base, 'req-condition': true, matchers: [{ type: 'status', part: 'status_2', status: [200] }] }])).toThrow(/status_2 names a path this request does not have/);
    expect(bad([{ ...base, matchers: [{ type: 'word', words: ['a'], regex: ['b'] }] }])).toThrow(/"regex" does not belong to a word matcher/);
    expect(bad([{ ...base, extractors: [{ type: 'regex', regex: ['a'], internal: true }] }])).toThrow(/extractors\[0\]: missing "name"/);
    expect(bad([{ method: 'GET', path: ['{{BaseURL}}/'], extractors: [{ type: 'regex', name: 'v', regex: ['a'] }] }])).toThrow(/no request has matchers/);
  });
});

describe('engine: matchers and extractors', () => {
  let ctx: WebScanContext;
  beforeAll(() => {
    ctx = context(vulnerable);
  });

  /** One GET of the fixture's "It works!" page with the given matchers. */
  async function matches(matchers: unknown[], condition?: 'and' | 'or'): Promise<boolean> {
    const t = inline([{ method: 'GET', path: ['{{RootURL}}/'], matchers, ...(condition ? { 'matchers-condition': condition } : {}) }]);
    return (await runTemplate(t, vulnerable.url, ctx)).matches.length > 0;
  }

  it('word: or/and conditions, case-insensitivity, negative, parts', async () => {
    expect(await matches([{ type: 'word', words: ['It works!'] }])).toBe(true);
    expect(await matches([{ type: 'word', words: ['nope'] }])).toBe(false);
    expect(await matches([{ type: 'word', words: ['nope', 'It works!'] }])).toBe(true);
    expect(await matches([{ type: 'word', condition: 'and', words: ['nope', 'It works!'] }])).toBe(false);
    expect(await matches([{ type: 'word', words: ['IT WORKS'] }])).toBe(false);
    expect(await matches([{ type: 'word', words: ['IT WORKS'], 'case-insensitive': true }])).toBe(true);
    expect(await matches([{ type: 'word', words: ['nope'], negative: true }])).toBe(true);
    expect(await matches([{ type: 'word', words: ['It works!'], negative: true }])).toBe(false);
    expect(await matches([{ type: 'word', part: 'header', words: ['server: Apache/2.4.49'] }])).toBe(true);
    expect(await matches([{ type: 'word', part: 'header', words: ['It works!'] }])).toBe(false);
    expect(await matches([{ type: 'word', part: 'all', condition: 'and', words: ['server: Apache', 'It works!'] }])).toBe(true);
  });

  it('regex, status and size', async () => {
    expect(await matches([{ type: 'regex', regex: ['<h1>[A-Z][a-z] works'] }])).toBe(true);
    expect(await matches([{ type: 'regex', regex: ['(?i)<H1>IT'] }])).toBe(true);
    expect(await matches([{ type: 'regex', regex: ['<H1>IT'], 'case-insensitive': true }])).toBe(true);
    expect(await matches([{ type: 'regex', part: 'header', regex: ['(?m)^server: Apache/2\\.4\\.4[0-9] '] }])).toBe(true);
    expect(await matches([{ type: 'regex', regex: ['^It works'] }])).toBe(false);
    expect(await matches([{ type: 'status', status: [200] }])).toBe(true);
    expect(await matches([{ type: 'status', status: [404, 500] }])).toBe(false);
    expect(await matches([{ type: 'status', status: [404], negative: true }])).toBe(true);
    expect(await matches([{ type: 'size', size: [Buffer.byteLength('<html><body><h1>It works!</h1></body></html>\n')] }])).toBe(true);
    expect(await matches([{ type: 'size', size: [1] }])).toBe(false);
  });

  it('matchers-condition: or by default, and when asked', async () => {
    const two = [{ type: 'status', status: [200] }, { type: 'word', words: ['nope'] }];
    expect(await matches(two)).toBe(true);
    expect(await matches(two, 'and')).toBe(false);
    expect(await matches([{ type: 'status', status: [200] }, { type: 'word', words: ['nope'], negative: true }], 'and')).toBe(true);
  });

  it('extractors feed later requests, and a request whose variable was not extracted is skipped', async () => {
    const t = inline([
      {
        method: 'GET',
        path: ['{{BaseURL}}/struts/index.action'],
        extractors: [
          { type: 'kval', name: 'session', internal: true, kval: ['JSESSIONID'] },
          { type: 'kval', name: 'server', kval: ['server'] },
        ],
      },
      {
        method: 'GET',
        path: ['{{BaseURL}}/spring/greeting?name={{session}}'],
        'matchers-condition': 'and',
        matchers: [
          { type: 'status', status: [200] },
          { type: 'word', words: ['Hello {{session}}'] },
          { type: 'regex', regex: ['"greeting":"Hello {{session}}"'] },
        ],
        extractors: [{ type: 'regex', name: 'greeting', group: 1, regex: ['"greeting":"([^"]+)"'] }],
      },
    ]);
    const run = await runTemplate(t, vulnerable.url, ctx);
    expect(run.requests).toBe(2);
    expect(run.matches).toHaveLength(1);
    expect(run.matches[0]!.url).toBe(`${vulnerable.url}/spring/greeting?name=0123456789ABCDEF`);
    // Internal values feed requests but are not reported.
    expect(run.extracted).toEqual({ server: ['Apache/2.4.49 (Unix)'], greeting: ['Hello 0123456789ABCDEF'] });

    const missing = inline([
      { method: 'GET', path: ['{{RootURL}}/'], extractors: [{ type: 'regex', name: 'token', internal: true, regex: ['csrf=[a-z]+'] }] },
      { method: 'GET', path: ['{{RootURL}}/{{token}}'], matchers: [{ type: 'status', status: [200, 404] }] },
    ]);
    const skipped = await runTemplate(missing, vulnerable.url, ctx);
    expect(skipped.requests).toBe(1);
    expect(skipped.matches).toHaveLength(0);
    expect(skipped.notes.join('\n')).toMatch(/skipped GET \{\{RootURL\}\}\/\{\{token\}\}: nothing was extracted for \{\{token\}\}/);
  });

  it('{{randstr}} is one value per run, usable in requests and matchers', async () => {
    const t = inline([{ method: 'GET', path: ['{{BaseURL}}/spring/greeting?name={{randstr}}'], matchers: [{ type: 'word', words: ['Hello {{randstr}}"'] }] }]);
    const run = await runTemplate(t, vulnerable.url, ctx);
    expect(run.matches).toHaveLength(1);
    expect(run.matches[0]!.url).toMatch(/name=[a-z0-9]{20}$/);
    expect(run.matches[0]!.stablePath).toBe('/spring/greeting?name={{randstr}}');
  });

  it('stop-at-first-match ends the template; without it every matching path is reported', async () => {
    const paths = ['{{RootURL}}/', '{{RootURL}}/?again'];
    const all = await runTemplate(inline([{ method: 'GET', path: paths, matchers: [{ type: 'status', status: [200] }] }]), vulnerable.url, ctx);
    expect(all.matches.map((m) => m.url)).toEqual([`${vulnerable.url}/`, `${vulnerable.url}/?again`]);
    const first = await runTemplate(inline([{ method: 'GET', path: paths, 'stop-at-first-match': true, matchers: [{ type: 'status', status: [200] }] }]), vulnerable.url, ctx);
    expect(first.requests).toBe(1);
    expect(first.matches).toHaveLength(1);
  });
});

describe('scans against the imitated versions', () => {
  const cases: { cve: string; path: string }[] = [
    { cve: 'CVE-2021-41773', path: '' },
    { cve: 'CVE-2021-42013', path: '/' },
    { cve: 'CVE-2017-5638', path: '/struts/index.action' },
    { cve: 'CVE-2021-3129', path: '/laravel' },
    { cve: 'CVE-2022-22965', path: '/spring/greeting' },
  ];

  for (const { cve, path } of cases) {
    it(`${cve} matches the vulnerable imitation and not the patched one`, async () => {
      const hit = await scan(vulnerable, path, { cves: [cve] }, `${cve} vulnerable`);
      expect(ids(hit)).toEqual([cve]);
      const miss = await scan(patched, path, { cves: [cve] }, `${cve} patched`);
      expect(miss.findings).toEqual([]);
      expect(miss.coverage.items).toBe(1);
    });
  }

  it('a traversal finding carries the proof, the attack and a stable fingerprint', async () => {
    const [a] = (await scan(vulnerable, '', { cves: ['CVE-2021-41773'] }, 'CVE-2021-41773 first')).findings;
    const [b] = (await scan(vulnerable, '', { cves: ['CVE-2021-41773'] }, 'CVE-2021-41773 again')).findings;
    expect(a).toMatchObject({
      rule_id: 'CVE-2021-41773',
      title: 'Apache HTTP Server 2.4.49 path traversal',
      severity: 'high',
      cwe: 'CWE-22',
      location: { kind: 'url', url: `${vulnerable.url}/icons/.%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd`, method: 'GET' },
      details: {
        check: { template_id: 'CVE-2021-41773', target: vulnerable.url },
        cve_ids: ['CVE-2021-41773'],
        tags: expect.arrayContaining(['apache', 'traversal']),
        attack: { class: 'traversal', method: 'GET', path: '/icons/.%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd', parameter: 'path', in: 'path' },
        references: expect.arrayContaining(['https://httpd.apache.org/security/vulnerabilities_24.html']),
      },
    });
    expect(a!.evidence).toContain('GET /icons/.%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd → 200');
    expect(a!.evidence).toContain('"root:x:0:0:"');
    expect(a!.details.response).toMatch(/^HTTP 200\nserver: Apache\/2\.4\.49 \(Unix\)[\s\S]*root:x:0:0:root/);
    expect(a!.details.request).toMatch(/^GET \/icons\/\.%2e\/%2e%2e\/%2e%2e\/%2e%2e\/etc\/passwd HTTP\/1\.1\nhost: 127\.0\.0\.1:\d+/);
    expect(a!.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(b!.fingerprint).toBe(a!.fingerprint);
  });

  it('the OGNL header proof and the Ignition request show in findings', async () => {
    const [struts] = (await scan(vulnerable, '/struts/index.action', { cves: ['CVE-2017-5638'] }, 'CVE-2017-5638 details')).findings;
    expect(struts!.evidence).toMatch(/evaluated-product: word "x-aegis-probe: 62615533" in header/);
    expect(struts!.details.request).toContain("content-type: %{#context['com.opensymphony.xwork2.dispatcher.HttpServletResponse'].addHeader('X-Aegis-Probe',7919*7907)}.multipart/form-data");
    const [ignition] = (await scan(vulnerable, '/laravel', { cves: ['CVE-2021-3129'] }, 'CVE-2021-3129 details')).findings;
    expect(ignition!.location).toEqual({ kind: 'url', url: `${vulnerable.url}/laravel/_ignition/execute-solution`, method: 'POST' });
    expect(ignition!.cwe).toBeNull();
  });

  it('the whole library finds exactly the imitated CVEs (no false positives)', async () => {
    const everything = { tags: knownTags() };
    const root = await scan(vulnerable, '', everything, 'whole library, vulnerable root');
    expect(root.coverage.items).toBe(bundledTemplates().length);
    expect(ids(root)).toEqual(['CVE-2021-41773', 'CVE-2021-42013']);
    const rootPatched = await scan(patched, '', everything, 'whole library, patched root');
    expect(rootPatched.findings).toEqual([]);
    const spring = await scan(vulnerable, '/spring/greeting', everything, 'whole library, vulnerable spring');
    expect(ids(spring)).toEqual(['CVE-2021-41773', 'CVE-2021-42013', 'CVE-2022-22965']);
  });

  it('stops at the request budget and notes it', async () => {
    const ctx = context(vulnerable, { limits: { maxRequests: 3 } });
    const out = await scanCve({ target: vulnerable.url, tags: knownTags() }, ctx);
    expect(out.coverage.requests).toBe(3);
    expect(out.coverage.notes.join('\n')).toMatch(/request budget reached: \d+ of \d+ template\(s\) not run/);
  });

  it('stops when the scan is canceled', async () => {
    const controller = new AbortController();
    const ctx = { ...context(vulnerable), signal: controller.signal };
    controller.abort(new Error('canceled'));
    await expect(scanCve({ target: vulnerable.url, tags: knownTags() }, ctx)).rejects.toThrow('canceled');
    expect(ctx.http.requests).toBe(0);
  });

  it('notes requests outside the scope instead of sending them', async () => {
    const ctx = context(vulnerable, { pathPrefixes: ['/laravel'] });
    const out = await scanCve({ target: `${vulnerable.url}/laravel`, cves: ['CVE-2021-41773', 'CVE-2021-3129'] }, ctx);
    expect(ids(out)).toEqual(['CVE-2021-3129']);
    expect(out.coverage.notes.join('\n')).toMatch(/CVE-2021-41773: GET \/icons\/.* not sent or failed: out of scope/);
  });
});

describe('recheckCve', () => {
  it('reproduces on the vulnerable version and not on the patched one', async () => {
    const [finding] = (await scan(vulnerable, '', { cves: ['CVE-2021-42013'] }, 'CVE-2021-42013 for recheck')).findings;
    const check = finding!.details.check as Record<string, unknown>;
    const before = vulnerable.requests;
    const again = await recheckCve(check, context(vulnerable));
    expect(again.reproduced).toBe(true);
    expect(again.evidence).toContain('root:x:0:0:');
    const fixed = await recheckCve({ ...check, target: patched.url }, context(patched));
    expect(fixed.reproduced).toBe(false);
    expect(fixed.evidence).toMatch(/CVE-2021-42013 did not match\nGET \/icons\/\.%%32%65.* → 400/);
    console.log(`recheck: ${vulnerable.requests - before} request(s) on the vulnerable target`);

    const spring = await recheckCve({ template_id: 'CVE-2022-22965', target: `${vulnerable.url}/spring/greeting` }, context(vulnerable));
    expect(spring.reproduced).toBe(true);
    expect(spring.evidence).toMatch(/GET \/spring\/greeting → 200\nGET \/spring\/greeting\?class\.module\.classLoader\.URLs%5B0%5D=0 → 400\nbaseline-not-400: status_1 is 200\nbinding-rejected: status_2 is 400/);
  });

  it('refuses checks it cannot run rather than calling them fixed', async () => {
    await expect(recheckCve({ template_id: 'CVE-1999-0001', target: vulnerable.url }, context(vulnerable))).rejects.toThrow(/no longer bundled/);
    await expect(recheckCve({ template_id: 'CVE-2021-41773' }, context(vulnerable))).rejects.toThrow(/needs template_id and target/);
    await expect(recheckCve({ template_id: 'CVE-2021-41773', target: vulnerable.url }, context(vulnerable, { pathPrefixes: ['/nothing'] }))).rejects.toThrow(/no request got a response/);
  });
});

it('TemplateError is what a bad template throws', () => {
  expect(() => compileTemplate('id: x', 'x.yaml')).toThrow(TemplateError);
});
