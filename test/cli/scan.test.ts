// `aegis scan` (cli/scan.ts, cli/scan-url.ts) run as a user would: in local mode, exit codes,
// --baseline that survives moved lines, SARIF valid against the official 2.1.0 schema, --diff-base
// in a git repository, well-formed JUnit; URL scans (dast, api, cve) against small local servers;
// usage errors exit 2; and server mode against a real server (a code scan and a URL scan, whose
// fingerprints match local mode).
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startCveTarget } from '../fixtures/web/cve-target.ts';
import { FIXTURE_TOKENS, startVulnerableApi } from '../fixtures/web/vulnerable-api.ts';
import { runAegis } from '../support/cli.ts';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/aegis-process.ts';
import { listenOnLoopback } from '../support/loopback.ts';
import { keyInOrganization } from '../support/orgs.ts';
import { sarifValidator } from '../support/sarif.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// @xmldom/xmldom without its type declarations: they pull in the DOM library, which changes the
// global types (fetch, Headers) of the whole program (as in api/accounts/sso/saml-metadata.ts).
interface XmlNode {
  getAttribute(name: string): string | null;
}
type XmlHandler = (message: string) => void;
const { DOMParser } = createRequire(import.meta.url)('@xmldom/xmldom') as {
  DOMParser: new (options: { errorHandler: { warning: XmlHandler; error: XmlHandler; fatalError: XmlHandler } }) => {
    parseFromString(xml: string, mimeType: string): { getElementsByTagName(name: string): { length: number; [index: number]: XmlNode } };
  };
};

