// The bundled fallback triage engine (api/ai/fallback): verdicts per weakness family on hand-written
// findings, verdicts and patches on REAL findings of our SAST and secrets scanners run over small
// fixture trees, patches that `git apply` accepts (and that make the SAST finding go away), the
// honesty label and limits, determinism, and a small labelled evaluation with precision/recall.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FALLBACK_LABEL, FALLBACK_MODEL, FAMILIES, MAX_EXPLANATION, familyFor, fallbackTriage } from '../../api/ai/fallback/index.ts';
import { unknownPlaceholders } from '../../api/ai/fallback/text.ts';
import type { TriageAnswer, TriageFinding, Verdict } from '../../api/ai/types.ts';
import { scanSast } from '../../scanners/sast/scan.ts';
import { scanSecrets } from '../../scanners/secrets/index.ts';
import { base62Crc32 } from '../../scanners/secrets/validators.ts';
import { attachSourceWindows } from '../../scanners/source-window.ts';
import type { Finding } from '../../scanners/types.ts';

// ---------- helpers ----------

function finding(over: Partial<TriageFinding> & Pick<TriageFinding, 'scan_type' | 'rule_id' | 'location'>): TriageFinding {
  return { id: 'f-1', title: over.rule_id, severity: 'high', cwe: null, target: 'repo', evidence: '', details: {}, ...over };
}

/** A window of `radius` lines around `line` of `text`, as the source-window helper stores it. */
function windowOf(text: string, line: number, radius = 8): { start_line: number; end_line: number; text: string } {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const start = Math.max(1, line - radius);
  const end = Math.min(lines.length, line + radius);
  return { start_line: start, end_line: end, text: lines.slice(start - 1, end).join('\n') };
}

/** A stored finding of a scan of `root`, with its source window (the real helper's, or ours while it is a placeholder). */
function stored(root: string, f: Finding, scanType: string): TriageFinding {
  attachSourceWindows(root, [f]);
  if (f.location.kind === 'file' && f.details.source_window === undefined && !f.location.commit) {
    f.details.source_window = windowOf(readFileSync(join(root, f.location.path), 'utf8'), f.location.line);
  }
  return { id: f.fingerprint.slice(0, 12), scan_type: scanType, rule_id: f.rule_id, title: f.title, severity: f.severity, cwe: f.cwe, target: 'repo', location: { ...f.location }, evidence: f.evidence, details: f.details };
}

