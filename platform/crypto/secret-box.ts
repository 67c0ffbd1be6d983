// Secrets Aegis must be able to read back (webhook signing secrets: deliveries are signed with
// them), so they cannot be hashed like API keys. They are sealed with AES-256-GCM under one 32-byte
// server key and stored as text: `v1.<iv>.<tag>.<ciphertext>`, each part base64url. The version
// prefix leaves room for key rotation or another cipher without guessing at old rows.
//
// The server key comes from AEGIS_SECRET_KEY, or else from <data-dir>/secret-key, created on first
// start. Several hosts sharing one PostgreSQL must share the key (set AEGIS_SECRET_KEY): a host with
// a different key cannot open what the others sealed.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { link, mkdir, open as openFile, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

const VERSION = 'v1';
const KEY_BYTES = 32;
/** 96-bit IVs are GCM's native size; random IVs are safe far beyond the number of secrets we seal. */
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_FILE = 'secret-key';

export interface SecretBox {
  /**
   * Encrypts `plaintext`. `context` (e.g. the id of the row that stores the result) is
   * authenticated but not stored: the sealed value then opens only with the same context, so a
   * sealed value copied into another row is useless there.
   */
  seal(plaintext: string, context?: string): string;
  /** Decrypts a value from `seal`; throws when the key, the context or the value is wrong. */
  open(sealed: string, context?: string): string;
}

export class SecretBoxError extends Error {
  override name = 'SecretBoxError';
}

function checkKey(key: Buffer): void {
  if (key.length !== KEY_BYTES) throw new SecretBoxError(`the server key must be ${KEY_BYTES} bytes, got ${key.length}`);
}

export function seal(key: Buffer, plaintext: string, context = ''): string {
  checkKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(`${VERSION}:${context}`, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
}

const B64URL = /^[A-Za-z0-9_-]*$/;

export function open(key: Buffer, sealed: string, context = ''): string {
  checkKey(key);
  const parts = sealed.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION || !parts.slice(1).every((p) => B64URL.test(p))) {
    throw new SecretBoxError(`not a sealed value of version ${VERSION}`);
  }
  const [, ivText = '', tagText = '', ciphertextText = ''] = parts;
  const iv = Buffer.from(ivText, 'base64url');
  const tag = Buffer.from(tagText, 'base64url');
  // A short tag would weaken authentication (GCM accepts truncated tags): insist on the full 16 bytes.
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SecretBoxError('sealed value is malformed');
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(`${VERSION}:${context}`, 'utf8'));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(Buffer.from(ciphertextText, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretBoxError('sealed value cannot be opened: wrong server key, wrong context, or it was altered');
  }
}

export function createSecretBox(key: Buffer): SecretBox {
  checkKey(key);
  // Keep a private copy: the caller's buffer may be reused or zeroed.
  const own = Buffer.from(key);
  return { seal: (plaintext, context) => seal(own, plaintext, context), open: (sealed, context) => open(own, sealed, context) };
}

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
const BASE64_KEY = /^(?:[A-Za-z0-9+/]{43}|[A-Za-z0-9_-]{43})=?$/;

/**
 * A 32-byte key written as hex (64 characters) or base64/base64url (43 characters, optionally
 * padded). `source` names where it came from in the error; the value itself is never echoed.
 */
export function parseServerKey(text: string, source: string): Buffer {
  const value = text.trim();
  if (HEX_KEY.test(value)) return Buffer.from(value, 'hex');
  if (BASE64_KEY.test(value)) {
    const key = Buffer.from(value, /[-_]/.test(value) ? 'base64url' : 'base64');
    if (key.length === KEY_BYTES) return key;
  }
  throw new SecretBoxError(
    `${source} must be a ${KEY_BYTES}-byte key written as base64 (44 characters) or hex (64 characters); generate one with \`openssl rand -base64 32\``,
  );
}

const errorCode = (err: unknown): string | undefined =>
  typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;

async function readKeyFile(path: string): Promise<Buffer | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined;
    throw err;
  }
  return parseServerKey(text, path);
}

/**
 * The server key: from `envValue` (AEGIS_SECRET_KEY) when set, else from `<dataDir>/secret-key`,
 * which is created on first use. Creation writes a private temporary file in full (flag `wx`, mode
 * 0600, synced) and then hard-links it into place: `link` never replaces an existing file, so when
 * two processes start at once exactly one key wins and the loser reads it, and nobody ever sees a
 * half-written file.
 */
export async function loadServerKey(dataDir: string, envValue: string | undefined): Promise<Buffer> {
  if (envValue !== undefined) return parseServerKey(envValue, 'AEGIS_SECRET_KEY');
  const path = join(dataDir, KEY_FILE);
  const existing = await readKeyFile(path);
  if (existing) return existing;

  await mkdir(dataDir, { recursive: true });
  const key = randomBytes(KEY_BYTES);
  const temporary = join(dataDir, `.${KEY_FILE}.${process.pid}.${randomBytes(6).toString('hex')}`);
  try {
    const handle = await openFile(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(`${key.toString('base64')}\n`, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await link(temporary, path);
      return key;
    } catch (err) {
      if (errorCode(err) !== 'EEXIST') throw err;
    }
  } finally {
    await rm(temporary, { force: true });
  }
  // Another process created the file first: use its key.
  const winner = await readKeyFile(path);
  if (!winner) throw new SecretBoxError(`${path} vanished while it was being created`);
  return winner;
}
