// Source windows: the redacted code around each file finding of a real scanSast / scanSecrets run
// on a temporary fixture tree — inside the root only, bounded, with secrets masked (a secrets
// finding's own secret included, also when it spans lines).
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanSast } from '../../scanners/sast/scan.ts';
import { scanSecrets } from '../../scanners/secrets/index.ts';
import { attachSourceWindows, type SourceWindow } from '../../scanners/source-window.ts';
import type { Finding } from '../../scanners/types.ts';

// fake secrets built at run time, so this file holds none
const STRIPE = 'sk' + '_live_' + 'q8TzL3vN0pR7wX2yB5cJ9kF4hM6dG1sA';
const DB_PASSWORD = 'Sh0p' + 'Db-9xQv27Lm';
const PEM = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();

let base: string;
let root: string;

const USERS_JS = [
  "'use strict';",
  "const express = require('express');",
  "const { Pool } = require('pg');",
  'const router = express.Router();',
  `const pool = new Pool({ connectionString: 'postgres://shop:${DB_PASSWORD}@db.internal:5432/shop' });`,
  '// Grüße ✓ — 検索',
  "router.get('/users/:id', async (req, res) => {",
  '  const id = req.params.id;',
  "  const { rows } = await pool.query('SELECT * FROM users WHERE id = ' + id);",
  '  res.json({ user: rows[0] });',
  '});',
  'module.exports = router;',
  '',
].join('\n');

const SETTINGS = [
  ...Array.from({ length: 20 }, (_, i) => `OPTION_${i} = ${i}`),
  `LONG = "${'é'.repeat(600)}"`,
  `STRIPE_SECRET = "${STRIPE}"`,
  ...Array.from({ length: 20 }, (_, i) => `OTHER_${i} = "value ${i}"`),
  '',
].join('\n');