function write(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** A GitHub-format token with a valid checksum, built at run time so no token-shaped literal sits in the repository. */
function githubToken(seed: string, body?: string): string {
  const raw = body ?? [...createHash('sha256').update(seed).digest()].slice(0, 30).map((b) => BASE62[b % 62]).join('');
  return `ghp_${raw}${base62Crc32(raw)}`;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** `git apply --check` then `git apply` in a scratch repository holding `files`; returns the patched file. */
function applyPatch(files: Record<string, string>, patch: string, path: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'aegis-fallback-apply-'));
  try {
    write(dir, files);
    git(dir, 'init', '-q');
    writeFileSync(join(dir, 'fix.patch'), patch);
    git(dir, 'apply', '--check', 'fix.patch');
    git(dir, 'apply', 'fix.patch');
    return readFileSync(join(dir, path), 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function expectWellFormed(a: TriageAnswer): void {
  expect(a.explanation.startsWith(`${FALLBACK_LABEL} `)).toBe(true);
  expect(a.explanation.length).toBeLessThanOrEqual(MAX_EXPLANATION);
  expect(a.confidence).toBeGreaterThanOrEqual(0);
  expect(a.confidence).toBeLessThanOrEqual(1);
  expect(a.suggested_fix.summary.length).toBeGreaterThan(20);
  expect(a.suggested_fix.summary).not.toMatch(/\{[a-z]+\}/);
  expect(a.explanation).not.toMatch(/\{[a-z]+\}/);
}

const ctx = (root: string) => ({ root, signal: new AbortController().signal });

// ---------- fixtures (temp dirs) ----------

const ROUTES_JS = `const crypto = require('crypto');
const express = require('express');
const { Pool } = require('pg');
const db = new Pool();
const app = express();

app.get('/users', async (req, res) => {
  const name = req.query.name;
  const result = await db.query("SELECT id, email FROM users WHERE name = '" + name + "'");
  res.json(result.rows);
});

app.post('/reset', (req, res) => {
  const resetToken = Math.random().toString(36).slice(2);
  res.json({ resetToken });
});

app.post('/settings', (req, res) => {
  const settings = eval('(' + req.body.settings + ')');
  res.json(settings);
});

module.exports = { app };
`;

// The same route in a test helper: test code, not shipped.
const TEST_SERVER_JS = `const express = require('express');
const { Pool } = require('pg');
const db = new Pool();
const app = express();

app.get('/users', async (req, res) => {
  const rows = await db.query("SELECT * FROM users WHERE id = '" + req.query.id + "'");
  res.json(rows);
});

module.exports = app;
`;

// A small module whose crypto import is in view of the finding's source window.
const TOKENS_JS = `const crypto = require('crypto');

function newResetToken() {
  const resetToken = Math.random().toString(36).slice(2);
  return resetToken;
}

module.exports = { newResetToken };
`;

const LOAD_PY = `import yaml


def load_config(path):
    with open(path) as f:
        return yaml.load(f, Loader=yaml.FullLoader)


def load_safe(path):
    with open(path) as f:
        return yaml.load(f, Loader=yaml.SafeLoader)
`;

let sastRoot = '';
let secretsRoot = '';
let sastFindings: Finding[] = [];
let secretFindings: Finding[] = [];
const realToken = githubToken('aegis-fallback-real');
// Checksum-valid, so the scanner reports it; the body and the name around it say "test".
const placeholderToken = githubToken('', 'TestTokenForUnitTestsOnly00000');

beforeAll(async () => {
  sastRoot = mkdtempSync(join(tmpdir(), 'aegis-fallback-sast-'));
  write(sastRoot, { 'src/routes.js': ROUTES_JS, 'src/tokens.js': TOKENS_JS, 'test/helpers/server.js': TEST_SERVER_JS });
  sastFindings = (await scanSast(ctx(sastRoot))).findings;
  secretsRoot = mkdtempSync(join(tmpdir(), 'aegis-fallback-secrets-'));
  write(secretsRoot, {
    'src/github.js': `const { Octokit } = require('@octokit/rest');\nconst octokit = new Octokit({ auth: '${realToken}' });\nmodule.exports = octokit;\n`,
    'tests/fixtures/github.js': `// used by the client tests\nconst fakeToken = '${placeholderToken}';\nmodule.exports = { fakeToken };\n`,
  });
  secretFindings = (await scanSecrets(ctx(secretsRoot))).findings;
});

afterAll(() => {
  for (const d of [sastRoot, secretsRoot]) if (d) rmSync(d, { recursive: true, force: true });
});

function sastFinding(rule: string, path: string): TriageFinding {
  const f = sastFindings.find((x) => x.rule_id === rule && x.location.kind === 'file' && x.location.path === path);
  expect(f, `${rule} in ${path}: ${sastFindings.map((x) => `${x.rule_id}@${x.location.path}`).join(', ')}`).toBeDefined();
  return stored(sastRoot, structuredClone(f!), 'sast');
}

// ---------- 1. hand-written findings per family ----------

describe('fallback triage: families', () => {
  it('is labelled as rules, exports its model name, and every template uses known placeholders', () => {
    expect(FALLBACK_MODEL).toBe('aegis-rules-v1');
    for (const f of FAMILIES) {
      expect(unknownPlaceholders(f.explain), f.id).toEqual([]);
      expect(unknownPlaceholders(f.fix), f.id).toEqual([]);
    }
  });

  it('maps every CWE the brief names to a family', () => {
    const cwes = [89, 78, 79, 22, 918, 601, 611, 502, 94, 95, 798, 259, 321, 327, 328, 916, 330, 338, 693, 1021, 942, 614, 1004, 295, 1104, 937, 1035, 200, 209, 943, 90, 1321, 1333, 352, 285, 639];
    for (const c of cwes) expect(familyFor(c, ''), `CWE-${c}`).toBeDefined();
    expect(familyFor(89, '')!.id).toBe('sql-injection');
    expect(familyFor(1021, '')!.id).toBe('security-headers');
    expect(familyFor(null, 'my-custom-nosql-rule')!.id).toBe('nosql-injection');
    expect(familyFor(12345, 'something-else')).toBeUndefined();
  });

  const file = (path: string, line: number) => ({ kind: 'file', path, line });
  const url = (u: string, parameter?: string) => ({ kind: 'url', url: u, method: 'GET', ...(parameter ? { parameter } : {}) });
  const taint = (source: string, callee: string, line: number) => ({
    source: { line: line - 1, expression: source },
    sink: { line, expression: `${callee}(…)`, callee },
    path: [{ path: 'src/a.js', line: line - 1, note: `source ${source}` }, { path: 'src/a.js', line, note: `sink ${callee}` }],
  });

  const cases: { name: string; f: TriageFinding; verdict: Verdict; explain: RegExp; fix: RegExp }[] = [
    { name: 'SQLi taint', f: finding({ scan_type: 'sast', rule_id: 'js-sql-injection', cwe: 'CWE-89', location: file('src/a.js', 10), details: taint('req.query', 'db.query', 10) }), verdict: 'likely_true_positive', explain: /SQL injection \(CWE-89\).*req\.query/, fix: /bound parameter/ },
    { name: 'command injection taint', f: finding({ scan_type: 'sast', rule_id: 'js-command-injection', cwe: 'CWE-78', location: file('src/run.js', 4), details: taint('req.body', 'child_process.exec', 4) }), verdict: 'likely_true_positive', explain: /OS command injection/, fix: /execFile/ },
    { name: 'XSS taint', f: finding({ scan_type: 'sast', rule_id: 'js-xss-response', cwe: 'CWE-79', location: file('src/page.js', 9), details: taint('req.query', 'res.send', 9) }), verdict: 'likely_true_positive', explain: /Cross-site scripting/, fix: /Encode/ },
    { name: 'path traversal taint', f: finding({ scan_type: 'sast', rule_id: 'js-path-traversal', cwe: 'CWE-22', location: file('src/files.js', 7), details: taint('req.params', 'fs.readFile', 7) }), verdict: 'likely_true_positive', explain: /Path traversal/, fix: /base directory/ },
    { name: 'SSRF taint', f: finding({ scan_type: 'sast', rule_id: 'js-ssrf', cwe: 'CWE-918', location: file('src/proxy.js', 5), details: taint('req.query', 'fetch', 5) }), verdict: 'likely_true_positive', explain: /Server-side request forgery/, fix: /Allow-list/ },
    { name: 'open redirect (DAST)', f: finding({ scan_type: 'dast', rule_id: 'dast-open-redirect', cwe: 'CWE-601', location: url('https://app.test/login', 'next'), evidence: '302 Location: https://aegis-redirect.example/' }), verdict: 'likely_true_positive', explain: /Open redirect.*next/, fix: /relative paths/ },
    { name: 'XXE pattern', f: finding({ scan_type: 'sast', rule_id: 'js-xxe-external-entities', cwe: 'CWE-611', location: file('src/xml.js', 3), evidence: 'libxml.parseXml(body, { noent: true })' }), verdict: 'likely_true_positive', explain: /XXE/, fix: /external-entity/ },
    { name: 'deserialisation pattern only', f: finding({ scan_type: 'sast', rule_id: 'js-unsafe-deserialization', cwe: 'CWE-502', location: file('src/s.js', 3), evidence: 'serialize.unserialize(data)' }), verdict: 'needs_review', explain: /Insecure deserialisation/, fix: /data-only parser/ },
    { name: 'code injection taint', f: finding({ scan_type: 'sast', rule_id: 'js-code-injection', cwe: 'CWE-94', location: file('src/e.js', 3), details: taint('req.body', 'eval', 3) }), verdict: 'likely_true_positive', explain: /Code injection/, fix: /JSON\.parse/ },
    { name: 'weak password hash', f: finding({ scan_type: 'sast', rule_id: 'js-weak-password-hash', cwe: 'CWE-916', location: file('src/auth.js', 12), evidence: "crypto.createHash('md5').update(password)" }), verdict: 'likely_true_positive', explain: /Weak cryptography/, fix: /bcrypt/ },
    { name: 'insecure randomness', f: finding({ scan_type: 'sast', rule_id: 'js-insecure-randomness', cwe: 'CWE-338', location: file('src/t.js', 2), evidence: 'const token = Math.random().toString(36)' }), verdict: 'likely_true_positive', explain: /Insecure randomness/, fix: /randomBytes/ },
    { name: 'missing CSP (DAST passive)', f: finding({ scan_type: 'dast', rule_id: 'dast-missing-csp', cwe: 'CWE-693', location: url('https://app.test/'), evidence: 'GET / → 200 text/html without Content-Security-Policy' }), verdict: 'likely_true_positive', explain: /Content-Security-Policy/, fix: /Content-Security-Policy/ },
    { name: 'clickjacking', f: finding({ scan_type: 'dast', rule_id: 'dast-missing-xfo', cwe: 'CWE-1021', location: url('https://app.test/'), evidence: 'GET / → 200 text/html without X-Frame-Options or CSP frame-ancestors' }), verdict: 'likely_true_positive', explain: /clickjacking/i, fix: /X-Frame-Options/ },
    { name: 'CORS with credentials', f: finding({ scan_type: 'dast', rule_id: 'dast-cors-misconfig', cwe: 'CWE-942', location: url('https://api.test/me'), evidence: 'Origin: https://aegis-cors-check.example echoed in Access-Control-Allow-Origin with Access-Control-Allow-Credentials: true' }), verdict: 'likely_true_positive', explain: /CORS/, fix: /allow-list/ },
    { name: 'cookie flags', f: finding({ scan_type: 'dast', rule_id: 'dast-cookie-flags', cwe: 'CWE-1004', location: url('https://app.test/'), evidence: 'Set-Cookie: sid=…; Path=/ — missing HttpOnly, Secure' }), verdict: 'likely_true_positive', explain: /cookie \(sid\)/, fix: /HttpOnly/ },
    { name: 'TLS verification off', f: finding({ scan_type: 'sast', rule_id: 'js-tls-verification-disabled', cwe: 'CWE-295', location: file('src/http.js', 8), evidence: 'rejectUnauthorized: false' }), verdict: 'likely_true_positive', explain: /certificate validation/, fix: /rejectUnauthorized/ },
    { name: 'vulnerable dependency with fix', f: finding({ scan_type: 'sca', rule_id: 'GHSA-jf85-cpcp-j695', cwe: 'CWE-1321', location: { kind: 'package', path: 'package-lock.json', ecosystem: 'npm', name: 'lodash', version: '4.17.11' }, details: { fixed_version: '4.17.12', aliases: ['CVE-2019-10744'] } }), verdict: 'likely_true_positive', explain: /Vulnerable dependency.*Prototype pollution/, fix: /Upgrade lodash from 4\.17\.11 to 4\.17\.12/ },
    { name: 'error disclosure', f: finding({ scan_type: 'dast', rule_id: 'dast-error-disclosure', cwe: 'CWE-209', location: url('https://app.test/x'), evidence: 'stack trace: at Object.<anonymous> (/srv/app.js:10:5)' }), verdict: 'likely_true_positive', explain: /Information exposure/, fix: /generic error/ },
    { name: 'NoSQL taint', f: finding({ scan_type: 'sast', rule_id: 'js-nosql-injection', cwe: 'CWE-943', location: file('src/m.js', 6), details: taint('req.body', 'users.findOne', 6) }), verdict: 'likely_true_positive', explain: /NoSQL injection/, fix: /Coerce/ },
    { name: 'LDAP (imported rule, no taint)', f: finding({ scan_type: 'sast', rule_id: 'ldap-filter-concat', cwe: 'CWE-90', location: file('src/l.js', 6) }), verdict: 'needs_review', explain: /LDAP injection/, fix: /RFC 4515/ },
    { name: 'prototype pollution taint', f: finding({ scan_type: 'sast', rule_id: 'js-prototype-pollution', cwe: 'CWE-1321', location: file('src/p.js', 6), details: taint('req.body', 'merge', 6) }), verdict: 'likely_true_positive', explain: /Prototype pollution/, fix: /__proto__/ },
    { name: 'ReDoS taint', f: finding({ scan_type: 'sast', rule_id: 'js-regex-injection', cwe: 'CWE-1333', location: file('src/r.js', 6), details: taint('req.query', 'RegExp', 6) }), verdict: 'likely_true_positive', explain: /denial of service/, fix: /RE2/ },
    { name: 'CSRF (imported, no evidence)', f: finding({ scan_type: 'sast', rule_id: 'express-csrf-missing', cwe: 'CWE-352', location: file('src/app.js', 3) }), verdict: 'needs_review', explain: /Cross-site request forgery/, fix: /CSRF token/ },
    { name: 'BOLA (API scan)', f: finding({ scan_type: 'api', rule_id: 'api-bola', cwe: 'CWE-639', location: url('https://api.test/orders/2'), evidence: 'GET /orders/{id}: asked for id 2, the same identity got 200 with that object' }), verdict: 'likely_true_positive', explain: /Broken authorisation/, fix: /owns/ },
    { name: 'DAST SQLi error signature', f: finding({ scan_type: 'dast', rule_id: 'dast-sqli-error', cwe: 'CWE-89', location: url('https://app.test/search', 'q'), evidence: 'PostgreSQL error: unterminated quoted string at or near "\'"' }), verdict: 'likely_true_positive', explain: /SQL injection.*q parameter/, fix: /bound parameter/ },
    { name: 'unknown CWE, nothing to go on', f: finding({ scan_type: 'sast', rule_id: 'acme-rule-17', cwe: 'CWE-4242', location: file('src/x.js', 1) }), verdict: 'needs_review', explain: /unmapped weakness \(CWE-4242\)/, fix: /No fix template/ },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const a = fallbackTriage(c.f);
      expectWellFormed(a);
      expect(a.verdict, a.explanation).toBe(c.verdict);
      expect(a.explanation).toMatch(c.explain);
      expect(a.suggested_fix.summary).toMatch(c.fix);
      expect(a.suggested_fix.patch).toBeNull();
    });
  }

  it('needs_review with nothing to go on has low confidence; a verified live secret is high confidence even in tests/', () => {
    const none = fallbackTriage(finding({ scan_type: 'sast', rule_id: 'acme-rule-17', cwe: null, location: file('src/x.js', 1) }));
    expect(none.verdict).toBe('needs_review');
    expect(none.confidence).toBeLessThanOrEqual(0.3);
    const live = fallbackTriage(finding({ scan_type: 'secrets', rule_id: 'slack-bot-token', cwe: 'CWE-798', location: file('tests/e2e/slack.js', 4), details: { preview: 'xoxb…(56)', entropy: 4.9, verified: true } }));
    expect(live.verdict).toBe('likely_true_positive');
    expect(live.confidence).toBeGreaterThanOrEqual(0.95);
    expect(live.explanation).toMatch(/live/);
  });

  it('secrets: very low entropy leans false positive; a weak but real-looking password stays for review', () => {
    const at = (preview: string, entropy: number) => fallbackTriage(finding({ scan_type: 'secrets', rule_id: 'generic-password', cwe: 'CWE-259', location: file('src/db.js', 3), evidence: `const password = '${preview}';`, details: { preview, entropy } }));
    const pattern = at('zzab…(10)', 2.1);
    expect(pattern.verdict).toBe('likely_false_positive');
    expect(pattern.explanation).toMatch(/very low/);
    expect(at('hunt…(8)', 2.75).verdict).toBe('needs_review');
    expect(at('k9Xq…(24)', 4.4).verdict).toBe('needs_review'); // generic rule, nothing else: a person decides
  });

  it('SCA: fix names the upgrade; reachability unknown keeps confidence moderate; no fixed version is weaker', () => {
    const withFix = fallbackTriage(finding({ scan_type: 'sca', rule_id: 'GHSA-p6mc-m468-83gw', cwe: 'CWE-1321', location: { kind: 'package', path: 'package-lock.json', ecosystem: 'npm', name: 'lodash', version: '4.17.15' }, details: { fixed_version: '4.17.19', aliases: ['CVE-2020-8203'] } }));
    expect(withFix.suggested_fix.summary).toContain('Upgrade lodash from 4.17.15 to 4.17.19');
    expect(withFix.confidence).toBeGreaterThanOrEqual(0.6);
    expect(withFix.confidence).toBeLessThanOrEqual(0.75);
    expect(withFix.explanation).toMatch(/not analysed/);
    const noFix = fallbackTriage(finding({ scan_type: 'sca', rule_id: 'GHSA-xxxx-yyyy-zzzz', cwe: null, location: { kind: 'package', path: 'package-lock.json', ecosystem: 'npm', name: 'left-pad', version: '1.0.0' }, details: { fixed_version: null, aliases: [] } }));
    expect(noFix.verdict).toBe('likely_true_positive');
    expect(noFix.confidence).toBeLessThan(withFix.confidence);
    expect(noFix.suggested_fix.summary).toContain('a release without the advisory');
  });

  it('a DAST finding without its confirming evidence is not called true', () => {
    const a = fallbackTriage(finding({ scan_type: 'dast', rule_id: 'dast-xss-reflected', cwe: 'CWE-79', location: url('https://app.test/s', 'q'), evidence: 'parameter q' }));
    expect(a.verdict).toBe('needs_review');
    const b = fallbackTriage(finding({ scan_type: 'dast', rule_id: 'dast-xss-reflected', cwe: 'CWE-79', location: url('https://app.test/s', 'q'), evidence: 'reflected unescaped: …<aegisxss1a2b>…' }));
    expect(b.verdict).toBe('likely_true_positive');
  });

  it('keeps the explanation within 1200 characters for huge inputs', () => {
    const long = 'x'.repeat(5000);
    const a = fallbackTriage(finding({ scan_type: 'dast', rule_id: 'dast-sqli-error', cwe: 'CWE-89', title: long, location: url(`https://app.test/${long}`, long), evidence: `PostgreSQL error: ${long}` }));
    expectWellFormed(a);
  });

  it('tolerates malformed stored fields', () => {
    const a = fallbackTriage({ id: 'z', scan_type: 'sast', rule_id: 'js-sql-injection', title: 't', severity: 'high', cwe: 'not-a-cwe', target: 't', location: { kind: 'file', path: 42 }, evidence: '', details: { source: 'nope', source_window: { start_line: -1, end_line: 2, text: 3 } } });
    expectWellFormed(a);
    expect(a.suggested_fix.patch).toBeNull();
  });
});

// ---------- 2. real findings of our scanners ----------

describe('fallback triage: real SAST findings', () => {
  it('SQL concatenation of req.query in src/ → likely true positive with a placeholder patch', () => {
    const f = sastFinding('js-sql-injection', 'src/routes.js');
    const a = fallbackTriage(f);
    expectWellFormed(a);
    expect(a.verdict).toBe('likely_true_positive');
    expect(a.confidence).toBeGreaterThanOrEqual(0.7);
    expect(a.explanation).toMatch(/req\.query.*db\.query/);
    expect(a.suggested_fix.patch).toContain('--- a/src/routes.js\n+++ b/src/routes.js\n@@ -6,7 +6,7 @@\n');
    expect(a.suggested_fix.patch).toContain(`+  const result = await db.query("SELECT id, email FROM users WHERE name = $1", [name]);`);
    expect(a.suggested_fix.summary).toMatch(/binds name as a parameter/);
  });

  it('the same flow in test/helpers → leans false positive with lower confidence', () => {
    const a = fallbackTriage(sastFinding('js-sql-injection', 'test/helpers/server.js'));
    expect(a.verdict).toBe('likely_false_positive');
    expect(a.confidence).toBeLessThanOrEqual(0.6);
    expect(a.explanation).toMatch(/test, fixture, example or documentation code/);
  });

  it('Math.random() token → crypto.randomBytes through the file\'s crypto binding', () => {
    const a = fallbackTriage(sastFinding('js-insecure-randomness', 'src/tokens.js'));
    expect(a.verdict).toBe('likely_true_positive');
    expect(a.suggested_fix.patch).toContain(`-  const resetToken = Math.random().toString(36).slice(2);\n+  const resetToken = crypto.randomBytes(16).toString('hex');`);
    // In routes.js the crypto import is not in the window: unless the window itself shows how the
    // file reaches node:crypto (or that it is CommonJS), no patch, only the prose fix.
    const far = sastFinding('js-insecure-randomness', 'src/routes.js');
    const w = far.details.source_window as { text: string };
    const b = fallbackTriage(far);
    expect(b.verdict).toBe('likely_true_positive');
    if (/require\(|module\.exports/.test(w.text)) expect(b.suggested_fix.patch).toContain("require('node:crypto').randomBytes(16)");
    else expect(b.suggested_fix.patch).toBeNull();
    expect(b.suggested_fix.summary).toMatch(/randomBytes/);
  });

  it('eval of request JSON → JSON.parse', () => {
    const a = fallbackTriage(sastFinding('js-code-injection', 'src/routes.js'));
    expect(a.verdict).toBe('likely_true_positive');
    expect(a.suggested_fix.patch).toContain(`+  const settings = JSON.parse(req.body.settings);`);
  });
});

describe('fallback triage: real secrets findings', () => {
  const secret = (path: string): TriageFinding => {
    const f = secretFindings.find((x) => x.location.kind === 'file' && x.location.path === path);
    expect(f, `${path}: ${secretFindings.map((x) => `${x.rule_id}@${x.location.path}`).join(', ')}`).toBeDefined();
    return stored(secretsRoot, structuredClone(f!), 'secrets');
  };

  it('a checksum-valid GitHub token in src/ → likely true positive; rotate first', () => {
    const f = secret('src/github.js');
    expect(f.rule_id).toBe('github-pat');
    const a = fallbackTriage(f);
    expectWellFormed(a);
    expect(a.verdict).toBe('likely_true_positive');
    expect(a.explanation).toMatch(/checksum/);
    expect(a.suggested_fix.summary).toMatch(/Revoke and rotate/);
    expect(a.suggested_fix.patch).toBeNull();
    // Nothing of the token beyond the scanner's preview is echoed back.
    expect(JSON.stringify(a)).not.toContain(realToken.slice(4, 14));
  });

  it('a placeholder token in tests/fixtures → likely false positive', () => {
    const a = fallbackTriage(secret('tests/fixtures/github.js'));
    expect(a.verdict).toBe('likely_false_positive');
    expect(a.explanation).toMatch(/placeholder/);
    expect(a.explanation).toMatch(/tests\/fixtures\/github\.js is test/);
  });
});

// ---------- 3. patches apply ----------

describe('fallback triage: generated patches apply', () => {
  it('the SQL patch passes git apply --check, applies, and the rescanned file has no SQL finding', async () => {
    const a = fallbackTriage(sastFinding('js-sql-injection', 'src/routes.js'));
    const patched = applyPatch({ 'src/routes.js': ROUTES_JS }, a.suggested_fix.patch!, 'src/routes.js');
    expect(patched).toContain(`db.query("SELECT id, email FROM users WHERE name = $1", [name])`);
    expect(patched.split('\n').length).toBe(ROUTES_JS.split('\n').length);
    const dir = mkdtempSync(join(tmpdir(), 'aegis-fallback-rescan-'));
    try {
      write(dir, { 'src/routes.js': patched });
      const again = await scanSast(ctx(dir));
      expect(again.findings.filter((x) => x.rule_id === 'js-sql-injection')).toEqual([]);
      // The other findings of the file are still there: the patch touched one line only.
      expect(again.findings.map((x) => x.rule_id)).toContain('js-insecure-randomness');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the Math.random and eval patches apply too', () => {
    const random = fallbackTriage(sastFinding('js-insecure-randomness', 'src/tokens.js'));
    expect(applyPatch({ 'src/tokens.js': TOKENS_JS }, random.suggested_fix.patch!, 'src/tokens.js')).toContain("  const resetToken = crypto.randomBytes(16).toString('hex');\n  return resetToken;");
    const evaluated = fallbackTriage(sastFinding('js-code-injection', 'src/routes.js'));
    expect(applyPatch({ 'src/routes.js': ROUTES_JS }, evaluated.suggested_fix.patch!, 'src/routes.js')).toContain('const settings = JSON.parse(req.body.settings);');
  });

  it('Python yaml.load with FullLoader → yaml.safe_load (applies); with SafeLoader → likely false positive, no patch', () => {
    const at = (line: number): TriageFinding =>
      finding({ scan_type: 'sast', rule_id: 'python.lang.security.deserialization.avoid-pyyaml-load', cwe: 'CWE-502', location: { kind: 'file', path: 'app/config.py', line }, evidence: LOAD_PY.split('\n')[line - 1]!.trim(), details: { source_window: windowOf(LOAD_PY, line, 4) } });
    const unsafe = fallbackTriage(at(6));
    expect(unsafe.verdict).toBe('likely_true_positive');
    expect(unsafe.explanation).toMatch(/not SafeLoader/);
    expect(unsafe.suggested_fix.patch).toContain('+        return yaml.safe_load(f)');
    const patched = applyPatch({ 'app/config.py': LOAD_PY }, unsafe.suggested_fix.patch!, 'app/config.py');
    expect(patched.split('\n')[5]).toBe('        return yaml.safe_load(f)');
    expect(patched.split('\n')[10]).toBe('        return yaml.load(f, Loader=yaml.SafeLoader)');
    const safe = fallbackTriage(at(11));
    expect(safe.verdict).toBe('likely_false_positive');
    expect(safe.suggested_fix.patch).toBeNull();
  });

  it('writes no patch when the shape is not one it can rewrite safely', () => {
    const sqlAt = (line: string, extra = ''): string | null => {
      const text = `const { Pool } = require('pg');\nconst db = new Pool();\n${extra}async function f(req) {\n${line}\n  return 1;\n}\n`;
      const n = text.split('\n').indexOf(line) + 1;
      return fallbackTriage(finding({ scan_type: 'sast', rule_id: 'js-sql-injection', cwe: 'CWE-89', location: { kind: 'file', path: 'src/q.js', line: n }, evidence: line.trim(), details: { ...{ source: { line: n, expression: 'req.query' }, sink: { line: n, callee: 'db.query' } }, source_window: windowOf(text, n) } })).suggested_fix.patch;
    };
    expect(sqlAt(`  await db.query("SELECT * FROM t WHERE id = '" + req.query.id + "'");`)).not.toBeNull();
    // LIKE pattern, identifier position, existing params, a call inside: no patch.
    expect(sqlAt(`  await db.query("SELECT * FROM t WHERE name LIKE '%" + req.query.q + "%'");`)).toBeNull();
    expect(sqlAt(`  await db.query("SELECT * FROM t ORDER BY " + req.query.sort);`)).toBeNull();
    expect(sqlAt(`  await db.query("SELECT * FROM t WHERE a = " + req.query.a, []);`)).toBeNull();
    expect(sqlAt(`  await db.query("SELECT * FROM t WHERE a = " + trim(req.query.a));`)).toBeNull();
    // Template literal with the value quoted: placeholder replaces the quotes.
    expect(sqlAt('  await db.query(`SELECT * FROM t WHERE a = \'${req.query.a}\' AND b = ${req.query.b}`);')).toContain("+  await db.query(`SELECT * FROM t WHERE a = $1 AND b = $2`, [req.query.a, req.query.b]);");
    // Driver unknown from the window: no guess between $1 and ?.
    const unknownDriver = fallbackTriage(finding({ scan_type: 'sast', rule_id: 'js-sql-injection', cwe: 'CWE-89', location: { kind: 'file', path: 'src/q.js', line: 2 }, details: { source_window: { start_line: 1, end_line: 3, text: `function f(req) {\n  return db.query("SELECT * FROM t WHERE id = " + req.query.id);\n}` } } }));
    expect(unknownDriver.suggested_fix.patch).toBeNull();
    // Window misaligned with the finding (evidence differs): no patch.
    const text = `const { Pool } = require('pg');\nawait db.query("SELECT 1 WHERE a = " + req.query.a);\nx();\n`;
    expect(fallbackTriage(finding({ scan_type: 'sast', rule_id: 'js-sql-injection', cwe: 'CWE-89', location: { kind: 'file', path: 'src/q.js', line: 2 }, evidence: 'something else', details: { source_window: windowOf(text, 2) } })).suggested_fix.patch).toBeNull();
    // Unsafe path: no patch.
    expect(fallbackTriage(finding({ scan_type: 'sast', rule_id: 'js-sql-injection', cwe: 'CWE-89', location: { kind: 'file', path: '../etc/q.js', line: 2 }, details: { source_window: windowOf(text, 2) } })).suggested_fix.patch).toBeNull();
  });
});

// ---------- 4. determinism ----------

describe('fallback triage: determinism', () => {
  it('the same finding always gets the same answer, and the input is not modified', () => {
    const inputs = [sastFinding('js-sql-injection', 'src/routes.js'), ...EVAL.map((e) => e.f)];
    for (const f of inputs) {
      const before = structuredClone(f);
      const a = fallbackTriage(f);
      const b = fallbackTriage(structuredClone(f));
      expect(b).toEqual(a);
      expect(JSON.stringify(fallbackTriage(f))).toBe(JSON.stringify(a));
      expect(f).toEqual(before);
    }
  });
});

// ---------- evaluation: labelled findings ----------

type Label = 'tp' | 'fp';
const file = (path: string, line: number) => ({ kind: 'file', path, line });
const req = (source: string, callee: string, line: number, path = 'src/a.js') => ({
  source: { line: line - 2, expression: source },
  sink: { line, expression: `${callee}(…)`, callee },
  path: [{ path, line: line - 2, note: `source ${source}` }, { path, line, note: `sink ${callee}` }],
});

// Each label is what a reviewer would conclude with the whole repository in view, which the engine
// does not have: some are deliberately hard (a sanitiser in a helper, a real key in docs/).
const EVAL: { name: string; label: Label; f: TriageFinding }[] = [
  { name: 'sqli req.query in route', label: 'tp', f: finding({ scan_type: 'sast', rule_id: 'js-sql-injection', cwe: 'CWE-89', location: file('src/routes/users.js', 14), details: req('req.query', 'db.query', 14) }) },
  { name: 'cmdi req.body in src', label: 'tp', f: finding({ scan_type: 'sast', rule_id: 'js-command-injection', cwe: 'CWE-78', location: file('src/convert.js', 22), details: req('req.body', 'exec', 22) }) },
  { name: 'xss in test helper', label: 'fp', f: finding({ scan_type: 'sast', rule_id: 'js-xss-response', cwe: 'CWE-79', location: file('test/support/echo-server.js', 8), details: req('req.query', 'res.send', 8) }) },
  { name: 'path traversal in examples/', label: 'fp', f: finding({ scan_type: 'sast', rule_id: 'js-path-traversal', cwe: 'CWE-22', location: file('examples/static-server/index.js', 12), details: req('req.params', 'fs.createReadStream', 12) }) },
  {
    name: 'sqli with parseInt before the sink (scanner does not model it)', label: 'fp',
    f: finding({ scan_type: 'sast', rule_id: 'js-sql-injection', cwe: 'CWE-89', location: file('src/orders.js', 5), evidence: 'return db.query("SELECT * FROM orders WHERE id = " + id);', details: { ...req('req.params', 'db.query', 5), source_window: { start_line: 1, end_line: 7, text: "const { Pool } = require('pg');\nconst db = new Pool();\nexports.get = (req) => {\n  const id = parseInt(req.params.id, 10);\n  return db.query(\"SELECT * FROM orders WHERE id = \" + id);\n};\nexports.db = db;" } } }),
  },
  { name: 'ssrf where the helper checks an allow-list out of view', label: 'fp', f: finding({ scan_type: 'sast', rule_id: 'js-ssrf', cwe: 'CWE-918', location: file('src/webhooks.js', 30), details: req('req.body', 'fetch', 30) }) },
  { name: 'github token, checksum valid, in src', label: 'tp', f: finding({ scan_type: 'secrets', rule_id: 'github-pat', cwe: 'CWE-798', location: file('src/deploy.js', 3), evidence: "const token = 'ghp_…(40)';", details: { preview: 'ghp_…(40)', entropy: 5.1 } }) },
  { name: 'aws key verified live', label: 'tp', f: finding({ scan_type: 'secrets', rule_id: 'aws-access-key-id', cwe: 'CWE-798', location: file('scripts/backup.sh', 7), evidence: 'export AWS_ACCESS_KEY_ID=AKIA…(20)', details: { preview: 'AKIA…(20)', entropy: 3.9, verified: true } }) },
  { name: 'generic password Passw0rd in config', label: 'fp', f: finding({ scan_type: 'secrets', rule_id: 'generic-password', cwe: 'CWE-259', location: file('config/development.yml', 9), evidence: 'password: "Pass…(9)"', details: { preview: 'Pass…(9)', entropy: 2.95 } }) },
  { name: 'stripe test key in tests', label: 'fp', f: finding({ scan_type: 'secrets', rule_id: 'stripe-secret-key', cwe: 'CWE-798', location: file('tests/payments.test.js', 4), evidence: "const key = 'sk_t…(32)';", details: { preview: 'sk_t…(32)', entropy: 4.6 } }) },
  { name: 'generic api key placeholder-ish in docs', label: 'fp', f: finding({ scan_type: 'secrets', rule_id: 'generic-api-key', cwe: 'CWE-798', location: file('docs/setup.md', 40), evidence: 'api_key = "your…(24)"', details: { preview: 'your…(24)', entropy: 3.7 } }) },
  { name: 'real slack token pasted in docs (hard)', label: 'tp', f: finding({ scan_type: 'secrets', rule_id: 'slack-bot-token', cwe: 'CWE-798', location: file('docs/runbook.md', 88), evidence: 'SLACK_TOKEN=xoxb…(57)', details: { preview: 'xoxb…(57)', entropy: 4.8 } }) },
  { name: 'lodash with fixed version', label: 'tp', f: finding({ scan_type: 'sca', rule_id: 'GHSA-35jh-r3h4-6jhm', cwe: 'CWE-77', location: { kind: 'package', path: 'package-lock.json', ecosystem: 'npm', name: 'lodash', version: '4.17.20' }, details: { fixed_version: '4.17.21', aliases: ['CVE-2021-23337'] } }) },
  { name: 'minimist in an example app lockfile', label: 'fp', f: finding({ scan_type: 'sca', rule_id: 'GHSA-xvch-5gv4-984h', cwe: 'CWE-1321', location: { kind: 'package', path: 'examples/cli/package-lock.json', ecosystem: 'npm', name: 'minimist', version: '1.2.5' }, details: { fixed_version: '1.2.6', aliases: ['CVE-2021-44906'], dev: true } }) },
  { name: 'dast sqli error signature', label: 'tp', f: finding({ scan_type: 'dast', rule_id: 'dast-sqli-error', cwe: 'CWE-89', location: { kind: 'url', url: 'https://shop.test/search?q=1', method: 'GET', parameter: 'q' }, evidence: 'MySQL error: You have an error in your SQL syntax near \'\'\'\' at line 1' }) },
  { name: 'dast reflected xss', label: 'tp', f: finding({ scan_type: 'dast', rule_id: 'dast-xss-reflected', cwe: 'CWE-79', location: { kind: 'url', url: 'https://shop.test/s?q=x', method: 'GET', parameter: 'q' }, evidence: 'reflected unescaped: …results for <aegisxss9f1e>…' }) },
  { name: 'missing xfo on a JSON-only API (scanner saw HTML error page)', label: 'fp', f: finding({ scan_type: 'dast', rule_id: 'dast-missing-xfo', cwe: 'CWE-1021', location: { kind: 'url', url: 'https://api.test/', method: 'GET' }, evidence: 'GET / → 200 text/html without X-Frame-Options or CSP frame-ancestors' }) },
  { name: 'api auth bypass on a health endpoint (public by design)', label: 'fp', f: finding({ scan_type: 'api', rule_id: 'api-auth-bypass', cwe: 'CWE-306', location: { kind: 'url', url: 'https://api.test/health', method: 'GET' }, evidence: 'GET /health: answered 200 to a request without credentials' }) },
  { name: 'api bola', label: 'tp', f: finding({ scan_type: 'api', rule_id: 'api-bola', cwe: 'CWE-639', location: { kind: 'url', url: 'https://api.test/invoices/7', method: 'GET' }, evidence: 'GET /invoices/{id}: asked for id 7, the same identity got 200 with that object' }) },
  { name: 'tls verification disabled in src', label: 'tp', f: finding({ scan_type: 'sast', rule_id: 'js-tls-verification-disabled', cwe: 'CWE-295', location: file('src/clients/partner.js', 11), evidence: 'httpsAgent: new https.Agent({ rejectUnauthorized: false })' }) },
  { name: 'weak hash in test fixture', label: 'fp', f: finding({ scan_type: 'sast', rule_id: 'js-weak-password-hash', cwe: 'CWE-916', location: file('test/fixtures/legacy-users.js', 3), evidence: "crypto.createHash('md5').update(password)" }) },
  { name: 'yaml.load SafeLoader (imported rule)', label: 'fp', f: finding({ scan_type: 'sast', rule_id: 'python.pyyaml-load', cwe: 'CWE-502', location: file('app/settings.py', 3), evidence: 'return yaml.load(f, Loader=yaml.SafeLoader)', details: { source_window: { start_line: 1, end_line: 4, text: 'def read(f):\n    # settings file\n    return yaml.load(f, Loader=yaml.SafeLoader)\n' } } }) },
  // Added after the weights were last tuned, and not tuned against:
  { name: 'nosql injection req.body in src', label: 'tp', f: finding({ scan_type: 'sast', rule_id: 'js-nosql-injection', cwe: 'CWE-943', location: file('src/auth/login.js', 18), details: req('req.body', 'User.findOne', 18) }) },
  { name: 'dast open redirect to foreign host', label: 'tp', f: finding({ scan_type: 'dast', rule_id: 'dast-open-redirect', cwe: 'CWE-601', location: { kind: 'url', url: 'https://app.test/logout?next=x', method: 'GET', parameter: 'next' }, evidence: '302 Location: https://aegis-redirect.example/' }) },
  { name: 'generic api key, random-looking, in src', label: 'tp', f: finding({ scan_type: 'secrets', rule_id: 'generic-api-key', cwe: 'CWE-798', location: file('src/integrations/maps.js', 2), evidence: "const MAPS_API_KEY = 'kGYK…(32)';", details: { preview: 'kGYK…(32)', entropy: 4.7 } }) },
  { name: 'eval of a constant-built string in a build script', label: 'fp', f: finding({ scan_type: 'sast', rule_id: 'js-eval-non-literal', cwe: 'CWE-95', location: file('scripts/build.js', 40), evidence: 'eval(banner)' }) },
  { name: 'cve template matched on a live service', label: 'tp', f: finding({ scan_type: 'cve', rule_id: 'CVE-2021-41773', cwe: 'CWE-22', location: { kind: 'url', url: 'https://files.test/cgi-bin/.%2e/.%2e/etc/passwd', method: 'GET' }, evidence: 'status 200; body matched root:x:0:0', details: { cve_ids: ['CVE-2021-41773'] } }) },
  { name: 'revoked token in history (provider rejected it)', label: 'fp', f: finding({ scan_type: 'secrets', rule_id: 'gitlab-pat', cwe: 'CWE-798', location: { kind: 'file', path: 'ci/deploy.sh', line: 12, commit: '0123456789abcdef0123456789abcdef01234567' }, evidence: 'TOKEN=glpa…(26)', details: { preview: 'glpa…(26)', entropy: 4.4, verified: false } }) },
];

describe('fallback triage: labelled evaluation', () => {
  it('meets its precision/recall floors', () => {
    const rows = EVAL.map((e) => ({ ...e, verdict: fallbackTriage(e.f).verdict }));
    const stats = (verdict: Verdict, label: Label) => {
      const predicted = rows.filter((r) => r.verdict === verdict);
      const relevant = rows.filter((r) => r.label === label);
      const hit = predicted.filter((r) => r.label === label).length;
      return { precision: predicted.length ? hit / predicted.length : 0, recall: relevant.length ? hit / relevant.length : 0, predicted: predicted.length, relevant: relevant.length };
    };
    const fp = stats('likely_false_positive', 'fp');
    const tp = stats('likely_true_positive', 'tp');
    const review = rows.filter((r) => r.verdict === 'needs_review').length;
    const pct = (n: number) => `${(n * 100).toFixed(0)}%`;
    console.log(
      `fallback eval (${rows.length} findings, ${review} needs_review): likely_false_positive precision ${pct(fp.precision)} recall ${pct(fp.recall)} (${fp.predicted} predicted / ${fp.relevant} labelled); ` +
        `likely_true_positive precision ${pct(tp.precision)} recall ${pct(tp.recall)} (${tp.predicted} predicted / ${tp.relevant} labelled)`,
    );
    for (const r of rows) if ((r.verdict === 'likely_true_positive' && r.label === 'fp') || (r.verdict === 'likely_false_positive' && r.label === 'tp') || r.verdict === 'needs_review') console.log(`  ${r.label} → ${r.verdict}: ${r.name}`);
    expect(rows.length).toBeGreaterThanOrEqual(20);
    expect(tp.precision).toBeGreaterThanOrEqual(0.75);
    expect(tp.recall).toBeGreaterThanOrEqual(0.8);
    expect(fp.precision).toBeGreaterThanOrEqual(0.85);
    expect(fp.recall).toBeGreaterThanOrEqual(0.5);
  });
});
