// SAST scanner: precision and recall over the annotated fixture apps, rule-file validation, import
// aliasing, fingerprint stability, cancellation and coverage of skipped files.
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ts from 'typescript';
import { collectAliases } from '../../scanners/sast/aliases.ts';
import { analyzeSource, scriptKind } from '../../scanners/sast/analyze.ts';
import { PatternWalker } from '../../scanners/sast/patterns.ts';
import { compileRules, defaultRules, RuleError } from '../../scanners/sast/rules.ts';
import { MAX_SUMMARY_DEPTH, TaintEngine } from '../../scanners/sast/taint.ts';
import { toSarif } from '../../scanners/report/sarif.ts';
import { renderText } from '../../scanners/report/text.ts';
import { scanSast } from '../../scanners/sast/scan.ts';
import type { Finding, ScanContext, ScanOutput } from '../../scanners/types.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/scanners/sast/', import.meta.url));
const ANNOTATION = /^\s*\/\/\s*(ruleid|ok):\s*(.+?)\s*$/;

interface Expectation {
  kind: 'ruleid' | 'ok';
  path: string;
  line: number;
  rule: string;
}

/** Semgrep's convention: the annotation is about the next line that is not an annotation itself. */
function parseAnnotations(path: string, text: string): Expectation[] {
  const lines = text.split('\n');
  const out: Expectation[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = ANNOTATION.exec(lines[i]!);
    if (!m) continue;
    let target = i + 1;
    while (target < lines.length && ANNOTATION.test(lines[target]!)) target++;
    for (const rule of m[2]!.split(',').map((r) => r.trim()).filter(Boolean)) {
      out.push({ kind: m[1] as Expectation['kind'], path, line: target + 1, rule });
    }
  }
  return out;
}

interface Score {
  tp: number;
  fp: number;
  fn: number;
  precision: number;
  recall: number;
}

function ratio(a: number, b: number): number {
  return b === 0 ? 1 : a / b;
}

/**
 * Every `ruleid:` line found is a true positive, missed a false negative; every finding on a line
 * not annotated `ruleid:` for its rule (an `ok:` line or any other) is a false positive.
 */
function score(expected: Expectation[], findings: Finding[]): { overall: Score; perRule: Map<string, Score>; misses: string[]; extras: string[] } {
  const key = (path: string, line: number, rule: string): string => `${path}:${line} ${rule}`;
  const want = new Set(expected.filter((e) => e.kind === 'ruleid').map((e) => key(e.path, e.line, e.rule)));
  const got = new Set(findings.map((f) => (f.location.kind === 'file' ? key(f.location.path, f.location.line, f.rule_id) : '')));
  const perRule = new Map<string, Score>();
  const bump = (rule: string, field: 'tp' | 'fp' | 'fn'): void => {
    const s = perRule.get(rule) ?? { tp: 0, fp: 0, fn: 0, precision: 0, recall: 0 };
    s[field]++;
    perRule.set(rule, s);
  };
  const misses: string[] = [];
  const extras: string[] = [];
  for (const k of want) {
    const rule = k.split(' ')[1]!;
    if (got.has(k)) bump(rule, 'tp');
    else {
      bump(rule, 'fn');
      misses.push(k);
    }
  }
  for (const k of got) {
    if (want.has(k)) continue;
    bump(k.split(' ')[1]!, 'fp');
    extras.push(k);
  }
  const overall: Score = { tp: 0, fp: 0, fn: 0, precision: 0, recall: 0 };
  for (const s of perRule.values()) {
    s.precision = ratio(s.tp, s.tp + s.fp);
    s.recall = ratio(s.tp, s.tp + s.fn);
    overall.tp += s.tp;
    overall.fp += s.fp;
    overall.fn += s.fn;
  }
  overall.precision = ratio(overall.tp, overall.tp + overall.fp);
  overall.recall = ratio(overall.tp, overall.tp + overall.fn);
  return { overall, perRule, misses, extras };
}

function context(root: string, signal = new AbortController().signal, onProgress?: (f: number) => void): ScanContext {
  return { root, signal, ...(onProgress ? { onProgress } : {}) };
}

async function listFixtureFiles(dir: string, rel = ''): Promise<string[]> {
  const { readdir } = await import('node:fs/promises');
  const out: string[] = [];
  for (const e of await readdir(join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await listFixtureFiles(dir, p)));
    else if (/\.(?:[cm]?[jt]s|[jt]sx)$/.test(e.name)) out.push(p);
  }
  return out;
}

describe('SAST scanner over the fixture apps', () => {
  let output: ScanOutput;
  let expected: Expectation[];

  beforeAll(async () => {
    output = await scanSast(context(FIXTURES));
    expected = [];
    for (const path of await listFixtureFiles(FIXTURES)) expected.push(...parseAnnotations(path, await readFile(join(FIXTURES, path), 'utf8')));
  });

  it('has enough annotated positives and negatives, covering every rule', () => {
    const positives = expected.filter((e) => e.kind === 'ruleid');
    const negatives = expected.filter((e) => e.kind === 'ok');
    expect(positives.length).toBeGreaterThanOrEqual(40);
    expect(negatives.length).toBeGreaterThanOrEqual(30);
    const rules = defaultRules();
    for (const id of rules.byId.keys()) expect(positives.some((p) => p.rule === id), `no fixture for ${id}`).toBe(true);
    for (const e of expected) expect(rules.byId.has(e.rule), `annotation names unknown rule ${e.rule}`).toBe(true);
  });

  it('finds the planted flows with precision and recall ≥ 0.9', () => {
    const { overall, perRule, misses, extras } = score(expected, output.findings);
    const rows = [...perRule].sort((a, b) => a[0].localeCompare(b[0]));
    const table = rows.map(([rule, s]) => `  ${rule.padEnd(36)} tp ${String(s.tp).padStart(3)}  fp ${String(s.fp).padStart(2)}  fn ${String(s.fn).padStart(2)}  precision ${s.precision.toFixed(2)}  recall ${s.recall.toFixed(2)}`);
    console.log(
      [
        `SAST fixtures: ${output.coverage.files_scanned} files, ${output.findings.length} findings`,
        `  overall: tp ${overall.tp}, fp ${overall.fp}, fn ${overall.fn}, precision ${overall.precision.toFixed(3)}, recall ${overall.recall.toFixed(3)}`,
        ...table,
        ...misses.map((m) => `  missed: ${m}`),
        ...extras.map((m) => `  unexpected: ${m}`),
      ].join('\n'),
    );
    expect(overall.precision).toBeGreaterThanOrEqual(0.9);
    expect(overall.recall).toBeGreaterThanOrEqual(0.9);
    for (const [rule, s] of perRule) expect(s.recall, `recall of ${rule}`).toBeGreaterThanOrEqual(0.5);
  });

  it('reports complete findings: source and sink of taint flows, masked secrets, short evidence', () => {
    for (const f of output.findings) {
      expect(f.evidence.length).toBeLessThanOrEqual(200);
      expect(f.fingerprint).toMatch(/^[0-9a-f]{64}$/);
      expect(f.cwe).toMatch(/^CWE-\d+$/);
      expect(f.location.kind).toBe('file');
    }
    const sqli = output.findings.find((f) => f.rule_id === 'js-sql-injection' && f.location.kind === 'file' && f.location.path === 'express-shop/routes/users.js');
    expect(sqli?.details).toMatchObject({ source: { line: 12, expression: 'req.params' }, sink: { line: 14, callee: 'pool.query' } });
    expect(sqli?.evidence).toBe("const { rows } = await pool.query('SELECT * FROM users WHERE id = ' + id);");
    const secret = output.findings.find((f) => f.rule_id === 'js-hardcoded-credential' && f.evidence.includes('password:'));
    expect(secret?.evidence).toBeDefined();
    expect(secret!.evidence).not.toContain('Pr0duction!Passw0rd');
    expect(new Set(output.findings.map((f) => f.fingerprint)).size).toBe(output.findings.length);
  });
});

