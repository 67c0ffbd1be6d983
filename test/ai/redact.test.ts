// redactSecrets: what leaves Aegis for an AI provider has every secret masked — by the secrets
// scanner's rules and by the broader patterns (PEM keys, credential assignments, URL credentials,
// Authorization headers, known values) — and nothing else changed. The fake secrets are built at
// run time (a seeded generator), so this file holds none for the repository's own secrets scan.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { redactSecrets, isPlaceholder } from '../../scanners/secrets/redact-text.ts';
import { base62Crc32 } from '../../scanners/secrets/validators.ts';
import { seededRandom } from '../support/seeded-random.ts';

function generator(seed: number): (alphabet: string, n: number) => string {
  const next = seededRandom(seed);
  return (alphabet, n) => Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
}
const rand = generator(20261127);
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;

const githubPat = (): string => {
  const body = rand(ALNUM, 30);
  return `gh${'p'}_${body}${base62Crc32(body)}`;
};

const S = {
  awsKeyId: 'AK' + 'IA' + rand(UPPER + '234567', 16),
  awsSecret: rand(ALNUM, 18) + '/' + rand(ALNUM, 10) + '+' + rand(ALNUM, 10),
  githubPat: githubPat(),
  githubFineGrained: 'github' + '_pat_' + rand(ALNUM, 22) + '_' + rand(ALNUM, 59),
  slack: 'xo' + 'xb-' + rand(DIGITS, 12) + '-' + rand(DIGITS, 12) + '-' + rand(ALNUM, 24),
  stripe: 'sk' + '_live_' + rand(ALNUM, 32),
  yamlPassword: 'Qv7' + rand(LOWER + DIGITS, 9),
  jsonPassword: rand(ALNUM, 14) + '!',
  envPassword: 'pw' + rand(ALNUM, 10),
  dbPassword: 'Db' + rand(ALNUM, 12),
  bearer: rand(ALNUM, 44),
  known: 'tenant-' + rand(LOWER + DIGITS, 10),
};

const PEM = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const pemBody = (pem: string): string[] => pem.trim().split('\n').slice(1, -1);

/** Nothing of the secret left: not whole, and no run of 8+ of its characters (≥ 8 long) either. */
function expectNoTrace(text: string, secret: string): void {
  expect(text).not.toContain(secret);
  const window = Math.min(8, secret.length);
  for (let i = 0; i + window <= secret.length; i++) expect(text, `piece ${i} of a secret`).not.toContain(secret.slice(i, i + window));
}

