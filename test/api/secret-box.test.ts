import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSecretBox, loadServerKey, open, parseServerKey, seal } from '../../platform/crypto/secret-box.ts';

const key = randomBytes(32);

/** Flips one bit of the decoded part `index` (1 iv, 2 tag, 3 ciphertext) of a sealed value. */
function tamper(sealed: string, index: number): string {
  const parts = sealed.split('.');
  const bytes = Buffer.from(parts[index]!, 'base64url');
  bytes[0] = bytes[0]! ^ 0x01;
  parts[index] = bytes.toString('base64url');
  return parts.join('.');
}

describe('seal and open', () => {
  it('round-trips, with a fresh IV every time', () => {
    const secret = 'whsec_abcDEF123 — ünïcode';
    const a = seal(key, secret);
    const b = seal(key, secret);
    expect(a).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain('whsec');
    expect(open(key, a)).toBe(secret);
    expect(open(key, b)).toBe(secret);
    expect(open(key, seal(key, ''))).toBe('');
  });

  it('detects tampering with the IV, the tag or the ciphertext', () => {
    const sealed = seal(key, 'whsec_secret');
    for (const index of [1, 2, 3]) expect(() => open(key, tamper(sealed, index)), `part ${index}`).toThrow(/cannot be opened/);
    const [, iv, tag, ciphertext] = sealed.split('.');
    expect(() => open(key, `v2.${iv}.${tag}.${ciphertext}`)).toThrow(/version v1/);
    expect(() => open(key, `v1.${iv}.${tag}`)).toThrow(/version v1/);
    expect(() => open(key, `v1.${iv}.${tag!.slice(0, 11)}.${ciphertext}`)).toThrow(/malformed/); // truncated tag
    expect(() => open(key, `v1.${iv}.${tag}.${ciphertext}!`)).toThrow(/version v1/);
  });

  it('fails with another key or another context', () => {
    const sealed = seal(key, 'whsec_secret', 'whk_1');
    expect(() => open(randomBytes(32), sealed, 'whk_1')).toThrow(/cannot be opened/);
    expect(() => open(key, sealed, 'whk_2')).toThrow(/cannot be opened/);
    expect(() => open(key, sealed)).toThrow(/cannot be opened/);
    expect(open(key, sealed, 'whk_1')).toBe('whsec_secret');
  });

  it('refuses keys that are not 32 bytes', () => {
    expect(() => seal(randomBytes(16), 'x')).toThrow(/32 bytes/);
    expect(() => createSecretBox(randomBytes(31))).toThrow(/32 bytes/);
  });

  it('keeps its own copy of the key', () => {
    const mine = Buffer.from(key);
    const box = createSecretBox(mine);
    const sealed = box.seal('whsec_x', 'ctx');
    mine.fill(0);
    expect(box.open(sealed, 'ctx')).toBe('whsec_x');
    expect(open(key, sealed, 'ctx')).toBe('whsec_x');
  });
});

describe('parseServerKey', () => {
  it('accepts hex, base64 (padded or not) and base64url encodings of 32 bytes', () => {
    const raw = Buffer.from('fbff' + '00'.repeat(30), 'hex'); // encodes with + / in base64 and - _ in base64url
    for (const text of [raw.toString('hex'), raw.toString('hex').toUpperCase(), raw.toString('base64'), raw.toString('base64').replace(/=$/, ''), raw.toString('base64url'), ` ${raw.toString('base64')}\n`]) {
      expect(parseServerKey(text, 'AEGIS_SECRET_KEY').equals(raw), text).toBe(true);
    }
  });

  it('rejects anything else without echoing the value', () => {
    const bad = [
      '',
      'secret',
      randomBytes(31).toString('hex'),
      randomBytes(33).toString('hex'),
      randomBytes(16).toString('base64'),
      randomBytes(33).toString('base64'),
      randomBytes(32).toString('hex').replace(/^./, 'g'),
      `${randomBytes(32).toString('base64').slice(0, 43)}==`,
    ];
    for (const text of bad) {
      let message = '';
      try {
        parseServerKey(text, 'AEGIS_SECRET_KEY');
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, JSON.stringify(text)).toMatch(/^AEGIS_SECRET_KEY must be a 32-byte key written as base64 \(44 characters\) or hex \(64 characters\)/);
      if (text.length > 8) expect(message).not.toContain(text.trim());
    }
  });
});

describe('loadServerKey', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'aegis-secret-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('creates <data-dir>/secret-key with mode 0600 once and reads it back afterwards', async () => {
    const dir = join(tempDir(), 'nested', 'data');
    const first = await loadServerKey(dir, undefined);
    expect(first).toHaveLength(32);
    const path = join(dir, 'secret-key');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(parseServerKey(readFileSync(path, 'utf8'), path).equals(first)).toBe(true);
    expect((await loadServerKey(dir, undefined)).equals(first)).toBe(true);
    expect(readdirSync(dir)).toEqual(['secret-key']);
  });

  it('gives every concurrent starter the same key and leaves no temporary files', async () => {
    const dir = tempDir();
    const keys = await Promise.all(Array.from({ length: 12 }, () => loadServerKey(dir, undefined)));
    for (const k of keys) expect(k.equals(keys[0]!)).toBe(true);
    expect(readdirSync(dir)).toEqual(['secret-key']);
  });

  it('prefers AEGIS_SECRET_KEY and then touches no file', async () => {
    const dir = tempDir();
    const env = randomBytes(32);
    expect((await loadServerKey(dir, env.toString('base64'))).equals(env)).toBe(true);
    expect(readdirSync(dir)).toEqual([]);
    await expect(loadServerKey(dir, 'too-short')).rejects.toThrow(/AEGIS_SECRET_KEY must be a 32-byte key/);
  });

  it('refuses a damaged key file instead of replacing it', async () => {
    const dir = tempDir();
    const path = join(dir, 'secret-key');
    writeFileSync(path, 'not a key\n', { mode: 0o600 });
    await expect(loadServerKey(dir, undefined)).rejects.toThrow(`${path} must be a 32-byte key`);
    expect(readFileSync(path, 'utf8')).toBe('not a key\n');
  });
});