// The example of the github-pat rule (scanners/secrets/rules/source-control.yaml): passes its CRC check.
const TOKEN = ['ghp_NZdJZqqFFtuqSH7q', 'm6vfIBLZGc15m21DdzWJ'].join('');
const OTHER = ['github_pat_TanqTvhuMWFYTFycLYsFUs_4sQr17EtpekmWwYmWx', 'Om2qyEMUoBDTTN4xFLJQLWIlAcIkf1QRoiF49kc60'].join('');
const LOCAL = { AEGIS_API_URL: '', AEGIS_API_KEY: '', NO_COLOR: '1' };

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'aegis-scan-test-'));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe('aegis scan secrets (local)', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('exits 1 with a planted secret, 0 once it is removed', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'config.js'), `export const token = "${TOKEN}";\n`);
    const found = await runAegis(['scan', 'secrets', dir], LOCAL);
    expect(found.stderr).toBe('');
    expect(found.code).toBe(1);
    expect(found.stdout).toContain('github-pat');
    expect(found.stdout).toContain('config.js:1');
    expect(found.stdout).not.toContain(TOKEN);

    await writeFile(join(dir, 'config.js'), 'export const token = process.env.TOKEN;\n');
    const clean = await runAegis(['scan', 'secrets', dir], LOCAL);
    expect(clean.code).toBe(0);
    expect(clean.stdout).toContain('no findings');
  });

  it('--baseline suppresses known findings even after lines move; a new secret still fails', async () => {
    const dir = await tempDir();
    const out = await tempDir();
    await writeFile(join(dir, 'config.js'), `export const token = "${TOKEN}";\n`);
    const baseline = join(out, 'baseline.json');
    const first = await runAegis(['scan', 'secrets', dir, '--format', 'json', '--output', baseline, '--quiet'], LOCAL);
    expect(first.code).toBe(1);
    const report = JSON.parse(await readFile(baseline, 'utf8')) as { format: string; version: number; findings: { fingerprint: string; location: { line: number } }[] };
    expect(report.format).toBe('aegis-scan-report');
    expect(report.findings).toHaveLength(1);
    expect(report.findings[0]!.location.line).toBe(1);

    await writeFile(join(dir, 'config.js'), `// a header\n\n// that moves the secret down\nexport const token = "${TOKEN}";\n`);
    const moved = await runAegis(['scan', 'secrets', dir, '--baseline', baseline, '--format', 'json'], LOCAL);
    expect(moved.code).toBe(0);
    const movedReport = JSON.parse(moved.stdout) as { findings: unknown[]; suppressed: { baseline: number } };
    expect(movedReport.findings).toHaveLength(0);
    expect(movedReport.suppressed.baseline).toBe(1);

    await writeFile(join(dir, 'other.js'), `const t = "${OTHER}";\n`);
    const added = await runAegis(['scan', 'secrets', dir, '--baseline', baseline], LOCAL);
    expect(added.code).toBe(1);
    expect(added.stdout).toContain('github-fine-grained-pat');
    expect(added.stdout).not.toContain('config.js');
  });

  it('--policy: ignore drops a rule, warn keeps it without failing, fail fails at any severity; a bad policy is a usage error', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'config.js'), `export const token = "${TOKEN}";\n`);
    const policy = join(await tempDir(), 'policy.yaml');

    await writeFile(policy, 'github-pat: warn\n');
    const warned = await runAegis(['scan', 'secrets', dir, '--policy', policy, '--format', 'json'], LOCAL);
    expect(warned.code).toBe(0);
    expect((JSON.parse(warned.stdout) as { findings: { rule_id: string }[] }).findings.map((f) => f.rule_id)).toEqual(['github-pat']);

    await writeFile(policy, JSON.stringify({ 'github-pat': 'ignore' }));
    const ignored = await runAegis(['scan', 'secrets', dir, '--policy', policy, '--format', 'json'], LOCAL);
    expect(ignored.code).toBe(0);
    expect((JSON.parse(ignored.stdout) as { findings: unknown[] }).findings).toEqual([]);

    // --fail-on none alone never fails; a rule the policy marks fail still does.
    await writeFile(policy, 'github-pat: fail\n');
    expect((await runAegis(['scan', 'secrets', dir, '--fail-on', 'none'], LOCAL)).code).toBe(0);
    expect((await runAegis(['scan', 'secrets', dir, '--fail-on', 'none', '--policy', policy], LOCAL)).code).toBe(1);

    await writeFile(policy, 'github-pat: block\n');
    const bad = await runAegis(['scan', 'secrets', dir, '--policy', policy], LOCAL);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`--policy ${policy}: github-pat: expected ignore, warn or fail`);
    expect((await runAegis(['scan', 'secrets', dir, '--policy', join(dir, 'missing.yaml')], LOCAL)).code).toBe(2);
  });

  it('--format sarif validates against the SARIF 2.1.0 schema', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'config.js'), `export const token = "${TOKEN}";\n`);
    await writeFile(join(dir, 'app.js'), "app.get('/u', (req, res) => { db.query('select * from users where id = ' + req.query.id); });\n");
    const secrets = await runAegis(['scan', 'secrets', dir, '--format', 'sarif'], LOCAL);
    const sast = await runAegis(['scan', 'sast', dir, '--format', 'sarif'], LOCAL);
    const validate = sarifValidator();
    for (const result of [secrets, sast]) {
      expect(result.code).toBe(1);
      const log = JSON.parse(result.stdout) as { version: string; runs: { tool: { driver: { rules: { properties: { tags: string[]; 'security-severity': string } }[] } }; results: { partialFingerprints: Record<string, string>; locations: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }[]; codeFlows?: unknown[] }[] }[] };
      const valid = validate(log);
      expect(validate.errors ?? []).toEqual([]);
      expect(valid).toBe(true);
      expect(log.version).toBe('2.1.0');
      const run = log.runs[0]!;
      expect(run.results.length).toBeGreaterThan(0);
      expect(run.tool.driver.rules[0]!.properties.tags).toContain('security');
      expect(Number(run.tool.driver.rules[0]!.properties['security-severity'])).toBeGreaterThanOrEqual(9);
      expect(run.results[0]!.partialFingerprints.primaryLocationLineHash).toMatch(/^[0-9a-f]{64}$/);
      expect(run.results[0]!.locations[0]!.physicalLocation.artifactLocation.uri).not.toMatch(/^\/|\\/);
    }
    const sastRun = (JSON.parse(sast.stdout) as { runs: { tool: { driver: { rules: { properties: { tags: string[] } }[] } }; results: { codeFlows?: unknown[] }[] }[] }).runs[0]!;
    expect(sastRun.tool.driver.rules[0]!.properties.tags).toContain('external/cwe/cwe-89');
    expect(sastRun.results[0]!.codeFlows).toBeDefined();
  });

  it('--format junit is well-formed XML with one failing testcase per finding', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.js'), `const a = "${TOKEN}";\n`);
    await writeFile(join(dir, 'b.js'), `const b = "${OTHER}"; // <&>\n`);
    const json = JSON.parse((await runAegis(['scan', 'secrets', dir, '--format', 'json'], LOCAL)).stdout) as { findings: unknown[] };
    const result = await runAegis(['scan', 'secrets', dir, '--format', 'junit'], LOCAL);
    expect(result.code).toBe(1);
    const errors: string[] = [];
    const doc = new DOMParser({ errorHandler: { warning: (m: string) => void errors.push(`warning: ${m}`), error: (m: string) => void errors.push(`error: ${m}`), fatalError: (m: string) => void errors.push(`fatal: ${m}`) } }).parseFromString(result.stdout, 'text/xml');
    expect(errors).toEqual([]);
    const cases = doc.getElementsByTagName('testcase');
    expect(cases.length).toBe(json.findings.length);
    expect(cases.length).toBe(2);
    expect(doc.getElementsByTagName('failure').length).toBe(2);
    expect(doc.getElementsByTagName('testsuite')[0]!.getAttribute('failures')).toBe('2');
  });

  it('usage and scan errors exit 2', async () => {
    const dir = await tempDir();
    expect((await runAegis(['scan', 'secrets', dir, '--format', 'xml'], LOCAL)).code).toBe(2);
    expect((await runAegis(['scan', 'nope', dir], LOCAL)).code).toBe(2);
    expect((await runAegis(['scan', 'secrets', join(dir, 'missing')], LOCAL)).code).toBe(2);
    const sca = await runAegis(['scan', 'sca', dir], LOCAL);
    expect(sca.code).toBe(2);
    expect(sca.stderr).toContain('no advisories given');
  });

  it("commander's usage errors exit 2 for aegis scan (other commands keep 1)", async () => {
    const dir = await tempDir();
    const unknown = await runAegis(['scan', 'secrets', dir, '--no-such-flag'], LOCAL);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("aegis scan: unknown option '--no-such-flag'");
    expect((await runAegis(['scan'], LOCAL)).code).toBe(2);
    expect((await runAegis(['scan', 'secrets', dir, 'extra'], LOCAL)).code).toBe(2);
    expect((await runAegis(['scan', 'secrets', dir, '--format'], LOCAL)).code).toBe(2);
    expect((await runAegis(['scan', 'secrets', dir, '--openapi', 'x.yaml'], LOCAL)).code).toBe(2);
    expect((await runAegis(['scan', '--help'], LOCAL)).code).toBe(0);
    expect((await runAegis(['plan', '--no-such-flag'], LOCAL)).code).toBe(1);
  });
});

