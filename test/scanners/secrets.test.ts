// Secrets scanner: accuracy on an annotated fixture repository (Semgrep-style `ruleid:`/`ok:`
// comments on the line above, expectations.json where comments are impossible), redaction, the
// rule files themselves, allowlists, ignore markers, git history, cancellation and skipping.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import RE2 from 're2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Finding } from '../../scanners/types.ts';
import { scanSecrets, type SecretsScanOutput } from '../../scanners/secrets/index.ts';
import { compileRuleSet, loadDefaultAllowlist, loadDefaultRuleDefinitions, loadRuleSet, parseRuleFile, RuleFileError } from '../../scanners/secrets/rules.ts';
import { createScratch, findHits } from '../../scanners/secrets/match.ts';
import { decodedTokens, findAllHits } from '../../scanners/secrets/decode.ts';
import { fileType, skippedByType } from '../../scanners/common/coverage.ts';
import { redactedPreview } from '../../scanners/secrets/redact.ts';
import { shannonEntropy } from '../../scanners/secrets/entropy.ts';
import { base62Crc32 } from '../../scanners/secrets/validators.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/scanners/secrets/repo', import.meta.url));
const FIXTURE_OPTIONS = { allowPaths: ['^third_party/'] };

interface Expectation {
  path: string;
  line: number;
  kind: 'ruleid' | 'ok';
  rule: string;
}

function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? listFiles(p) : [p];
  });
}