describe('redactSecrets', () => {
  it('masks secrets of several rule types and formats, counts them, and leaves the rest byte for byte', () => {
    const lines = [
      '# ☃ Konfiguration — 設定ファイル (ünïcödé around every secret)',
      `aws_access_key_id = ${S.awsKeyId}`,
      `aws_secret_access_key = "${S.awsSecret}"`,
      `const gh = "${S.githubPat}"; // Zugriff ✓`,
      `GH_FINE=${S.githubFineGrained}`,
      `slack_bot: «${S.slack}» — 通知`,
      `stripe.apiKey = '${S.stripe}'`,
      'database:',
      `  password: ${S.yamlPassword}`,
      `{"user": "admin", "password": "${S.jsonPassword}", "note": "héllo"}`,
      `DB_PASSWORD=${S.envPassword}`,
      `DATABASE_URL=postgres://app:${S.dbPassword}@db.internal:5432/app`,
      `curl -H "Authorization: Bearer ${S.bearer}" https://api.acme.test/v1/orders`,
      ...PEM.trim().split('\n'),
      'const password = req.body.password; // an expression, not a secret',
      'tokenizer = "bert-base-uncased"',
      'password: ${DB_PASSWORD}',
      'max_tokens: 4096',
      'fin ✓ 終わり',
    ];
    const text = lines.join('\n');
    const r = redactSecrets(text);
    for (const [name, secret] of Object.entries(S)) {
      if (name === 'known') continue;
      expectNoTrace(r.text, secret);
    }
    for (const line of pemBody(PEM)) expect(r.text).not.toContain(line);
    // 11 secrets and one key
    expect(r.count).toBe(12);
    // the scanner's rules named them
    expect(r.text).toContain(`aws_access_key_id = [REDACTED aws-access-key-id …(20)]`);
    expect(r.text).toContain(`[REDACTED github-pat …(40)]"; // Zugriff ✓`);
    expect(r.text).toContain(`slack_bot: «[REDACTED slack-bot-token …(${S.slack.length})]» — 通知`);
    expect(r.text).toContain(`-----BEGIN PRIVATE KEY-----[REDACTED private-key`);
    expect(r.text).toContain(`postgres://app:[REDACTED`);
    // what is not a secret is untouched, multibyte text included
    const kept = [0, 7].map((i) => lines[i]!);
    for (const line of [...kept, ...lines.slice(-5)]) expect(r.text.split('\n')).toContain(line);
    expect(r.text).toContain('{"user": "admin", "password": "[REDACTED');
    expect(r.text).toContain('"note": "héllo"}');
  });

  it('changes nothing in text without secrets', () => {
    const text = 'Grüße aus Köln 🌧 — SELECT * FROM users WHERE id = ? -- token count: 12\npassword_min_length: 12\nconst apiKey = process.env.API_KEY;\n';
    expect(redactSecrets(text)).toEqual({ text, count: 0 });
  });

  it('masks every occurrence of a known value, and of a found one elsewhere in the text', () => {
    const text = `tenant ${S.known} ⇒ ${S.known}; ghp: ${S.githubPat}\nlater: ${S.githubPat}`;
    const r = redactSecrets(text, [S.known]);
    expectNoTrace(r.text, S.known);
    expectNoTrace(r.text, S.githubPat);
    expect(r.count).toBe(4);
    expect(r.text.startsWith('tenant [REDACTED known-secret')).toBe(true);
  });

  it('masks a key block cut off by the edge of an excerpt, at either end', () => {
    const body = pemBody(PEM);
    const head = ['const a = 1;', '-----BEGIN PRIVATE KEY-----', ...body.slice(0, 4)].join('\n');
    const tail = ['x', ...body.slice(-4), '-----END PRIVATE KEY-----', 'const b = 2;'].join('\n');
    const rh = redactSecrets(head);
    const rt = redactSecrets(tail);
    for (const line of body.slice(0, 4)) expect(rh.text).not.toContain(line);
    for (const line of body.slice(-4)) expect(rt.text).not.toContain(line);
    expect(rh.text.startsWith('const a = 1;\n')).toBe(true);
    expect(rt.text.startsWith('x\n[REDACTED private-key')).toBe(true);
    expect(rt.text.endsWith('-----END PRIVATE KEY-----\nconst b = 2;')).toBe(true);
  });

  it('is idempotent: redacting twice masks nothing more', () => {
    const once = redactSecrets(`password: "${S.jsonPassword}"\n${PEM}\nAuthorization: Basic ${Buffer.from('u:' + S.dbPassword).toString('base64')}`);
    expect(once.count).toBe(3);
    expect(redactSecrets(once.text)).toEqual({ text: once.text, count: 0 });
  });

  it('masks assignments in escaped JSON strings, query strings and URL user names', () => {
    const token = 'tk' + rand(ALNUM, 20);
    const text = [
      JSON.stringify({ log: `connect password="${S.jsonPassword}"\n` }),
      `GET /api/orders?page=2&api_key=${token}&sort=asc`,
      `git clone https://${S.githubPat}@github.com/acme/app.git`,
    ].join('\n');
    const r = redactSecrets(text);
    expectNoTrace(r.text, S.jsonPassword);
    expectNoTrace(r.text, token);
    expectNoTrace(r.text, S.githubPat);
    expect(r.text).toContain('&sort=asc');
    expect(r.text).toContain('@github.com/acme/app.git');
  });

  it('masks token-shaped values the scanner rules reject (a bad checksum), and placeholders shaped like tokens', () => {
    const badChecksum = `gh${'p'}_${rand(ALNUM, 36)}`;
    const r = redactSecrets(`a = '${badChecksum}'\nb = 'gh${'p'}_${'x'.repeat(36)}'\nc = 'sk-proj-${rand(ALNUM, 40)}'`);
    expect(r.text).toBe(`a = '[REDACTED token …(40)]'\nb = '[REDACTED token …(40)]'\nc = '[REDACTED token …(48)]'`);
    expect(r.count).toBe(3);
  });

  it('masks cookie values in request and response excerpts, keeping names and attributes', () => {
    const sid = 's%3A' + rand(ALNUM, 24);
    const session = rand(ALNUM, 20);
    const r = redactSecrets(`GET /account HTTP/1.1\nCookie: sid=${sid}; consent=1\n\nHTTP/1.1 200 OK\nSet-Cookie: session=${session}; Path=/; HttpOnly`);
    expectNoTrace(r.text, sid);
    expectNoTrace(r.text, session);
    expect(r.text).toContain('; consent=1\n');
    expect(r.text).toContain('Set-Cookie: session=[REDACTED cookie …(20)]; Path=/; HttpOnly');
    expect(r.count).toBe(2);
  });

  it('treats template references and masked values as placeholders', () => {
    for (const v of ['${DB_PASSWORD}', '{{ .Values.password }}', '<your-token>', '********', 'changeme', 'xxxxxxxx', '[REDACTED x …(9)]', 'ghp_…(40)']) expect(isPlaceholder(v), v).toBe(true);
    for (const v of [S.yamlPassword, S.stripe]) expect(isPlaceholder(v), v).toBe(false);
  });
});