describe('aegis scan sast --diff-base', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('reports only what the branch adds', async () => {
    const repo = await tempDir();
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' } });
    git('init', '-q', '-b', 'main');
    await writeFile(join(repo, 'old.js'), "app.get('/u', (req, res) => { db.query('select * from users where id = ' + req.query.id); });\n");
    git('add', '.');
    git('commit', '-q', '-m', 'main');
    git('checkout', '-q', '-b', 'feature');
    // Lines inserted above the old sink: it moves, but it is the same finding.
    await writeFile(join(repo, 'old.js'), "// moved\n\napp.get('/u', (req, res) => { db.query('select * from users where id = ' + req.query.id); });\n");
    await writeFile(join(repo, 'new.js'), "app.post('/run', (req, res) => { eval(req.body.code); });\n");
    git('add', '.');
    git('commit', '-q', '-m', 'feature');

    const all = JSON.parse((await runAegis(['scan', 'sast', repo, '--format', 'json'], LOCAL)).stdout) as { findings: { location: { path: string } }[] };
    expect([...new Set(all.findings.map((f) => f.location.path))].sort()).toEqual(['new.js', 'old.js']);

    const diff = await runAegis(['scan', 'sast', repo, '--diff-base', 'main', '--format', 'json'], LOCAL);
    expect(diff.stderr).toBe('');
    expect(diff.code).toBe(1);
    const report = JSON.parse(diff.stdout) as { findings: { location: { path: string } }[]; suppressed: { diff_base: number } };
    expect([...new Set(report.findings.map((f) => f.location.path))]).toEqual(['new.js']);
    expect(report.suppressed.diff_base).toBe(all.findings.filter((f) => f.location.path === 'old.js').length);

    const same = await runAegis(['scan', 'sast', repo, '--diff-base', 'feature'], LOCAL);
    expect(same.code).toBe(0);
    expect((await runAegis(['scan', 'sast', repo, '--diff-base', 'no-such-ref'], LOCAL)).code).toBe(2);
  });
});