const ANNOTATION = /(?:#|\/\/|<!--|;)\s*(ruleid|ok):\s*([a-z0-9-]+(?:\s*,\s*[a-z0-9-]+)*)/;

/** Annotations apply to the next line that is not itself an annotation. */
function loadExpectations(root: string): Expectation[] {
  const out: Expectation[] = [];
  for (const file of listFiles(root)) {
    const path = relative(root, file).split(sep).join('/');
    if (path === 'expectations.json') continue;
    const lines = readFileSync(file, 'utf8').split('\n');
    let pending: { kind: 'ruleid' | 'ok'; rules: string[] }[] = [];
    lines.forEach((text, i) => {
      const m = ANNOTATION.exec(text);
      if (m) pending.push({ kind: m[1] as 'ruleid' | 'ok', rules: m[2]!.split(',').map((r) => r.trim()) });
      else if (pending.length > 0) {
        for (const p of pending) for (const rule of p.rules) out.push({ path, line: i + 1, kind: p.kind, rule });
        pending = [];
      }
    });
  }
  const json = JSON.parse(readFileSync(join(root, 'expectations.json'), 'utf8')) as { files: Record<string, { line: number; ruleid?: string; ok?: string }[]> };
  for (const [path, entries] of Object.entries(json.files)) {
    for (const e of entries) out.push({ path, line: e.line, kind: e.ruleid ? 'ruleid' : 'ok', rule: (e.ruleid ?? e.ok)! });
  }
  return out;
}

/**
 * Candidate secret strings of the planted lines: every run of 12+ characters between delimiters
 * (for PEM and PPK files, every line). The scanner's output must contain none of them.
 */
function plantedTokens(root: string, expectations: readonly Expectation[]): string[] {
  const tokens = new Set<string>();
  for (const e of expectations) {
    if (e.kind !== 'ruleid') continue;
    const content = readFileSync(join(root, e.path), 'utf8');
    const lines = content.split('\n');
    // Key files: every line of the private part (a PPK's public lines are public).
    const texts = e.path.startsWith('keys/') ? content.slice(content.indexOf('Private-Lines:') + 1).split('\n') : [lines[e.line - 1]!];
    for (const text of texts) {
      for (const t of text.split(/[\s"'`=:;,(){}<>@/|?&.]+|\\n/)) {
        // random-looking runs only: not identifiers such as auth0_client_secret
        if (t.length >= 12 && /[0-9]/.test(t) && /[A-Za-z]/.test(t) && shannonEntropy(t) >= 3 && !/^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/i.test(t)) tokens.add(t);
      }
    }
  }
  return [...tokens];
}

const neverAborted = (): AbortSignal => new AbortController().signal;

function git(cwd: string, args: string[]): string {
  const r = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 'Fixture', GIT_AUTHOR_EMAIL: 'fixture@aegis.invalid', GIT_COMMITTER_NAME: 'Fixture', GIT_COMMITTER_EMAIL: 'fixture@aegis.invalid', GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** A fresh, checksum-valid fake GitHub token. */
function fakeGithubToken(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let body = '';
  const rnd = createHash('sha256').update(String(Math.random())).digest();
  for (let i = 0; i < 30; i++) body += alphabet[rnd[i % rnd.length]! % 62];
  return `ghp_${body}${base62Crc32(body)}`;
}

const temps: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'aegis-secrets-'));
  temps.push(d);
  return d;
}
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

describe('secrets scanner on the fixture repository', () => {
  let output: SecretsScanOutput;
  let expectations: Expectation[];

  beforeAll(async () => {
    expectations = loadExpectations(FIXTURE);
    output = await scanSecrets({ root: FIXTURE, signal: neverAborted() }, FIXTURE_OPTIONS);
  });

  it('finds the planted secrets: precision and recall from the annotations', () => {
    const planted = expectations.filter((e) => e.kind === 'ruleid');
    const key = (path: string, line: number, rule: string): string => `${path}:${line}:${rule}`;
    const expected = new Set(planted.map((e) => key(e.path, e.line, e.rule)));
    const reported = new Set(output.findings.map((f) => key(f.location.path, f.location.kind === 'file' ? f.location.line : 0, f.rule_id)));
    const truePositives = [...reported].filter((k) => expected.has(k));
    const falsePositives = [...reported].filter((k) => !expected.has(k));
    const misses = [...expected].filter((k) => !reported.has(k));
    const precision = truePositives.length / reported.size;
    const recall = truePositives.length / expected.size;
    console.log(
      `secrets fixture: ${expected.size} planted (${new Set(planted.map((e) => e.rule)).size} rules), ` +
        `${expectations.filter((e) => e.kind === 'ok').length} decoys, ${reported.size} reported — ` +
        `precision ${precision.toFixed(3)}, recall ${recall.toFixed(3)}` +
        (falsePositives.length ? `\n  false positives: ${falsePositives.join(', ')}` : '') +
        (misses.length ? `\n  missed: ${misses.join(', ')}` : ''),
    );
    expect(expected.size).toBeGreaterThanOrEqual(40);
    expect(new Set(planted.map((e) => e.rule)).size).toBeGreaterThanOrEqual(30);
    expect(recall).toBeGreaterThanOrEqual(0.95);
    expect(precision).toBeGreaterThanOrEqual(0.9);
  });

  it('reports no decoy (ok:) line', () => {
    const decoys = new Set(expectations.filter((e) => e.kind === 'ok').map((e) => `${e.path}:${e.line}`));
    const hits = output.findings.filter((f) => f.location.kind === 'file' && decoys.has(`${f.location.path}:${f.location.line}`));
    expect(hits.map((f) => `${f.location.path}:${f.location.kind === 'file' ? f.location.line : 0} ${f.rule_id}`)).toEqual([]);
  });

  it('never stores a full secret: redacted preview, hash, fingerprint', () => {
    const json = JSON.stringify(output);
    const tokens = plantedTokens(FIXTURE, expectations);
    expect(tokens.length).toBeGreaterThan(40);
    const leaked = tokens.filter((t) => json.includes(t));
    expect(leaked).toEqual([]);
    for (const f of output.findings) {
      expect(f.evidence.length).toBeLessThanOrEqual(200);
      expect(f.details.secret_sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(f.details.preview).toMatch(/^.{0,4}…\(\d+\)$/u);
      expect(f.evidence).toContain(f.details.preview as string);
      expect(f.fingerprint).toBe(createHash('sha256').update(`${f.rule_id}:${f.location.path}:${f.details.secret_sha256 as string}`).digest('hex'));
    }
    // The hash is of the secret itself: the planted GitHub PAT hashes to the finding's digest.
    const pat = output.findings.find((f) => f.rule_id === 'github-pat')!;
    const line = readFileSync(join(FIXTURE, 'src/github.js'), 'utf8').split('\n')[pat.location.kind === 'file' ? pat.location.line - 1 : 0]!;
    const secret = /ghp_[0-9A-Za-z]{36}/.exec(line)![0];
    expect(pat.details.secret_sha256).toBe(createHash('sha256').update(secret).digest('hex'));
  });

  it('reports locations relative with forward slashes, 1-based line and column', () => {
    const f = output.findings.find((x) => x.rule_id === 'aws-access-key-id')!;
    expect(f.location).toEqual({ kind: 'file', path: '.env', line: 4, column: 19 });
    const key = output.findings.find((x) => x.rule_id === 'private-key-rsa')!;
    expect(key.location).toMatchObject({ path: 'keys/id_rsa', line: 1, column: 1 });
    expect((key.location as { end_line?: number }).end_line).toBeGreaterThan(20);
    expect(key.evidence.startsWith('-----BEGIN RSA PRIVATE KEY-----')).toBe(true);
  });

  it('skips path-allowlisted files and reports them in coverage', async () => {
    expect(output.coverage.skipped).toContainEqual({ path: 'third_party/vendor.js', reason: 'allowlisted' });
    const all = await scanSecrets({ root: FIXTURE, signal: neverAborted() });
    expect(all.findings.some((f) => f.location.path === 'third_party/vendor.js' && f.rule_id === 'slack-bot-token')).toBe(true);
  });

  it('notes that history is unavailable when the root is not the top of a repository', async () => {
    const out = await scanSecrets({ root: FIXTURE, signal: neverAborted() }, { ...FIXTURE_OPTIONS, history: true });
    expect(out.coverage.notes.join(' ')).toMatch(/history not scanned/);
    expect(out.findings.length).toBe(output.findings.length);
  });
});

describe('secret rules', () => {
  const defs = loadDefaultRuleDefinitions();

  it('has at least 60 rules with unique ids, valid RE2 regexes and keywords', () => {
    expect(defs.length).toBeGreaterThanOrEqual(60);
    expect(new Set(defs.map((d) => d.id)).size).toBe(defs.length);
    for (const d of defs) {
      expect(() => new RE2(d.regex, 'u'), d.id).not.toThrow();
      // a rule without keywords is gated by its paths (a file format known by its name)
      expect(d.keywords.length > 0 || (d.paths?.length ?? 0) > 0, `${d.id} has neither keywords nor paths`).toBe(true);
      expect(d.cwe, d.id).toMatch(/^CWE-\d+$/);
    }
    console.log(`secret rules: ${defs.length}`);
  });

  it('every rule reports its examples (and none of its counter-examples)', () => {
    const set = loadRuleSet();
    const scratch = createScratch(set);
    const fixtureRules = new Set(loadExpectations(FIXTURE).filter((e) => e.kind === 'ruleid').map((e) => e.rule));
    for (const d of defs) {
      expect((d.examples?.length ?? 0) > 0 || fixtureRules.has(d.id), `${d.id} has no positive example`).toBe(true);
      for (const ex of d.examples ?? []) {
        const { hits } = findHits(Buffer.from(ex), set, 'example.txt', scratch);
        expect(hits.map((h) => h.rule.id), `${d.id}: ${ex.slice(0, 60)}`).toContain(d.id);
      }
      for (const ex of d.counter_examples ?? []) {
        const { hits } = findHits(Buffer.from(ex), set, 'example.txt', scratch);
        expect(hits.map((h) => h.rule.id), `${d.id} counter-example`).not.toContain(d.id);
      }
    }
  });

  it('rejects a bad rule file with an error naming the file, the rule and the field', () => {
    const bad = (body: string): string => {
      try {
        parseRuleFile(body, 'rules/bad.yaml');
      } catch (err) {
        expect(err).toBeInstanceOf(RuleFileError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    const rule = (extra: string): string => `rules:\n  - id: demo\n    title: Demo\n    severity: high\n    cwe: CWE-798\n    keywords: [demo_]\n${extra}`;
    expect(bad(rule("    regex: 'demo_(?=x)'\n"))).toMatch(/rules\/bad\.yaml: rules\[0\] \(demo\): regex is not a valid RE2 pattern/);
    expect(bad(rule("    regex: 'demo_[a-z]+'\n    colour: red\n"))).toMatch(/unknown field "colour"/);
    expect(bad(rule("    regex: 'demo_[a-z]+'\n    validate: magic\n"))).toMatch(/validate must be one of/);
    expect(bad(rule("    regex: 'x*'\n"))).toMatch(/matches the empty string/);
    expect(bad('rules:\n  - id: demo\n    title: Demo\n    severity: high\n    cwe: CWE-798\n    keywords: []\n    regex: a\n')).toMatch(/keywords must not be empty/);
    expect(bad(rule("    regex: 'demo_[a-z]+'\n    paths: ['a(?=b)']\n"))).toMatch(/paths\[0\] is not a valid RE2 pattern/);
    // a rule gated by its paths alone runs only on those paths
    const [pathRule] = parseRuleFile("rules:\n  - id: demo-key-file\n    title: Demo\n    severity: high\n    cwe: CWE-321\n    keywords: []\n    paths: ['(?:^|/)demo\\.key$']\n    regex: '\\A(?P<secret>[0-9a-f]{32})\\s*\\z'\n", 'rules/demo.yaml');
    const pathSet = compileRuleSet([pathRule!]);
    const key = Buffer.from('7c1e9a40d2b85f63e0a47b19c8d25f6e\n');
    expect(findHits(key, pathSet, 'conf/demo.key', createScratch(pathSet)).hits.map((h) => h.rule.id)).toEqual(['demo-key-file']);
    expect(findHits(key, pathSet, 'conf/other.txt', createScratch(pathSet)).hits).toEqual([]);
    expect(bad('rules: [')).toMatch(/not valid YAML/);
    expect(() => compileRuleSet([...defs, defs[0]!])).toThrow(/duplicate rule id/);
  });

  it('finds the same keywords with the RE2 set and the Aho-Corasick fallback', () => {
    const set = loadRuleSet();
    const texts = listFiles(FIXTURE).map((f) => readFileSync(f));
    texts.push(Buffer.from(set.matcher.keywords.map((k) => k.toUpperCase()).join(' | ')));
    for (const text of texts) {
      const viaSet = new Uint8Array(set.matcher.keywords.length);
      const viaAutomaton = new Uint8Array(set.matcher.keywords.length);
      set.matcher.scan(text, viaSet);
      set.matcher.scanAutomaton(text, viaAutomaton);
      expect([...viaSet]).toEqual([...viaAutomaton]);
    }
    const all = new Uint8Array(set.matcher.keywords.length);
    expect(set.matcher.scan(texts[texts.length - 1]!, all)).toBe(set.matcher.keywords.length);
  });

  it('validates GitHub token checksums offline', () => {
    const set = loadRuleSet();
    const good = fakeGithubToken();
    const bad = `${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}`;
    const ids = (text: string): string[] => findHits(Buffer.from(text), set, 'x.ts', createScratch(set)).hits.map((h) => h.rule.id);
    expect(ids(`const t = '${good}';`)).toEqual(['github-pat']);
    expect(ids(`const t = '${bad}';`)).toEqual([]);
  });

  it('applies the entropy threshold to the secret', () => {
    const set = loadRuleSet({
      replaceDefaults: true,
      extra: [{ id: 'demo-token', title: 'Demo', severity: 'low', cwe: null, keywords: ['demo_'], regex: '\\b(?P<secret>demo_[a-z0-9]{20})\\b', entropy: 3.5 }],
    });
    const ids = (text: string): string[] => findHits(Buffer.from(text), set, 'x', createScratch(set)).hits.map((h) => h.rule.id);
    expect(ids('demo_k3j9x2m8q7w1z5v4b6n0')).toEqual(['demo-token']); // ≈ 4.3 bits
    expect(ids('demo_abababababababab12')).toEqual([]); // ≈ 1.4 bits
  });

  it('prefers a specific rule over the generic one for the same value', () => {
    const set = loadRuleSet();
    const token = fakeGithubToken();
    const { hits } = findHits(Buffer.from(`GITHUB_TOKEN=${token}\n`), set, '.env', createScratch(set));
    expect(hits.map((h) => h.rule.id)).toEqual(['github-pat']);
  });
});

describe('encoded secrets (base64, hex)', () => {
  const set = loadRuleSet();
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  const hex = (s: string): string => Buffer.from(s).toString('hex');
  const scan = (text: string, path = 'config.yaml') => findAllHits(Buffer.from(text), set, path, createScratch(set)).hits;

  it('finds a base64-encoded AWS key, reported on the encoded text with details.encoding', async () => {
    const dir = tempDir();
    const encoded = b64('aws_access_key_id = AKIALCJOAE5V4WYSLTDJ');
    writeFileSync(join(dir, 'values.yaml'), `env:\n  name: orders\n  blob: "${encoded}"\n`);
    const out = await scanSecrets({ root: dir, signal: neverAborted() });
    expect(out.findings).toHaveLength(1);
    const f = out.findings[0]!;
    expect(f.rule_id).toBe('aws-access-key-id');
    expect(f.details.encoding).toBe('base64');
    expect(f.location).toMatchObject({ path: 'values.yaml', line: 3, column: 10 });
    // the encoded form is as secret as the decoded one: neither is in the output
    const json = JSON.stringify(out);
    expect(json).not.toContain(encoded);
    expect(json).not.toContain('AKIALCJOAE5V4WYSLTDJ');
  });

  it('finds a password-bearing URL in a Kubernetes Secret data value, with the key name kept as context', () => {
    const url = b64('postgres://orders:Zq8vTm41pLx2Wk@db.internal.acme.io:5432/orders');
    const hits = scan(`apiVersion: v1\nkind: Secret\ndata:\n  DATABASE_URL: ${url}\n`);
    expect(hits.map((h) => [h.rule.id, h.details?.encoding])).toEqual([['postgres-url-password', 'base64']]);
    const pw = b64('Vx9pLm22qTr8');
    expect(scan(`kind: Secret\ndata:\n  DB_PASSWORD: ${pw}\n`, '.env').map((h) => h.rule.id)).toEqual(['generic-password']);
  });

  it('finds a hex-encoded token', () => {
    const hits = scan(`SLACK_HEX=${hex('xoxb-2489234823-2389472394723-Rk3jF9sLm2QpZx8vT1uYw4Nb')}\n`);
    expect(hits.map((h) => [h.rule.id, h.details?.encoding])).toEqual([['slack-bot-token', 'hex']]);
  });

  it('leaves random base64 image data, hashes and integrity digests alone', () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    const random = createHash('sha512').update('x').digest('base64');
    const text = [
      `logo: data:image/png;base64,${png}`,
      `sha256: ${createHash('sha256').update('a').digest('hex')}`,
      `sha1: ${createHash('sha1').update('b').digest('hex').toUpperCase()}`,
      `"integrity": "sha512-${random}"`,
      `blob: ${randomBase64(300)}`,
      'const getOwnPropertyDescriptors = Object.getOwnPropertyDescriptors;',
    ].join('\n');
    expect(decodedTokens(Buffer.from(text))).toEqual([]);
    expect(scan(text)).toEqual([]);
  });

  it('honours an ignore marker on the encoded line', () => {
    const encoded = b64('aws_access_key_id = AKIALCJOAE5V4WYSLTDJ');
    expect(scan(`blob: ${encoded}\n`).map((h) => h.rule.id)).toEqual(['aws-access-key-id']);
    expect(scan(`blob: ${encoded} ${'x'.repeat(60)} # aegis:ignore\n`)).toEqual([]);
  });

  it('decodes once: a doubly encoded secret is not unwrapped', () => {
    expect(scan(`blob: ${b64(b64('aws_access_key_id = AKIALCJOAE5V4WYSLTDJ'))}\n`)).toEqual([]);
  });
});

/** Pseudo-random base64 of binary data (deterministic). */
function randomBase64(bytes: number): string {
  const out: Buffer[] = [];
  for (let i = 0; out.length * 32 < bytes; i++) out.push(createHash('sha256').update(String(i)).digest());
  return Buffer.concat(out).subarray(0, bytes).toString('base64');
}

describe('coverage: skipped files by type', () => {
  it('classifies by extension or, without one, by name', () => {
    expect(fileType('assets/Logo.PNG')).toBe('.png');
    expect(fileType('dist/app.min.js')).toBe('.js');
    expect(fileType('Makefile')).toBe('makefile');
    expect(fileType('a/.DS_Store')).toBe('.ds_store');
    expect(fileType('keys/id_rsa')).toBe('id_rsa');
  });

  it('counts skipped files by type and reason, most first', async () => {
    const dir = tempDir();
    for (const n of ['a.png', 'b.png', 'c.PNG']) writeFileSync(join(dir, n), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]));
    writeFileSync(join(dir, 'font.woff2'), Buffer.from([0x77, 0x4f, 0, 1]));
    writeFileSync(join(dir, 'big.json'), `${'x'.repeat(2048)}\n`);
    writeFileSync(join(dir, 'vendored.json'), '{}\n');
    writeFileSync(join(dir, 'ok.txt'), 'nothing here\n');
    const out = await scanSecrets({ root: dir, signal: neverAborted() }, { maxFileBytes: 1024, allowPaths: ['^vendored\\.'] });
    expect(out.coverage.skipped_by_type).toEqual([
      { type: '.png', reason: 'binary', files: 3 },
      { type: '.json', reason: 'allowlisted', files: 1 },
      { type: '.json', reason: 'too_large', files: 1 },
      { type: '.woff2', reason: 'binary', files: 1 },
    ]);
    expect(skippedByType([])).toEqual([]);
    const total = out.coverage.skipped_by_type.reduce((n, s) => n + s.files, 0);
    expect(total).toBe(out.coverage.skipped.length);
  });
});

describe('secrets scanner behaviour', () => {
  it('honours aegis:ignore and gitleaks:allow on the line of the secret', async () => {
    const dir = tempDir();
    const a = fakeGithubToken();
    const b = fakeGithubToken();
    const c = fakeGithubToken();
    writeFileSync(join(dir, 'a.ts'), `const a = '${a}';\nconst b = '${b}'; // aegis:ignore\nconst c = '${c}'; // gitleaks:allow\n`);
    const out = await scanSecrets({ root: dir, signal: neverAborted() });
    expect(out.findings.map((f) => f.location.kind === 'file' && f.location.line)).toEqual([1]);
  });

  it('redacts every secret on the evidence line and caps evidence on minified lines', async () => {
    const dir = tempDir();
    const a = fakeGithubToken();
    const b = fakeGithubToken();
    writeFileSync(join(dir, 'bundle.min.js'), `${'var x=1;'.repeat(5000)}t1="${a}",t2="${b}";${'var y=2;'.repeat(5000)}`);
    const out = await scanSecrets({ root: dir, signal: neverAborted() });
    expect(out.findings).toHaveLength(2);
    for (const f of out.findings) {
      expect(f.evidence.length).toBeLessThanOrEqual(200);
      expect(f.evidence).not.toContain(a);
      expect(f.evidence).not.toContain(b);
      expect(f.evidence).toMatch(/^….*ghp_…\(40\).*…$/);
    }
    expect(redactedPreview('hunter22')).toBe('hu…(8)');
    expect(redactedPreview('abc')).toBe('…(3)');
  });

  it('skips binary files and files over the size limit, and reports them', async () => {
    const dir = tempDir();
    const token = fakeGithubToken();
    writeFileSync(join(dir, 'blob.bin'), Buffer.concat([Buffer.from('PK\x03\x04\x00\x00'), Buffer.from(` ${token} `)]));
    writeFileSync(join(dir, 'huge.txt'), `${'a'.repeat(5 * 1024 * 1024)}\n${token}\n`);
    mkdirSync(join(dir, '.git'));
    writeFileSync(join(dir, '.git', 'config'), `token = ${token}\n`);
    writeFileSync(join(dir, 'ok.txt'), 'nothing here\n');
    const out = await scanSecrets({ root: dir, signal: neverAborted() });
    expect(out.findings).toEqual([]);
    expect(out.coverage.skipped).toEqual(expect.arrayContaining([
      { path: 'blob.bin', reason: 'binary' },
      { path: 'huge.txt', reason: 'too_large' },
    ]));
    expect(out.coverage.files_scanned).toBe(1);
    expect(out.coverage.bytes_scanned).toBe(13);
    const lifted = await scanSecrets({ root: dir, signal: neverAborted() }, { maxFileBytes: 6 * 1024 * 1024 });
    expect(lifted.findings.map((f) => f.location.path)).toEqual(['huge.txt']);
  });

  it('skips lockfiles and minified assets only when asked', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'dist'));
    writeFileSync(join(dir, 'package-lock.json'), `{"token": "${fakeGithubToken()}"}\n`);
    writeFileSync(join(dir, 'dist', 'app.min.js'), `var t="${fakeGithubToken()}";\n`);
    const all = await scanSecrets({ root: dir, signal: neverAborted() });
    expect(all.findings).toHaveLength(2);
    const some = await scanSecrets({ root: dir, signal: neverAborted() }, { skipLockfiles: true, skipMinified: true });
    expect(some.findings).toEqual([]);
    expect(some.coverage.skipped).toEqual([
      { path: 'package-lock.json', reason: 'excluded' },
      { path: 'dist/app.min.js', reason: 'excluded' },
    ]);
  });

  it('keys the secret digest when given a key, and counts repeats of one secret in one file', async () => {
    const dir = tempDir();
    const token = fakeGithubToken();
    writeFileSync(join(dir, 'a.ts'), `const a = '${token}';\nconst b = '${token}';\n`);
    const plain = await scanSecrets({ root: dir, signal: neverAborted() });
    expect(plain.findings).toHaveLength(1);
    expect(plain.findings[0]!.details).toMatchObject({ occurrences: 2, secret_sha256: createHash('sha256').update(token).digest('hex') });
    const keyed = await scanSecrets({ root: dir, signal: neverAborted() }, { hashKey: 'org-42' });
    expect(keyed.findings[0]!.details.secret_sha256).not.toBe(plain.findings[0]!.details.secret_sha256);
    expect(keyed.findings[0]!.details.secret_hash_keyed).toBe(true);
  });

  it('reports progress from 0 to 1, a few times a second at most', async () => {
    const fractions: number[] = [];
    await scanSecrets({ root: FIXTURE, signal: neverAborted(), onProgress: (f) => fractions.push(f) });
    expect(fractions.at(-1)).toBe(1);
    expect([...fractions].sort((a, b) => a - b)).toEqual(fractions);
  });

  it('rejects promptly when the signal is aborted, before or during the scan', async () => {
    const aborted = new AbortController();
    aborted.abort(new Error('scan canceled'));
    await expect(scanSecrets({ root: FIXTURE, signal: aborted.signal })).rejects.toThrow('scan canceled');

    const dir = tempDir();
    const line = `const config = { token: "${'x'.repeat(10)}", secret_key: value };\n`.repeat(2000);
    for (let i = 0; i < 400; i++) writeFileSync(join(dir, `f${i}.js`), line);
    const controller = new AbortController();
    const started = performance.now();
    setTimeout(() => controller.abort(), 5);
    const fractions: number[] = [];
    await expect(scanSecrets({ root: dir, signal: controller.signal, onProgress: (f) => fractions.push(f) })).rejects.toMatchObject({ name: 'AbortError' });
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('secrets in git history', () => {
  const hasGit = spawnSync('git', ['--version']).status === 0;

  it.skipIf(!hasGit)('finds a secret deleted in a later commit, with the commit sha, and dedupes the working tree', async () => {
    const dir = tempDir();
    git(dir, ['init', '-q', '-b', 'main']);
    const removed = fakeGithubToken();
    const kept = fakeGithubToken();
    writeFileSync(join(dir, 'config.ts'), `export const a = 1;\nexport const token = '${removed}';\n`);
    writeFileSync(join(dir, 'keep.ts'), `export const kept = '${kept}';\n`);
    git(dir, ['add', '.']);
    git(dir, ['commit', '-q', '-m', 'add config']);
    const first = git(dir, ['rev-parse', 'HEAD']);
    writeFileSync(join(dir, 'config.ts'), 'export const a = 1;\nexport const token = process.env.TOKEN;\n');
    git(dir, ['commit', '-q', '-am', 'read the token from the environment']);

    const plain = await scanSecrets({ root: dir, signal: neverAborted() });
    expect(plain.findings.map((f) => f.location.path)).toEqual(['keep.ts']);

    const out = await scanSecrets({ root: dir, signal: neverAborted() }, { history: true });
    expect(out.coverage.commits_scanned).toBe(2);
    const past = out.findings.filter((f: Finding) => f.location.kind === 'file' && f.location.commit !== undefined);
    expect(past).toHaveLength(1);
    expect(past[0]!.location).toMatchObject({ kind: 'file', path: 'config.ts', line: 2, commit: first });
    expect(past[0]!.rule_id).toBe('github-pat');
    expect(past[0]!.details.secret_sha256).toBe(createHash('sha256').update(removed).digest('hex'));
    expect(JSON.stringify(out)).not.toContain(removed);
    // The kept token is in the tree and in the first commit: reported once, from the tree.
    const keptFindings = out.findings.filter((f) => f.location.path === 'keep.ts');
    expect(keptFindings).toHaveLength(1);
    expect((keptFindings[0]!.location as { commit?: string }).commit).toBeUndefined();

    const limited = await scanSecrets({ root: dir, signal: neverAborted() }, { history: true, maxCommits: 1 });
    expect(limited.coverage.commits_scanned).toBe(1);
    expect(limited.findings.filter((f) => (f.location as { commit?: string }).commit !== undefined)).toEqual([]);
  });
});