describe('SAST rules', () => {
  const taintRule = (extra: string): string => `
rules:
  - id: t-rule
    mode: taint
    message: m
    severity: high
    cwe: CWE-1
    sources: [{ member: req.query }]
    sinks: [{ call: eval }]
${extra}`;

  it('ships valid rules with unique ids, at least 10 pattern rules, CWE and severity on each', () => {
    const rules = defaultRules();
    expect(rules.patterns.rules.length).toBeGreaterThanOrEqual(10);
    expect(rules.taint.rules.length).toBeGreaterThanOrEqual(7);
    for (const r of rules.byId.values()) {
      expect(r.cwe).toMatch(/^CWE-\d+$/);
      expect(r.message.length).toBeGreaterThan(20);
    }
  });

  it.each([
    ['duplicate ids', [taintRule(''), taintRule('')], /rule 't-rule': duplicate id/],
    ['a missing message', [taintRule('').replace('    message: m\n', '')], /rule 't-rule': message: required/],
    ['an unknown rule key', [taintRule('    patterns: []')], /unknown key 'patterns' for a taint rule/],
    ['an unknown matcher kind', [taintRule('    sanitizers: [{ function: escape }]')], /sanitizers\[0\]: no matcher kind \(unknown key 'function'\)/],
    ['an unknown modifier', [taintRule('').replace('[{ call: eval }]', '[{ call: eval, args: 0 }]')], /sinks\[0\]: unknown key 'args' for a sink 'call' matcher \(allowed: arg, when, unless_option, with_arg, result_used, unless_call\)/],
    ['an unknown condition', [taintRule('').replace('[{ call: eval }]', '[{ call: eval, when: concat }]')], /when: unknown condition 'concat'/],
    ['two kinds in one matcher', [taintRule('').replace('[{ call: eval }]', '[{ call: eval, new: Function }]')], /more than one matcher kind/],
    ['a bad severity', [taintRule('').replace('severity: high', 'severity: urgent')], /severity: expected one of/],
    ['a bad CWE', [taintRule('').replace('CWE-1', '89')], /cwe: expected 'CWE-<number>'/],
    ['a bad regex', ['rules:\n  - { id: p, mode: pattern, message: m, severity: low, cwe: null, patterns: [{ string_binding: "(" }] }'], /patterns\[0\]: string_binding: invalid regular expression/],
    ['an unbalanced brace', [taintRule('').replace('member: req.query', "member: '{req,request.query'")], /unbalanced '\{'/],
    ['a pattern rule without patterns', ['rules:\n  - { id: p, mode: pattern, message: m, severity: low, cwe: null }'], /rule 'p': patterns: required/],
    ['a bad arg_constant', [taintRule("    sanitizers: [{ call: '*.startsWith', arg_constant: '(' }]")], /sanitizers\[0\]: arg_constant: invalid regular expression/],
    ['a bad with_arg', [taintRule('').replace('[{ call: eval }]', '[{ call: eval, with_arg: x }]')], /with_arg: expected an argument index/],
    ['an option_literal without keys', ['rules:\n  - { id: p, mode: pattern, message: m, severity: low, cwe: null, patterns: [{ call: f, option_literal: { arg: 0 } }] }'], /option_literal: keys\[0\]: expected a non-empty string/],
    ['a bad mode', ['rules:\n  - { id: p, mode: flow, message: m, severity: low, cwe: null }'], /rule 'p': mode: expected 'taint' or 'pattern'/],
    ['a function_param selecting every function', [taintRule('').replace('[{ member: req.query }]', '[{ function_param: any }]')], /sources\[0\]: function_param: needs `exported` or `directive`/],
    ['a bad receiver_constant', [taintRule("    sanitizers: [{ call: '*.includes', receiver_constant: 'yes' }]")], /sanitizers\[0\]: receiver_constant: expected true or false/],
    ['a bad callback_param param', [taintRule('').replace('[{ member: req.query }]', "[{ callback_param: '*.on', param: x }]")], /sources\[0\]: param\[0\]: expected an argument index/],
    ['a bad arg_fixed', ['rules:\n  - { id: p, mode: pattern, message: m, severity: low, cwe: null, patterns: [{ call: f, arg_fixed: -1 }] }'], /patterns\[0\]: arg_fixed\[0\]: expected an argument index/],
  ])('rejects %s with a clear error', (_name, texts, message) => {
    const files = texts.map((text, i) => ({ name: `r${i}.yaml`, text }));
    expect(() => compileRules(files)).toThrow(RuleError);
    expect(() => compileRules(files)).toThrow(message);
  });

  it('applies rules given as data', () => {
    const rules = compileRules([{ name: 'x.yaml', text: taintRule('    sanitizers: [{ call: clean }]') }]);
    const code = 'function h(req) { eval(req.query.a); eval(clean(req.query.b)); }';
    const found = analyzeSource('x.js', code, rules).findings;
    expect(found.map((f) => f.evidence)).toEqual([code]);
    expect(found).toHaveLength(1);
    expect(found[0]!.details.sink).toMatchObject({ expression: 'eval(req.query.a)' });
  });
});