// ---------------------------------------------------------------- URL scans

/** A tiny site: /search?q= echoes q, unescaped unless `safe`; every security header set. */
async function startSearchSite(safe: boolean): Promise<{ url: string; close(): Promise<void> }> {
  const escape = (v: string) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader('content-security-policy', "default-src 'self'");
    res.setHeader('x-frame-options', 'DENY');
    res.setHeader('x-content-type-options', 'nosniff');
    if (url.pathname === '/') return res.end('<!doctype html><html><head><title>shop</title></head><body><form action="/search"><input name="q" value="shoes"></form><a href="/search?q=shoes">shoes</a></body></html>');
    if (url.pathname === '/search') {
      const q = url.searchParams.get('q') ?? '';
      return res.end(`<!doctype html><html><head><title>search</title></head><body><p>Results for ${safe ? escape(q) : q}</p></body></html>`);
    }
    res.statusCode = 404;
    res.end('<!doctype html><html><head><title>404</title></head><body>not found</body></html>');
  });
  return listenOnLoopback(server);
}

const FAST = ['--requests-per-second', '200'];

describe('aegis scan dast|api|cve (local)', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closers) await close();
  });

  it('dast: exits 1 with the reflected XSS, 0 against the escaping twin; SARIF and JUnit are well-formed', async () => {
    const [vulnerable, safe] = await Promise.all([startSearchSite(false), startSearchSite(true)]);
    closers.push(vulnerable.close, safe.close);
    const found = await runAegis(['scan', 'dast', `${vulnerable.url}/`, ...FAST], LOCAL);
    expect(found.stderr).toBe('');
    expect(found.code).toBe(1);
    expect(found.stdout).toContain('dast-xss-reflected');
    expect(found.stdout).toContain(`GET ${vulnerable.url}/search?q=shoes (q)`);
    expect(found.stdout).toMatch(/aegis scan dast: 1 finding \(1 high\) at .* \(\d+ requests, 2 pages crawled\)/);

    const clean = await runAegis(['scan', 'dast', `${safe.url}/`, ...FAST], LOCAL);
    expect(clean.code).toBe(0);
    expect(clean.stdout).toContain('no findings');

    const sarif = await runAegis(['scan', 'dast', `${vulnerable.url}/`, ...FAST, '--format', 'sarif'], LOCAL);
    expect(sarif.code).toBe(1);
    const log = JSON.parse(sarif.stdout) as { runs: { results: { ruleId: string; locations: { physicalLocation: { artifactLocation: { uri: string; uriBaseId?: string } } }[]; partialFingerprints: Record<string, string> }[] }[] };
    const validate = sarifValidator();
    expect(validate(log), JSON.stringify(validate.errors)).toBe(true);
    const result = log.runs[0]!.results[0]!;
    expect(result.ruleId).toBe('dast-xss-reflected');
    expect(result.locations[0]!.physicalLocation.artifactLocation).toEqual({ uri: `${vulnerable.url}/search?q=shoes` });
    expect(result.partialFingerprints.primaryLocationLineHash).toMatch(/^[0-9a-f]{64}$/);
    // Located at the URL: no scanned directory to resolve against.
    expect((log.runs[0] as { originalUriBaseIds?: unknown }).originalUriBaseIds).toBeUndefined();

    const junit = await runAegis(['scan', 'dast', `${vulnerable.url}/`, ...FAST, '--format', 'junit'], LOCAL);
    expect(junit.stdout).toContain('<testcase classname="aegis dast.dast-xss-reflected"');
    expect((junit.stdout.match(/<failure /g) ?? []).length).toBe(1);
    expect(junit.stdout).toContain(`file="${vulnerable.url}/search?q=shoes"`);
  }, PROCESS_TEST_TIMEOUT_MS);

  it('dast: --baseline from a JSON report suppresses the known finding, --policy marks it; --diff-base is a usage error', async () => {
    const site = await startSearchSite(false);
    closers.push(site.close);
    const out = await tempDir();
    const baseline = join(out, 'baseline.json');
    const first = await runAegis(['scan', 'dast', `${site.url}/`, ...FAST, '--format', 'json', '--output', baseline, '--quiet'], LOCAL);
    expect(first.code).toBe(1);
    const report = JSON.parse(await readFile(baseline, 'utf8')) as { scan_type: string; findings: { rule_id: string; location: { kind: string; url: string; parameter: string } }[] };
    expect(report.scan_type).toBe('dast');
    expect(report.findings.map((f) => [f.rule_id, f.location.kind, f.location.parameter])).toEqual([['dast-xss-reflected', 'url', 'q']]);
    const again = await runAegis(['scan', 'dast', `${site.url}/`, ...FAST, '--baseline', baseline], LOCAL);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('not reported: 1 in baseline');

    // The same policy file as code scans: the rule marked warn is reported with that mark and does not fail.
    const policy = join(out, 'policy.yaml');
    await writeFile(policy, 'dast-xss-reflected: warn\n');
    const warned = await runAegis(['scan', 'dast', `${site.url}/`, ...FAST, '--policy', policy, '--format', 'json'], LOCAL);
    expect(warned.code).toBe(0);
    expect((JSON.parse(warned.stdout) as { findings: { details: { policy: string } }[] }).findings.map((f) => f.details.policy)).toEqual(['warn']);

    const diff = await runAegis(['scan', 'dast', `${site.url}/`, '--diff-base', 'main'], LOCAL);
    expect(diff.code).toBe(2);
    expect(diff.stderr).toContain('--diff-base applies to code scans');
    expect((await runAegis(['scan', 'dast'], LOCAL)).code).toBe(2);
    expect((await runAegis(['scan', 'dast', 'not a url'], LOCAL)).code).toBe(2);
    expect((await runAegis(['scan', 'dast', `${site.url}/`, '--max-depth', '11'], LOCAL)).code).toBe(2);
  }, PROCESS_TEST_TIMEOUT_MS);

  it('api: the planted flaws of the vulnerable API from its OpenAPI file exit 1; the fixed API exits 0', async () => {
    const [vulnerable, fixed] = await Promise.all([startVulnerableApi({ fixed: false }), startVulnerableApi({ fixed: true })]);
    closers.push(vulnerable.close, fixed.close);
    const dir = await tempDir();
    const auth = ['--header', `Authorization: Bearer ${FIXTURE_TOKENS.alice}`];
    await writeFile(join(dir, 'vulnerable.json'), JSON.stringify(vulnerable.document));
    await writeFile(join(dir, 'fixed.json'), JSON.stringify(fixed.document));
    const found = await runAegis(['scan', 'api', vulnerable.url, '--openapi', join(dir, 'vulnerable.json'), ...auth, ...FAST, '--format', 'json'], LOCAL);
    expect(found.stderr).toBe('');
    expect(found.code).toBe(1);
    const rules = (JSON.parse(found.stdout) as { findings: { rule_id: string }[] }).findings.map((f) => f.rule_id);
    expect(rules).toEqual(expect.arrayContaining(['api-auth-bypass', 'api-bola', 'api-injection-sqli']));

    const clean = await runAegis(['scan', 'api', fixed.url, '--openapi', join(dir, 'fixed.json'), ...auth, ...FAST], LOCAL);
    expect(clean.stdout).toContain('no findings');
    expect(clean.code).toBe(0);
    expect((await runAegis(['scan', 'api', fixed.url], LOCAL)).code).toBe(2);
  }, PROCESS_TEST_TIMEOUT_MS);

  it('cve: a template that matches exits 1; the patched target exits 0; an unknown CVE is a usage error', async () => {
    const [vulnerable, patched] = await Promise.all([startCveTarget({ patched: false }), startCveTarget({ patched: true })]);
    closers.push(vulnerable.close, patched.close);
    const found = await runAegis(['scan', 'cve', `${vulnerable.url}/`, '--cve', 'CVE-2021-41773', ...FAST], LOCAL);
    expect(found.stderr).toBe('');
    expect(found.code).toBe(1);
    expect(found.stdout).toContain('CVE-2021-41773');
    const clean = await runAegis(['scan', 'cve', `${patched.url}/`, '--cve', 'CVE-2021-41773', ...FAST], LOCAL);
    expect(clean.code).toBe(0);
    const unknown = await runAegis(['scan', 'cve', `${patched.url}/`, '--cve', 'CVE-1999-0001'], LOCAL);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no bundled template covers CVE-1999-0001');
  }, PROCESS_TEST_TIMEOUT_MS);
});