function finding(path: string, line: number, extra: Partial<Finding> = {}): Finding {
  return { rule_id: 'manual', title: 't', severity: 'low', cwe: null, location: { kind: 'file', path, line }, evidence: '', fingerprint: `${path}:${line}`, details: {}, ...extra };
}
const windowOf = (f: Finding): SourceWindow | undefined => f.details.source_window as SourceWindow | undefined;
const ctx = () => ({ root, signal: new AbortController().signal });

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'aegis-source-window-'));
  root = join(base, 'repo');
  const outside = join(base, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.js'), 'const OUTSIDE_MARKER = 1;\n'.repeat(20));
  mkdirSync(join(root, 'src'), { recursive: true });
  mkdirSync(join(root, 'config'));
  mkdirSync(join(root, 'keys'));
  writeFileSync(join(root, 'src', 'users.js'), USERS_JS);
  writeFileSync(join(root, 'config', 'settings.py'), SETTINGS);
  writeFileSync(join(root, 'keys', 'deploy.pem'), `# deploy key\n${PEM}# end\n`);
  writeFileSync(join(root, 'big.txt'), 'a = 1\n'.repeat(400_000)); // 2.4 MB
  writeFileSync(join(root, 'blob.bin'), Buffer.concat([Buffer.from('line one\nline two\n'), Buffer.from([0, 1, 2, 3])]));
  symlinkSync(join(outside, 'secret.js'), join(root, 'link.js'));
  symlinkSync(outside, join(root, 'linkdir'));
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('attachSourceWindows', () => {
  it('gives a SAST finding the lines around it, numbered right, with the secret nearby masked', async () => {
    const out = await scanSast(ctx());
    const sqli = out.findings.find((f) => f.rule_id === 'js-sql-injection' && f.location.path === 'src/users.js');
    expect(sqli).toBeDefined();
    attachSourceWindows(root, out.findings);
    const w = windowOf(sqli!)!;
    expect(w).toMatchObject({ start_line: 3, end_line: 12 });
    const lines = w.text.split('\n');
    expect(lines).toHaveLength(w.end_line - w.start_line + 1);
    const source = USERS_JS.split('\n');
    // the finding's line and the multibyte one are there as written, at their numbers
    expect(lines[9 - w.start_line]).toBe(source[8]);
    expect(lines[6 - w.start_line]).toBe('// Grüße ✓ — 検索');
    expect(w.text).not.toContain(DB_PASSWORD);
    expect(lines[5 - w.start_line]).toContain("postgres://shop:[REDACTED");
  });

  it('masks a secrets finding’s own secret in its window, single-line and multi-line', async () => {
    const out = await scanSecrets(ctx());
    const stripe = out.findings.find((f) => f.location.path === 'config/settings.py');
    const key = out.findings.find((f) => f.location.path === 'keys/deploy.pem');
    expect(stripe?.rule_id).toBe('stripe-secret-key');
    expect(key).toBeDefined();
    attachSourceWindows(root, out.findings);
    const ws = windowOf(stripe!)!;
    expect(ws.text).not.toContain(STRIPE);
    expect(ws.text).not.toContain(STRIPE.slice(8, 24));
    expect(ws.text).toContain('STRIPE_SECRET = "[REDACTED stripe-secret-key');
    // radius 6 around line 22; the 600-character line cut to 400 and marked
    expect(ws).toMatchObject({ start_line: 16, end_line: 28 });
    const long = ws.text.split('\n')[21 - 16]!;
    expect(long).toBe(`LONG = "${'é'.repeat(392)}…`);
    const wk = windowOf(key!)!;
    for (const line of PEM.trim().split('\n').slice(1, -1)) expect(wk.text).not.toContain(line);
    expect(wk.text).toContain('-----BEGIN RSA PRIVATE KEY-----[REDACTED');
    // the key's lines stay lines, so the numbers of what follows hold
    expect(wk.text.split('\n')).toHaveLength(wk.end_line - wk.start_line + 1);
    for (const f of out.findings) expect(JSON.stringify(f.details)).not.toContain(STRIPE);
  });

  it('gives no window to a secrets finding whose secret the redaction did not find (fail closed)', () => {
    const f = finding('config/settings.py', 22, { details: { secret_sha256: 'f'.repeat(64) } });
    attachSourceWindows(root, [f]);
    expect(windowOf(f)).toBeUndefined();
  });

  it('skips paths leaving the root (../, absolute, symlinked file or directory), history findings, large and binary files', () => {
    const skipped = [
      finding('../outside/secret.js', 3),
      finding(join(base, 'outside', 'secret.js'), 3),
      finding('link.js', 3),
      finding('linkdir/secret.js', 3),
      finding('src/../../outside/secret.js', 3),
      finding('big.txt', 3),
      finding('blob.bin', 1),
      finding('src/missing.js', 1),
      finding('src/users.js', 99),
      { ...finding('src/users.js', 9), location: { kind: 'file' as const, path: 'src/users.js', line: 9, commit: 'a'.repeat(40) } },
    ];
    attachSourceWindows(root, skipped);
    for (const f of skipped) expect(windowOf(f), f.location.path).toBeUndefined();
    // the same path inside the root is fine
    const inside = finding('src/./users.js', 9);
    attachSourceWindows(root, [inside]);
    expect(windowOf(inside)?.text).toContain('pool.query');
  });

  it('honours radius, maxBytes and maxFindings', () => {
    const narrow = finding('config/settings.py', 30);
    attachSourceWindows(root, [narrow], { radius: 2 });
    expect(windowOf(narrow)).toMatchObject({ start_line: 28, end_line: 32 });

    const small = finding('config/settings.py', 22);
    attachSourceWindows(root, [small], { maxBytes: 120 });
    const w = windowOf(small)!;
    expect(Buffer.byteLength(w.text)).toBeLessThanOrEqual(120);
    expect(w.text).toContain('STRIPE_SECRET'); // the finding's own line first
    expect(w.start_line).toBeLessThanOrEqual(22);
    expect(w.end_line).toBeGreaterThanOrEqual(22);

    const many = [1, 2, 3, 4].map((l) => finding('src/users.js', l));
    attachSourceWindows(root, many, { maxFindings: 2 });
    expect(many.map((f) => windowOf(f) !== undefined)).toEqual([true, true, false, false]);
  });

  it('keeps every window within the default byte cap', () => {
    const all = Array.from({ length: 42 }, (_, i) => finding('config/settings.py', i + 1));
    attachSourceWindows(root, all);
    for (const f of all) {
      const w = windowOf(f)!;
      expect(Buffer.byteLength(w.text)).toBeLessThanOrEqual(3000);
      expect(w.text).not.toContain(STRIPE);
    }
  });
});