describe('SAST framework sources and parameter matchers', () => {
  const ids = (path: string, code: string): string[] => analyzeSource(path, code, defaultRules()).findings.map((f) => `${f.rule_id}:${f.location.kind === 'file' ? f.location.line : 0}`);

  it('treats NestJS decorated parameters as request data, resolving renamed decorators, and clears ParseIntPipe values', () => {
    const code = [
      "import { Controller, Get, Param as P, Query, ParseIntPipe } from '@nestjs/common';",
      "import { execSync } from 'child_process';",
      '@Controller() export class C {',
      "  @Get() a(@P('id') id: string) { execSync('x ' + id); }",
      "  @Get() b(@Query('n', new ParseIntPipe({ errorHttpStatusCode: 400 })) n: number) { execSync('x ' + n); }",
      "  @Get() c(@Query() q: any, other: string) { execSync('x ' + other); execSync('y ' + q.cmd); }",
      '}',
    ].join('\n');
    expect(ids('c.ts', code)).toEqual(['js-command-injection:4', 'js-command-injection:6']);
  });

  it('selects Next.js route handler parameters by file path and export name', () => {
    const code = "import { exec } from 'child_process';\nexport async function GET(req: Request, { params }) { exec('ls ' + params.dir); }\nexport function other(a, { params }) { exec('ls ' + params.dir); }";
    expect(ids('app/files/[dir]/route.ts', code)).toEqual(['js-command-injection:2']);
    expect(ids('lib/routes.ts', code)).toEqual([]);
  });

  it('reports a fixed IV from a const in scope, not a parameter or a shadowing random one', () => {
    const code = [
      "import crypto from 'node:crypto';",
      "const iv = Buffer.alloc(16, 0);",
      "export const a = (key) => crypto.createCipheriv('aes-256-cbc', key, iv);",
      "export const b = (key, iv) => crypto.createCipheriv('aes-256-cbc', key, iv);",
      "export function c(key) { const iv = crypto.randomBytes(16); return crypto.createCipheriv('aes-256-cbc', key, iv); }",
    ].join('\n');
    expect(ids('k.mjs', code)).toEqual(['js-static-cipher-iv:3']);
  });

  it('vouches for allow-list checks only on fixed collections', () => {
    const handler = (list: string): string =>
      `const fs = require('fs'); const OK = ['a.txt', 'b.txt'];\napp.get('/f', (req, res) => { const n = req.query.n; if (!${list}.includes(n)) return res.end(); res.send(fs.readFileSync('/data/' + n)); });`;
    expect(ids('a.js', handler('OK'))).toEqual([]);
    expect(ids('a.js', handler("Object.freeze(['a.txt'])"))).toEqual([]);
    expect(ids('a.js', handler("fs.readdirSync('/data')"))).toEqual(['js-path-traversal:2']);
  });

  it('reports jwt.decode only when its result decides something and the token is not verified', () => {
    const mw = (body: string): string => `const jwt = require('jsonwebtoken');\nfunction mw(req, res, next) { const t = req.headers.authorization; ${body} }`;
    expect(ids('a.js', mw("if (jwt.decode(t).admin) next();"))).toEqual(['js-jwt-decode-without-verify:2']);
    expect(ids('a.js', mw("console.log(jwt.decode(t)); next();"))).toEqual([]);
    expect(ids('a.js', mw("jwt.verify(t, key, { algorithms: ['RS256'] }); if (jwt.decode(t).admin) next();"))).toEqual([]);
  });
});

describe('SAST callee resolution', () => {
  const handler = (call: string): string => `app.get('/x', (req, res) => { ${call}; });`;
  const cases: Array<[string, string, string]> = [
    ['named import alias', "import { exec as run } from 'child_process';", "run('ls ' + req.query.d)"],
    ['node: prefix, namespace import', "import * as cp from 'node:child_process';", "cp.execSync(`ls ${req.query.d}`)"],
    ['default import', "import cp from 'node:child_process';", "cp.exec('ls ' + req.query.d)"],
    ['require', "const cp = require('child_process');", "cp.spawn(req.query.d)"],
    ['require destructuring with rename', "const { exec: sh } = require('node:child_process');", "sh('ls ' + req.query.d)"],
    ['member of require', "const execSync = require('child_process').execSync;", "execSync('ls ' + req.query.d)"],
    ['inline require', '', "require('child_process').exec('ls ' + req.query.d)"],
    ['promisify', "const { promisify } = require('util'); const { exec } = require('child_process'); const run = promisify(exec);", "run('ls ' + req.query.d)"],
    ['TypeScript import =', "import cp = require('child_process');", "cp.exec('ls ' + req.query.d)"],
    ['TypeScript CommonJS output', 'const child_process_1 = require("child_process");', "(0, child_process_1.exec)('ls ' + req.query.d)"],
  ];

  it.each(cases)('resolves a %s', (_name, imports, call) => {
    const found = analyzeSource('a.ts', `${imports}\n${handler(call)}\n`, defaultRules()).findings;
    expect(found.map((f) => f.rule_id)).toContain('js-command-injection');
  });

  it('does not match a local function that merely shares the name', () => {
    const code = `function exec(s) { console.log(s); }\n${handler("exec('ls ' + req.query.d)")}`;
    expect(analyzeSource('a.js', code, defaultRules()).findings).toEqual([]);
  });

  it('matches any receiver with a wildcard (*.query) and keeps parameterised queries clean', () => {
    const code = handler("this.db.pool.query(`select * from t where id = ${req.params.id}`); client.query('select 1 where id = $1', [req.params.id])");
    const found = analyzeSource('a.js', code, defaultRules()).findings;
    expect(found.map((f) => [f.rule_id, f.details.sink])).toEqual([['js-sql-injection', expect.objectContaining({ callee: 'this.db.pool.query' })]]);
  });

  it('tracks taint through destructuring, spread, arrays, conditionals and reassignment', () => {
    const code = `
const cp = require('child_process');
app.post('/x', (req, res) => {
  const { a, ...rest } = req.body;
  const list = [rest.b];
  const pick = a ? list[0] : 'x';
  cp.exec(pick);
  let cmd = req.query.c;
  cmd = 'uptime';
  cp.exec(cmd);
  const copy = { ...req.query };
  cp.exec(copy.d.trim());
});`;
    const found = analyzeSource('a.js', code, defaultRules()).findings.map((f) => f.location.kind === 'file' && f.location.line);
    expect(found).toEqual([7, 12]);
  });
});