// ---------------------------------------------------------------- server mode

describe('aegis scan through the server (AEGIS_API_URL, AEGIS_API_KEY)', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let t: TestServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    // The server refuses loopback targets unless it allows private ones, as the URL-scan tests do.
    t = await startTestServer({ allowPrivateTargets: true, rateLimitPerMinute: 100_000 });
    // The scopes docs/scan-cli.md names for CI, and no more.
    const key = await keyInOrganization(t, 'ci-scans', ['scans:write', 'scans:read', 'vulnerabilities:read']);
    env = { AEGIS_API_URL: t.url, AEGIS_API_KEY: key, NO_COLOR: '1' };
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(async () => {
    await t?.close();
  });

  it('secrets: exits 1 on a planted secret, 0 once removed; --format sarif parses and validates', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'config.js'), `export const token = "${TOKEN}";\n`);
    const found = await runAegis(['scan', 'secrets', dir], env);
    expect(found.stderr).toBe('');
    expect(found.code).toBe(1);
    expect(found.stdout).toContain('github-pat');
    expect(found.stdout).toContain('config.js:1');
    expect(found.stdout).not.toContain(TOKEN);

    const sarif = await runAegis(['scan', 'secrets', dir, '--format', 'sarif'], env);
    expect(sarif.code).toBe(1);
    const log = JSON.parse(sarif.stdout) as { runs: { results: { ruleId: string; partialFingerprints: Record<string, string> }[] }[] };
    const validate = sarifValidator();
    expect(validate(log), JSON.stringify(validate.errors)).toBe(true);
    expect(log.runs[0]!.results.map((r) => r.ruleId)).toEqual(['github-pat']);
    // The scanner's fingerprint, the same one a local scan gives: baselines work across modes.
    const local = JSON.parse((await runAegis(['scan', 'secrets', dir, '--format', 'sarif'], LOCAL)).stdout) as typeof log;
    expect(log.runs[0]!.results[0]!.partialFingerprints.primaryLocationLineHash).toBe(local.runs[0]!.results[0]!.partialFingerprints.primaryLocationLineHash);

    await writeFile(join(dir, 'config.js'), 'export const token = process.env.TOKEN;\n');
    const clean = await runAegis(['scan', 'secrets', dir], env);
    expect(clean.code).toBe(0);
    expect(clean.stdout).toContain('no findings');
  }, PROCESS_TEST_TIMEOUT_MS);

  it('dast: a URL scan started through the API exits 1 with the finding, 0 against the safe site; fingerprints and baselines match local mode', async () => {
    const [vulnerable, safe] = await Promise.all([startSearchSite(false), startSearchSite(true)]);
    try {
      const found = await runAegis(['scan', 'dast', `${vulnerable.url}/`, ...FAST, '--format', 'json'], env);
      expect(found.stderr).toBe('');
      expect(found.code).toBe(1);
      const report = JSON.parse(found.stdout) as { findings: { rule_id: string; fingerprint: string; location: { url: string; parameter: string } }[] };
      expect(report.findings.map((f) => [f.rule_id, f.location.parameter])).toEqual([['dast-xss-reflected', 'q']]);
      const scans = (await t.call<{ data: { scan_type: string; target: string }[] }>('GET', '/api/v1/scans?scan_type=dast', { key: env.AEGIS_API_KEY! })).body.data;
      expect(scans.map((s) => s.target)).toContain(`${vulnerable.url}/`);

      // The scanner's fingerprint, read from the server's SARIF: the one a local scan of the same target gives.
      type Log = { runs: { results: { ruleId: string; partialFingerprints: Record<string, string>; locations: { physicalLocation: { artifactLocation: { uri: string; uriBaseId?: string } } }[] }[] }[] };
      const sarif = await runAegis(['scan', 'dast', `${vulnerable.url}/`, ...FAST, '--format', 'sarif'], env);
      expect(sarif.stderr).toBe('');
      expect(sarif.code).toBe(1);
      const serverLog = JSON.parse(sarif.stdout) as Log;
      const validate = sarifValidator();
      expect(validate(serverLog), JSON.stringify(validate.errors)).toBe(true);
      const dir = await tempDir();
      const baseline = join(dir, 'local.sarif');
      expect((await runAegis(['scan', 'dast', `${vulnerable.url}/`, ...FAST, '--format', 'sarif', '--output', baseline, '--quiet'], LOCAL)).code).toBe(1);
      const localLog = JSON.parse(await readFile(baseline, 'utf8')) as Log;
      const serverResult = serverLog.runs[0]!.results[0]!;
      const localResult = localLog.runs[0]!.results[0]!;
      expect(serverResult.ruleId).toBe('dast-xss-reflected');
      expect(serverResult.partialFingerprints.primaryLocationLineHash).toMatch(/^[0-9a-f]{64}$/);
      expect(serverResult.partialFingerprints.primaryLocationLineHash).toBe(localResult.partialFingerprints.primaryLocationLineHash);
      expect(report.findings[0]!.fingerprint).toBe(localResult.partialFingerprints.primaryLocationLineHash);
      expect(serverResult.locations[0]!.physicalLocation.artifactLocation).toEqual(localResult.locations[0]!.physicalLocation.artifactLocation);
      // A baseline made locally suppresses the finding in server mode.
      const suppressed = await runAegis(['scan', 'dast', `${vulnerable.url}/`, ...FAST, '--baseline', baseline], env);
      expect(suppressed.code).toBe(0);
      expect(suppressed.stdout).toContain('not reported: 1 in baseline');

      const clean = await runAegis(['scan', 'dast', `${safe.url}/`, ...FAST], env);
      expect(clean.code).toBe(0);
      expect(clean.stdout).toContain('no findings');
    } finally {
      await Promise.all([vulnerable.close(), safe.close()]);
    }
  }, PROCESS_TEST_TIMEOUT_MS);
});
