// `aegis scan` (cli/scan.ts) in local mode, run as a user would: exit codes, --baseline that
// survives moved lines, SARIF valid against the official 2.1.0 schema, --diff-base in a git
// repository, well-formed JUnit.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { runAegis } from '../support/cli.ts';
import { sarifValidator } from '../support/sarif.ts';

// @xmldom/xmldom without its type declarations: they pull in the DOM library, which changes the
// global types (fetch, Headers) of the whole program (as in api/sso/saml/metadata.ts).
interface XmlNode {
  getAttribute(name: string): string | null;
}
type XmlHandler = (message: string) => void;
const { DOMParser } = createRequire(import.meta.url)('@xmldom/xmldom') as {
  DOMParser: new (options: { errorHandler: { warning: XmlHandler; error: XmlHandler; fatalError: XmlHandler } }) => {
    parseFromString(xml: string, mimeType: string): { getElementsByTagName(name: string): { length: number; [index: number]: XmlNode } };
  };
};

// The example of the github-pat rule (api/scanners/secrets/rules/source-control.yaml): passes its CRC check.
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

describe('aegis scan secrets (local)', () => {
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
});

describe('aegis scan sast --diff-base', () => {
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