describe('SAST request data destructured in handler parameters', () => {
  const lines = (code: string, file = 'a.ts'): Array<[string, number]> =>
    analyzeSource(file, code, defaultRules()).findings.map((f) => [f.rule_id, f.location.kind === 'file' ? f.location.line : 0]);

  it('treats handlers returned from factories or defined apart like handlers passed to a router', () => {
    const code = `import { exec } from 'child_process';
export function search() { return ({ query }: Request, res: Response) => { exec('ls ' + query.q); }; }
module.exports = () => async ({ body, params }, res) => { exec(body.cmd); exec(params.x); };
export function h({ body: { name } }, res, next) { exec(name); }
export const k = async ({ params }: Koa.ParameterizedContext) => exec(params.p);
export const f = ({ headers }: FastifyRequest, reply: FastifyReply) => exec(headers.x);
router.post('/k', async ({ request: { body } }, next) => { exec(body.cmd); });
export const koa = () => async ({ request: { query } }, next) => exec(query.c);
`;
    expect(lines(code)).toEqual([2, 3, 3, 4, 5, 6, 7, 8].map((l) => ['js-command-injection', l]));
  });

  it('leaves functions that only destructure an options object alone', () => {
    const code = `import { exec } from 'child_process';
export function run({ query }, limit) { exec(query); }
const cfg = ({ body }) => exec(body);
export function typed({ params }: Options, res: number) { exec(params); }
`;
    expect(lines(code)).toEqual([]);
  });
});

describe('SAST NoSQL injection, deserialization and literal secrets', () => {
  const lines = (code: string, file = 'a.js'): Array<[string, number]> =>
    analyzeSource(file, code, defaultRules()).findings.map((f) => [f.rule_id, f.location.kind === 'file' ? f.location.line : 0]);
  const handler = (body: string): string => `app.post('/x', async (req, res) => {\n${body}\n});`;

  it('reports query objects holding request data, not plain values or cast strings', () => {
    const code = handler(`db.find({ name: req.body.name });
collection.find(req.query);
db.reviews.find({ $where: 'this.product == ' + req.params.id });
Model.find().$where('this.a == ' + req.query.a);
coll.update({ _id: req.body.id }, { $set: { m: 1 } });
repo.findOne(req.params.id);
User.findOne({ name: String(req.body.name) });
items.find((i) => i.id === req.query.id);
Review.findOne({ _id: req.params.id });
Review.find(req.params);
crypto.createHmac('sha256', key).update(req.body).digest('hex');
hash.update(req.body, 'utf8');
cache.delete(req.query);`);
    expect(lines(code)).toEqual([2, 3, 4, 5, 6].map((l) => ['js-nosql-injection', l]));
  });

  it('reports yaml.load and unserialize of request data, not a safe schema or JSON.parse', () => {
    const code = `const yaml = require('js-yaml'); const s = require('node-serialize');
${handler(`yaml.load(req.body.y);
yaml.load(req.body.y, { schema: yaml.JSON_SCHEMA });
s.unserialize(req.cookies.p);
JSON.parse(req.body.j);`)}`;
    expect(lines(code)).toEqual([['js-unsafe-deserialization', 3], ['js-unsafe-deserialization', 5]]);
  });

  it('reports literal HMAC, cookie and session secrets, masked, and not values from the environment', () => {
    const code = `const crypto = require('crypto'); const cookieParser = require('cookie-parser'); const session = require('express-session');
crypto.createHmac('sha256', 'pa4qacea4VK9t9nG');
crypto.createHmac('sha256', process.env.KEY);
app.use(cookieParser('kekse'));
app.use(cookieParser(process.env.C));
app.use(session({ secret: 'keyboard cat' }));
app.use(session({ secret: process.env.S }));`;
    const found = analyzeSource('a.js', code, defaultRules()).findings;
    expect(found.map((f) => f.location.kind === 'file' && f.location.line)).toEqual([2, 4, 6]);
    expect(found.every((f) => f.rule_id === 'js-hardcoded-secret-argument')).toBe(true);
    expect(found.map((f) => f.evidence).join('\n')).not.toMatch(/pa4qacea4VK9t9nG|kekse|keyboard cat/);
  });

  it('reports Angular bypassSecurityTrust* of non-constant values only', () => {
    const code = `class C { f(v) {
this.a = this.sanitizer.bypassSecurityTrustHtml(v);
this.b = this.sanitizer.bypassSecurityTrustUrl('https://a.test/');
} }`;
    expect(lines(code, 'c.ts')).toEqual([['js-angular-bypass-security-trust', 2]]);
  });

  it('follows a fast hash through a helper of the same file to a password', () => {
    const code = `const crypto = require('crypto');
const hash = (s) => crypto.createHash('md5').update(s).digest('hex');
function etag(b) { return crypto.createHash('sha1').update(b).digest('hex'); }
function setPassword(user, pw) { user.password = hash(pw); }
function key(b) { return 'v1:' + etag(b); }`;
    expect(lines(code)).toEqual([['js-weak-password-hash', 2]]);
  });

  it('does not accept substring and unanchored-regex checks as redirect allow-lists', () => {
    const code = ['allowed.includes(u)', "u.includes('acme.test')", "u.indexOf('acme.test') !== -1", '/acme\\.test/.test(u)', '/^https:\\/\\/acme\\.test\\//.test(u)', "u.startsWith('https://acme.test/')", "u.startsWith('https://acme.test')", "u.startsWith('/')"]
      .map((cond) => `app.get('/r', (req, res) => { const u = req.query.to; if (${cond}) res.redirect(u); });`)
      .join('\n');
    expect(lines(code)).toEqual([2, 3, 4, 7, 8].map((l) => ['js-open-redirect', l]));
  });
});

