// Structural checks that stand in for live verification (impossible offline): a candidate that
// matches a rule's regex but fails its validator is not reported. Each validator is named by rules
// in their `validate` field.
import { crc32 } from 'node:zlib';
import { isObject } from '../../schemas/json-value.ts';
import { shannonEntropy } from './entropy.ts';

export interface ValidatorInput {
  /** The secret part (the rule's `secret` group, or group 1, or the whole match). */
  secret: string;
  /** The whole regex match. */
  match: string;
  /** Named groups of the match, as text. */
  groups: Readonly<Record<string, string | undefined>>;
}

export type Validator = (input: ValidatorInput) => boolean;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** CRC32 in base62 (digits, upper, lower), left-padded to 6: GitHub's and npm's token checksum. */
export function base62Crc32(body: string): string {
  let n = crc32(body) >>> 0;
  let out = '';
  while (n > 0) {
    out = BASE62[n % 62]! + out;
    n = Math.floor(n / 62);
  }
  return out.padStart(6, '0');
}

/** `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`/`npm_` + 30 random base62 + CRC32 of those 30 (6 base62). */
const githubCrc32: Validator = ({ secret }) => {
  const m = /^(?:gh[pousr]|npm)_([0-9A-Za-z]{30})([0-9A-Za-z]{6})$/.exec(secret);
  return m !== null && base62Crc32(m[1]!) === m[2];
};

function base64UrlJson(part: string): unknown {
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(part)) return undefined;
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/** A JWS in compact form: the header is a JSON object naming an `alg`, the payload is JSON. */
const jwt: Validator = ({ secret }) => {
  const parts = secret.split('.');
  if (parts.length !== 3) return false;
  const header = base64UrlJson(parts[0]!);
  if (!isObject(header) || typeof header.alg !== 'string') return false;
  return isObject(base64UrlJson(parts[1]!));
};

/**
 * A PEM private key body: base64 (newlines, `\n` escapes and string-literal quoting removed) that
 * decodes to what the header promises — DER (a SEQUENCE, 0x30) for PKCS#1/#8/SEC1/DSA keys,
 * `openssh-key-v1\0` for OpenSSH keys, an OpenPGP packet (high bit set) for PGP blocks. Legacy
 * encrypted PEM (`Proc-Type: 4,ENCRYPTED`) is ciphertext, so only its length is checked.
 */
const pem: Validator = ({ secret, match }) => {
  const lines = secret.split(/\r?\n|\\r\\n|\\n/);
  let encrypted = false;
  const body: string[] = [];
  for (const raw of lines) {
    const line = raw.replace(/["'`+,;\s]/g, '');
    if (raw.includes(':')) {
      if (/Proc-Type:\s*4,ENCRYPTED/i.test(raw)) encrypted = true;
      continue; // RFC 1421 / OpenPGP armor headers
    }
    if (/^=[A-Za-z0-9+/]{4}$/.test(line)) continue; // OpenPGP armor checksum
    body.push(line);
  }
  const b64 = body.join('');
  if (b64.length < 64 || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return false;
  const der = Buffer.from(b64, 'base64');
  if (encrypted) return der.length >= 48;
  if (/OPENSSH PRIVATE KEY/.test(match)) return der.subarray(0, 15).toString('latin1') === 'openssh-key-v1\0';
  if (/PGP PRIVATE KEY BLOCK/.test(match)) return (der[0]! & 0x80) !== 0;
  return der[0] === 0x30 && der.length >= 48;
};

/** Credentials in a URL: not a template, and not the user name repeated as password. */
const urlPassword: Validator = ({ secret, groups }) => {
  let password = secret;
  let user = groups.user ?? '';
  try {
    password = decodeURIComponent(secret);
    user = decodeURIComponent(user);
  } catch {
    // keep the raw text: a stray % is still a password
  }
  return password !== user && password.length >= 4;
};

/** Generic assignments: the value must mix letters with digits (identifiers and words rarely do). */
const mixedCharset: Validator = ({ secret }) => /[0-9]/.test(secret) && /[A-Za-z]/.test(secret);

/** Discord bot token: its first part is the bot's numeric id in base64. */
const discordBotToken: Validator = ({ secret }) => {
  const id = Buffer.from(secret.split('.')[0] ?? '', 'base64').toString('latin1');
  return /^[1-9][0-9]{16,19}$/.test(id);
};

/**
 * Basic-auth credentials in base64 (Docker `config.json` `"auth"`, npm `_auth`): the value decodes
 * to printable `user:password`, both parts non-empty, the password not a template or the user name.
 */
const basicAuthBase64: Validator = ({ secret }) => {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(secret) || secret.length % 4 === 1) return false;
  const text = Buffer.from(secret, 'base64').toString('utf8');
  if (!/^[\x20-\x7e]+$/.test(text)) return false;
  const colon = text.indexOf(':');
  if (colon <= 0 || colon === text.length - 1) return false;
  const user = text.slice(0, colon);
  const password = text.slice(colon + 1);
  return password !== user && !/^\$\{.*\}$|^<.*>$|^\$[A-Za-z_]\w*$|^\*+$/.test(password);
};

/**
 * Password words that make a value weak whatever its length; `generic-password` stops on most of
 * them (`password`, `secret`, `default`, `public`), so such values are left to `weak_password`.
 */
const WEAK_WORDS = /passw|secret|default|public/i;

/**
 * Weak-password assignments, the complement of `generic-password`: accepted only when that rule
 * would drop the value (shorter than 8, entropy under 3, not letters mixed with digits, or built
 * on a password word). Where both accept one (`Passw0rd1234`: the generic rule stops on `password`,
 * not `passw`), overlap resolution keeps a single finding, this rule's. The value must hold a
 * digit or a symbol — a bare word is far more often a label, an enum or a variable than a password
 * — and an unquoted value may not be only digits (lengths, counts, timeouts).
 */
const weakPassword: Validator = ({ secret, groups }) => {
  if (secret.length < 4 || secret.length > 64) return false;
  // words in any script, identifiers (reset_password, db.pass) and labels ("Password:", "Пароль")
  if (/^\p{L}+(?:[_.-]\p{L}+)*[:?!.]*$/u.test(secret)) return false;
  if (groups.secret_bare !== undefined && /^[0-9]+$/.test(secret)) return false;
  const mixed = /[0-9]/.test(secret) && /[A-Za-z]/.test(secret);
  const strong = secret.length >= 8 && shannonEntropy(secret) >= 3 && mixed && !WEAK_WORDS.test(secret);
  return !strong;
};

export const VALIDATORS: Readonly<Record<string, Validator>> = {
  github_crc32: githubCrc32,
  jwt,
  pem,
  url_password: urlPassword,
  mixed_charset: mixedCharset,
  discord_bot_token: discordBotToken,
  basic_auth_base64: basicAuthBase64,
  weak_password: weakPassword,
};
