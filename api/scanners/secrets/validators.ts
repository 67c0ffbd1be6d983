// Structural checks that stand in for live verification (impossible offline): a candidate that
// matches a rule's regex but fails its validator is not reported. Each validator is named by rules
// in their `validate` field.
import { crc32 } from 'node:zlib';

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

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

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

export const VALIDATORS: Readonly<Record<string, Validator>> = {
  github_crc32: githubCrc32,
  jwt,
  pem,
  url_password: urlPassword,
  mixed_charset: mixedCharset,
  discord_bot_token: discordBotToken,
};