describe('SAST single walk', () => {
  it('feeds pattern rules the same nodes from the taint walk as from their own walk', async () => {
    // Catch-all patterns: every call, `new`, string binding, listed property and function.
    const rules = compileRules([
      {
        name: 'all.yaml',
        text: `
rules:
  - { id: t, mode: taint, message: m, severity: low, cwe: null, sources: [{ member: req.query }], sinks: [{ call: eval }] }
  - id: p
    mode: pattern
    message: m
    severity: low
    cwe: null
    patterns:
      - call: ['*', '*.*']
      - new: ['*', '*.*']
      - string_binding: '.'
      - property: [rejectUnauthorized, httpOnly, algorithms, noent, minVersion, secure, root]
        value: [true, false, none, TLSv1, '0']
      - deep_merge_function: '.'
`,
      },
    ]);
    let compared = 0;
    for (const path of await listFixtureFiles(FIXTURES)) {
      const sf = ts.createSourceFile(path, await readFile(join(FIXTURES, path), 'utf8'), ts.ScriptTarget.Latest, true, scriptKind(path));
      const aliases = collectAliases(sf);
      const key = (h: { node: ts.Node; functionName: string }): string => `${h.node.pos}:${h.functionName}`;
      const own = new PatternWalker(sf, rules.patterns, aliases, [true]).run().map(key).sort();
      const fed = new PatternWalker(sf, rules.patterns, aliases, [true]);
      new TaintEngine(sf, rules.taint, aliases, 1n, fed.onNode).run();
      expect(fed.results().map(key).sort(), path).toEqual(own);
      compared += own.length;
    }
    expect(compared).toBeGreaterThan(300);
  });
});

describe('SAST scanning a tree', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aegis-sast-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps fingerprints when lines are inserted above and tells repeated sinks apart', async () => {
    const root = join(dir, 'fp');
    await cp(join(FIXTURES, 'express-shop'), root, { recursive: true });
    const before = await scanSast(context(root));
    const file = join(root, 'routes', 'users.js');
    await writeFile(file, `// added\n// lines\n// above\n${await readFile(file, 'utf8')}`);
    const after = await scanSast(context(root));
    expect(after.findings.map((f) => f.fingerprint).sort()).toEqual(before.findings.map((f) => f.fingerprint).sort());
    const line = (f: Finding): number => (f.location.kind === 'file' ? f.location.line : 0);
    const moved = after.findings.filter((f) => f.location.kind === 'file' && f.location.path === 'routes/users.js');
    for (const f of moved) expect(line(f)).toBe(line(before.findings.find((b) => b.fingerprint === f.fingerprint)!) + 3);

    const twice = "const cp = require('child_process');\napp.get('/x', (req, res) => { cp.exec(req.query.a); cp.exec(req.query.a); });";
    const prints = analyzeSource('a.js', twice, defaultRules()).findings.map((f) => f.fingerprint);
    expect(prints).toHaveLength(2);
    expect(new Set(prints).size).toBe(2);
  });

  it('stops promptly when canceled, before or during the scan', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(scanSast(context(FIXTURES, controller.signal))).rejects.toMatchObject({ name: 'AbortError' });

    const root = join(dir, 'many');
    const source = await readFile(join(FIXTURES, 'express-shop/routes/users.js'), 'utf8');
    await mkdir(root, { recursive: true });
    for (let i = 0; i < 400; i++) await writeFile(join(root, `f${i}.js`), source);
    const started = Date.now();
    const full = await scanSast(context(root));
    const fullMs = Date.now() - started;
    expect(full.coverage.files_scanned).toBe(400);

    const mid = new AbortController();
    setTimeout(() => mid.abort(), Math.max(5, fullMs / 10));
    const t0 = Date.now();
    await expect(scanSast(context(root, mid.signal))).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - t0).toBeLessThan(fullMs);
  });

  it('reports skipped files in coverage and reports progress', async () => {
    const root = join(dir, 'cov');
    await mkdir(join(root, 'src'), { recursive: true });
    await mkdir(join(root, 'node_modules', 'dep'), { recursive: true });
    await mkdir(join(root, '.git'), { recursive: true });
    const vulnerable = "const cp = require('child_process');\napp.get('/x', (req, res) => cp.exec(req.query.a));\n";
    await writeFile(join(root, 'src', 'app.js'), vulnerable);
    await writeFile(join(root, 'src', 'types.d.ts'), 'export declare function f(): void;\n');
    await writeFile(join(root, 'src', 'vendor.min.js'), vulnerable);
    await writeFile(join(root, 'src', 'bundle.js'), `${'var a=1;'.repeat(500)}\n${vulnerable}`);
    await writeFile(join(root, 'src', 'big.js'), `${vulnerable}${'// padding line for size\n'.repeat(50_000)}`);
    await writeFile(join(root, 'src', 'blob.js'), Buffer.from([0x63, 0x6f, 0x6e, 0, 0, 1, 2]));
    await writeFile(join(root, 'src', 'data.json'), '{}');
    await writeFile(join(root, 'node_modules', 'dep', 'index.js'), vulnerable);
    await symlink(join(root, 'src', 'app.js'), join(root, 'src', 'link.js'));

    const progress: number[] = [];
    const out = await scanSast(context(root, undefined, (f) => progress.push(f)));
    expect(out.coverage.skipped).toEqual([
      { path: '.git', reason: 'excluded' },
      { path: 'node_modules', reason: 'excluded' },
      { path: 'src/big.js', reason: 'too_large' },
      { path: 'src/blob.js', reason: 'binary' },
      { path: 'src/bundle.js', reason: 'unsupported' },
      { path: 'src/link.js', reason: 'excluded' },
      { path: 'src/types.d.ts', reason: 'excluded' },
      { path: 'src/vendor.min.js', reason: 'unsupported' },
    ]);
    expect(out.coverage.files_scanned).toBe(1);
    expect(out.coverage.bytes_scanned).toBe(Buffer.byteLength(vulnerable));
    expect(out.findings.map((f) => f.location.kind === 'file' && f.location.path)).toEqual(['src/app.js']);
    expect(progress.at(-1)).toBe(1);

    const all = await scanSast(context(root), { excludeDirs: [] });
    expect(all.findings.map((f) => f.location.kind === 'file' && f.location.path).sort()).toEqual(['node_modules/dep/index.js', 'src/app.js']);
  });
});

describe('SAST interprocedural taint (function summaries, imports, paths)', () => {
  let output: ScanOutput;
  const steps = (f: Finding | undefined): string[] => ((f?.details.path ?? []) as Array<{ path: string; line: number; note: string }>).map((s) => `${s.path}:${s.line} ${s.note}`);
  const at = (rule: string, where: string): Finding | undefined =>
    output.findings.find((f) => f.rule_id === rule && f.location.kind === 'file' && `${f.location.path}:${f.location.line}` === where);

  beforeAll(async () => {
    output = await scanSast(context(join(FIXTURES, 'interproc')));
  });

  it('follows a flow through helpers of one file, with every step as file:line', () => {
    const f = at('js-command-injection', 'routes/local.js:15');
    expect(steps(f)).toEqual([
      'routes/local.js:35 source req.query',
      'routes/local.js:36 call build',
      'routes/local.js:18 parameter file of build',
      'routes/local.js:18 call quote',
      'routes/local.js:9 parameter s of quote',
      'routes/local.js:10 return',
      'routes/local.js:18 return',
      'routes/local.js:36 cmd = …',
      'routes/local.js:37 call shell',
      'routes/local.js:13 parameter cmd of shell',
      'routes/local.js:15 sink child_process.exec',
    ]);
    expect(f?.details.source).toMatchObject({ line: 35, expression: 'req.query' });
  });

  it('follows require() of module.exports and exports.f into another file', () => {
    expect(steps(at('js-sql-injection', 'lib/db-helpers.js:10'))).toEqual([
      'routes/orders.js:8 source req.params',
      'routes/orders.js:8 call helpers.findOrder',
      'lib/db-helpers.js:8 parameter id of findOrder',
      'lib/db-helpers.js:10 sink pool.query',
    ]);
    expect(steps(at('js-command-injection', 'lib/db-helpers.js:34'))[0]).toBe('routes/orders.js:22 source req.body');
    // The same helpers are safe when the callee sanitises or binds the value, or gets a constant.
    for (const line of [16, 23, 29]) expect(output.findings.filter((f) => f.location.kind === 'file' && f.location.path === 'lib/db-helpers.js' && f.location.line === line)).toEqual([]);
  });

  it('follows named, default and namespace ES imports (./x.js naming x.ts)', () => {
    expect(steps(at('js-sql-injection', 'src/routes.ts:12'))).toEqual([
      'src/routes.ts:12 source req.query',
      'src/routes.ts:12 call orderBy',
      'src/sql.ts:5 parameter column of orderBy',
      'src/sql.ts:6 return',
      'src/routes.ts:12 sink db.raw',
    ]);
    expect(at('js-command-injection', 'src/sql.ts:13')).toBeDefined();
    expect(at('js-xss-response', 'src/routes.ts:31')).toBeDefined();
    expect(at('js-sql-injection', 'src/routes.ts:15')).toBeUndefined(); // Number() inside pageSize
    expect(at('js-command-injection', 'src/sql.ts:19')).toBeUndefined();
    expect(at('js-xss-response', 'src/routes.ts:36')).toBeUndefined(); // escapeHtml inside the callee
  });

  it('does not follow imports when a file is analysed alone (unknown functions stay clean)', () => {
    const code = "import { orderBy } from './sql';\napp.get('/x', async (req, res) => { await db.raw(orderBy(req.query.s)); });\n";
    expect(analyzeSource('src/a.ts', code, defaultRules()).findings).toEqual([]);
  });

  it('terminates on recursion and keeps what the recursive function returns', () => {
    expect(at('js-path-traversal', 'routes/local.js:44')).toBeDefined();
    expect(at('js-path-traversal', 'routes/local.js:50')).toBeUndefined();
    const code = `const { exec } = require('child_process');
function a(x, n) { return n ? b(x, n - 1) : x; }
function b(x, n) { return n ? a(x + '!', n - 1) : x; }
function c(x) { return c(c(x)); }
app.get('/r', (req, res) => { exec('echo ' + a(req.query.q, 9)); exec('echo ' + c(req.query.q)); });`;
    const found = analyzeSource('r.js', code, defaultRules()).findings.filter((f) => f.rule_id === 'js-command-injection');
    expect(found.map((f) => f.location.kind === 'file' && f.location.line)).toEqual([5]);
  });

  it('bounds the depth of nested summaries', () => {
    const chain = (n: number): string => {
      const fns = Array.from({ length: n }, (_, i) => `function f${i}(x) { ${i === n - 1 ? "exec('ls ' + x);" : `f${i + 1}(x);`} }`);
      return `const { exec } = require('child_process');\n${fns.join('\n')}\napp.get('/d', (req, res) => { f0(req.query.d); });\n`;
    };
    expect(analyzeSource('d.js', chain(MAX_SUMMARY_DEPTH), defaultRules()).findings.map((f) => f.rule_id)).toEqual(['js-command-injection']);
    expect(analyzeSource('d.js', chain(MAX_SUMMARY_DEPTH + 1), defaultRules()).findings).toEqual([]);
  });

  it('resolves this.method() and object methods of the same file', () => {
    const code = `const { exec } = require('child_process');
class Repo {
  find(id) { return this.db.query('SELECT * FROM t WHERE id = ' + id); }
  handle(req) { return this.find(req.query.id); }
}
const svc = { run(cmd) { exec(cmd); } };
app.get('/o', (req, res) => { svc.run(req.query.cmd); });`;
    const found = analyzeSource('o.js', code, defaultRules()).findings.map((f) => [f.rule_id, f.location.kind === 'file' && f.location.line]);
    expect(found).toEqual([
      ['js-sql-injection', 3],
      ['js-command-injection', 6],
    ]);
  });

  it('keeps fingerprints free of line numbers: a callee finding keeps its identity when code moves', () => {
    const code = "const { exec } = require('child_process');\nfunction run(c) { exec('ls ' + c); }\napp.get('/x', (req, res) => { run(req.query.d); });\n";
    const a = analyzeSource('m.js', code, defaultRules()).findings;
    const b = analyzeSource('m.js', `\n\n// moved\n${code}`, defaultRules()).findings;
    expect(a).toHaveLength(1);
    expect(b[0]!.fingerprint).toBe(a[0]!.fingerprint);
    expect(b[0]!.location).toMatchObject({ line: 5 });
  });

  it('renders the path as SARIF codeFlows and in the text report', () => {
    const f = at('js-sql-injection', 'lib/db-helpers.js:10')!;
    const report = { scanType: 'sast', tool: { name: 'aegis', version: '0', informationUri: 'https://example.test' }, target: '.', findings: [f], suppressed: { baseline: 0, diff_base: 0 } };
    const sarif = toSarif(report as Parameters<typeof toSarif>[0]);
    const locations = sarif.runs[0]!.results[0]!.codeFlows![0]!.threadFlows[0]!.locations.map(
      (l) => `${l.location.physicalLocation.artifactLocation.uri}:${l.location.physicalLocation.region?.startLine} ${l.location.message?.text}`,
    );
    expect(locations).toEqual(['routes/orders.js:8 source req.params', 'routes/orders.js:8 call helpers.findOrder', 'lib/db-helpers.js:8 parameter id of findOrder', 'lib/db-helpers.js:10 sink pool.query']);
    const text = renderText(report as Parameters<typeof renderText>[0], { quiet: true });
    expect(text).toContain('         path:\n           routes/orders.js:8  source req.params\n');
    expect(text).toContain('           lib/db-helpers.js:10  sink pool.query\n');
  });

  it('reports a helper reached from several files once', () => {
    const sinks = output.findings.filter((f) => f.location.kind === 'file' && f.location.path === 'lib/db-helpers.js');
    expect(new Set(sinks.map((f) => f.fingerprint)).size).toBe(sinks.length);
  });

  it('follows methods of instances of the project\'s classes and constructor functions', () => {
    // `const store = new RecordStore(db)`, RecordStore required from another module, `this.byOwner = (…) => …` in its body.
    expect(steps(at('js-nosql-injection', 'lib/records-store.js:10'))).toEqual([
      'routes/instances.js:26 source req.query',
      'routes/instances.js:26 call store.byOwner',
      'lib/records-store.js:8 parameter owner of this.byOwner',
      'lib/records-store.js:10 sink records.find',
    ]);
    // `RecordStore.prototype.archive = function …`; `this.mailer = new Mailer()` with a class method.
    expect(steps(at('js-command-injection', 'lib/records-store.js:21'))[1]).toBe('routes/instances.js:34 call store.archive');
    expect(steps(at('js-command-injection', 'lib/records-store.js:32'))[1]).toBe('routes/instances.js:40 call this.mailer.notify');
    // A class of the same file, `badge = new Badge()`: its method's return carries the argument.
    expect(at('js-xss-response', 'routes/instances.js:47')).toBeDefined();
    // The safe methods of the same instances stay quiet.
    expect(at('js-nosql-injection', 'lib/records-store.js:15')).toBeUndefined();
    expect(at('js-command-injection', 'lib/records-store.js:26')).toBeUndefined();
    expect(at('js-command-injection', 'lib/records-store.js:37')).toBeUndefined();
    expect(at('js-xss-response', 'routes/instances.js:52')).toBeUndefined();
  });

  it('keeps unknown instances clean and an ambiguous instance unresolved', () => {
    const code = `const { exec } = require('child_process');
class A { run(c) { exec('ls ' + c); } }
class B { run(c) { return c; } }
const lib = new Map();
let x = new A();
x = new B();
app.get('/r', (req, res) => { exec(lib.get(req.query.k)); x.run(req.query.d); });`;
    expect(analyzeSource('r.js', code, defaultRules()).findings).toEqual([]);
    const single = code.replace('x = new B();', '');
    expect(analyzeSource('r.js', single, defaultRules()).findings.map((f) => f.location.kind === 'file' && f.location.line)).toEqual([2]);
  });

  it('runs a local closure called without tainted arguments on its enclosing state at the call', () => {
    expect(steps(at('js-nosql-injection', 'routes/closures.js:16'))).toEqual([
      'routes/closures.js:10 source req.query',
      'routes/closures.js:12 return of criteria at its call',
      'routes/closures.js:16 sink items.find',
    ]);
    expect(at('js-command-injection', 'routes/closures.js:42')).toBeDefined();
    // A converted value, a variable reassigned before the call, a closure returning a constant.
    for (const [rule, where] of [
      ['js-nosql-injection', 'routes/closures.js:25'],
      ['js-nosql-injection', 'routes/closures.js:33'],
      ['js-command-injection', 'routes/closures.js:45'],
    ] as const) expect(at(rule, where)).toBeUndefined();
  });

  it('bounds closures run at their call: recursion and module-level functions', () => {
    const code = `const { exec } = require('child_process');
app.get('/r', (req, res) => {
  const q = req.query.q;
  const loop = () => (q ? loop() : 'x');
  const twice = () => q + loop();
  exec(loop());
  exec(twice());
});
const top = () => 'ls';
app.get('/s', (req, res) => { const q = req.query.q; exec(top()); });`;
    const found = analyzeSource('r.js', code, defaultRules()).findings.map((f) => f.location.kind === 'file' && f.location.line);
    expect(found).toEqual([7]);
  });
});

describe('SAST sanitisers and validation', () => {
  const route = (body: string): string => `const { exec } = require('child_process');\napp.post('/x', async (req, res) => {\n${body}\n});\n`;
  // [name, vulnerable, safe, rule]
  const cases: Array<[string, string, string, string]> = [
    ['parseInt', "db.query('SELECT * FROM t WHERE id = ' + req.query.id);", "db.query('SELECT * FROM t WHERE id = ' + parseInt(req.query.id, 10));", 'js-sql-injection'],
    ['Number in a helper', "const id = (v) => v; db.query('SELECT * FROM t WHERE id = ' + id(req.query.id));", "const id = (v) => Number(v); db.query('SELECT * FROM t WHERE id = ' + id(req.query.id));", 'js-sql-injection'],
    ['parseFloat', "db.query('SELECT * FROM t LIMIT ' + req.query.n);", "db.query('SELECT * FROM t LIMIT ' + parseFloat(req.query.n));", 'js-sql-injection'],
    ['zod parse', "const { name } = req.body; db.query(`SELECT * FROM t WHERE name = '${name}'`);", "const { name } = schema.parse(req.body); db.query(`SELECT * FROM t WHERE name = '${name}'`);", 'js-sql-injection'],
    ['joi validate', "const value = req.body; exec('convert ' + value.file);", "const { value, error } = schema.validate(req.body); if (error) return; exec('convert ' + value.file);", 'js-command-injection'],
    ['ajv validate as a guard', "const body = req.body; ajv.validate(schema, body); exec('convert ' + body.file);", "const body = req.body; if (!ajv.validate(schema, body)) return res.sendStatus(400); exec('convert ' + body.file);", 'js-command-injection'],
    ['an ajv-compiled validate as a guard', "const body = req.body; if (!check(body)) return; exec('convert ' + body.file);", "const body = req.body; if (!validate(body)) return; exec('convert ' + body.file);", 'js-command-injection'],
    ['class-validator validateOrReject', "const dto = req.body; await validate(dto); exec('convert ' + dto.file);", "const dto = req.body; await validateOrReject(dto); exec('convert ' + dto.file);", 'js-command-injection'],
    ['pg placeholders', "await pool.query('SELECT * FROM t WHERE id = ' + req.params.id);", "await pool.query('SELECT * FROM t WHERE id = $1', [req.params.id]);", 'js-sql-injection'],
    ['mysql ? replacements', "connection.query(`SELECT * FROM t WHERE name = '${req.body.name}'`);", "connection.query('SELECT * FROM t WHERE name = ?', [req.body.name]);", 'js-sql-injection'],
    ['Sequelize replacements', "await sequelize.query('SELECT * FROM t WHERE name = ' + req.body.name);", "await sequelize.query('SELECT * FROM t WHERE name = :name', { replacements: { name: req.body.name } });", 'js-sql-injection'],
    ['Sequelize bind', "await sequelize.query(`SELECT * FROM t WHERE id = ${req.body.id}`);", "await sequelize.query('SELECT * FROM t WHERE id = $1', { bind: [req.body.id] });", 'js-sql-injection'],
    ['knex whereRaw with bindings', "await knex('t').whereRaw(`name = '${req.query.n}'`);", "await knex('t').whereRaw('name = ?', [req.query.n]);", 'js-sql-injection'],
  ];

  it.each(cases)('%s: flags the unchecked flow and not the checked one', (_name, vulnerable, safe, rule) => {
    const rules = (code: string): string[] => analyzeSource('s.js', route(code), defaultRules()).findings.map((f) => f.rule_id);
    expect(rules(vulnerable)).toContain(rule);
    expect(rules(safe)).not.toContain(rule);
  });
});

describe('SAST summaries see the callee module', () => {
  it("uses the callee's module constants for prefix checks", () => {
    const code = `const axios = require('axios');
const BASE = 'https://api.example.com/users/';
function user(id) { return axios.get(BASE + id); }
function any(url) { return axios.get(url); }
app.get('/u', async (req, res) => { await user(req.query.id); await any(req.query.url); });`;
    const found = analyzeSource('c.js', code, defaultRules()).findings.map((f) => [f.rule_id, f.location.kind === 'file' && f.location.line]);
    expect(found).toEqual([['js-ssrf', 4]]);
  });
});

describe('SAST validator functions (summaries used as guards)', () => {
  const run = (helper: string, use: string): string[] =>
    analyzeSource('v.js', `const { exec } = require('child_process');\n${helper}\napp.get('/v', (req, res) => {\n  const name = req.query.name;\n${use}\n});\n`, defaultRules()).findings.map((f) => f.rule_id);

  it('a helper whose every return checks the parameter vouches for it', () => {
    const helper = "function isSafeName(s) { if (s.length > 64) return false; return /^[\\w-]+$/.test(s); }";
    expect(run(helper, "  if (!isSafeName(name)) return res.sendStatus(400);\n  exec('convert ' + name);")).toEqual([]);
    // The check's result ignored: still a flow.
    expect(run(helper, "  isSafeName(name);\n  exec('convert ' + name);")).toEqual(['js-command-injection']);
  });

  it('a helper that can return true without checking vouches for nothing', () => {
    const helper = 'function isSafeName(s) { if (s.length < 3) return true; return /^[\\w-]+$/.test(s); }';
    expect(run(helper, "  if (!isSafeName(name)) return res.sendStatus(400);\n  exec('convert ' + name);")).toEqual(['js-command-injection']);
    const substring = "const isAllowed = (s) => s.includes('images');";
    expect(run(substring, "  if (isAllowed(name)) exec('convert ' + name);")).toEqual(['js-command-injection']);
  });
});

describe('SAST module resolution for summaries', () => {
  it('follows index files, re-exports and export default of a local function', async () => {
    const root = await mkdtemp(join(tmpdir(), 'aegis-sast-modules-'));
    try {
      await mkdir(join(root, 'src', 'lib'), { recursive: true });
      await writeFile(join(root, 'src', 'lib', 'impl.ts'), "import { execSync } from 'node:child_process';\nexport function run(c: string) {\n  return execSync('git ' + c);\n}\n");
      await writeFile(join(root, 'src', 'lib', 'index.ts'), "export { run as execute } from './impl';\n");
      await writeFile(join(root, 'src', 'lib', 'fmt.js'), "const fs = require('fs');\nfunction read(p) { return fs.readFileSync(p); }\nexport default read;\n");
      await writeFile(
        join(root, 'src', 'app.ts'),
        "import { execute } from './lib';\nimport read from './lib/fmt.js';\napp.get('/g', (req, res) => {\n  execute(req.query.c);\n  res.send(read(req.query.p));\n});\n",
      );
      const out = await scanSast(context(root));
      const found = out.findings.map((f) => [f.rule_id, f.location.kind === 'file' ? `${f.location.path}:${f.location.line}` : '']).sort();
      expect(found).toEqual([
        ['js-command-injection', 'src/lib/impl.ts:3'],
        ['js-path-traversal', 'src/lib/fmt.js:2'],
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
