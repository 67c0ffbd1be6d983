// Signed tokens for the challenge: the puzzle seed a challenge page must solve, and the clearance
// cookie a solved puzzle earns. Both are `base64url(JSON payload).base64url(HMAC-SHA256)`: the
// gateway keeps no per-client state, any gateway process holding the same server key can check
// them, and a client can read but not alter what it carries.
//
// Seeds and clearances are signed with different keys, both derived from the server key with HKDF,
// so neither kind of token can ever pass for the other, and nothing here can be confused with what
// the secret box seals with the server key itself.
import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

export const CLEARANCE_COOKIE = 'aegis_clearance';

const SERVER_KEY_BYTES = 32;
const SUBKEY_BYTES = 32;
/** Version tag of the payloads; bump it (and keep reading the old one for a TTL) to change them. */
const VERSION = 1;
/** A signature is HMAC-SHA256: 32 bytes, 43 base64url characters. */
const SIGNATURE_CHARS = 43;
/** Longer tokens are not ours; refusing them early bounds the work an attacker can cause. */
const MAX_TOKEN_CHARS = 1024;
const B64URL = /^[A-Za-z0-9_-]+$/;
/**
 * Cookies named like ours that verifyClearance checks at most. A browser sends one (ours is always
 * host-only with Path=/), a few at most after path or domain mix-ups; the cap keeps a Cookie header
 * stuffed with candidates from costing hundreds of HMACs per request.
 */
const MAX_CLEARANCE_CANDIDATES = 8;

export interface ChallengeKeys {
  /** Signs puzzle seeds. */
  puzzle: Buffer;
  /** Signs clearance cookies. */
  clearance: Buffer;
}

/** A purpose-bound 32-byte key from the server key (HKDF-SHA256, the purpose as `info`). */
export function deriveKey(serverKey: Buffer, purpose: string): Buffer {
  if (serverKey.length !== SERVER_KEY_BYTES) throw new RangeError(`the server key must be ${SERVER_KEY_BYTES} bytes, got ${serverKey.length}`);
  // No salt: the server key is already uniformly random, HKDF only has to separate purposes.
  return Buffer.from(hkdfSync('sha256', serverKey, Buffer.alloc(0), `aegis shield ${purpose}`, SUBKEY_BYTES));
}

export function deriveChallengeKeys(serverKey: Buffer): ChallengeKeys {
  return { puzzle: deriveKey(serverKey, 'challenge seed v1'), clearance: deriveKey(serverKey, 'challenge clearance v1') };
}

const signatureOf = (key: Buffer, encodedPayload: string): string => createHmac('sha256', key).update(encodedPayload).digest('base64url');

export function signToken(key: Buffer, payload: Record<string, unknown>): string {
  const encoded = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  return `${encoded}.${signatureOf(key, encoded)}`;
}

/**
 * The payload of a token signed with `key`, or null when the token is malformed or its signature
 * is wrong. The signature is compared as its canonical base64url text, so a token has exactly one
 * valid spelling (base64url decoders accept several for the same bytes).
 */
export function openToken(key: Buffer, token: string): Record<string, unknown> | null {
  if (token.length > MAX_TOKEN_CHARS) return null;
  const dot = token.indexOf('.');
  if (dot <= 0 || token.length - dot - 1 !== SIGNATURE_CHARS) return null;
  const encoded = token.slice(0, dot);
  const given = token.slice(dot + 1);
  if (!B64URL.test(encoded) || !B64URL.test(given)) return null;
  if (!timingSafeEqual(Buffer.from(signatureOf(key, encoded)), Buffer.from(given))) return null;
  try {
    const payload: unknown = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
    return typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? (payload as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const isInt = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);

// ---- puzzle seeds ------------------------------------------------------------------------------

export interface PuzzleSeed {
  siteId: string;
  clientIp: string;
  /** Unix seconds. */
  issuedAt: number;
  /** Unix seconds. */
  expiresAt: number;
  difficultyBits: number;
  /** 16 random bytes, base64url: makes every seed unique, and names it in the replay cache. */
  random: string;
}

export const SEED_TTL_SECONDS = 5 * 60;

export function issueSeed(key: Buffer, seed: { siteId: string; clientIp: string; difficultyBits: number; nowMs: number; ttlSeconds?: number }): string {
  const iat = Math.floor(seed.nowMs / 1000);
  return signToken(key, {
    v: VERSION,
    s: seed.siteId,
    ip: seed.clientIp,
    iat,
    exp: iat + (seed.ttlSeconds ?? SEED_TTL_SECONDS),
    // The difficulty travels signed inside the seed: a seed is judged by the difficulty it was
    // issued with, even if the configuration changed (or differs on another gateway) meanwhile.
    d: seed.difficultyBits,
    r: randomBytes(16).toString('base64url'),
  });
}

/** The seed's contents when its signature is valid; expiry and binding are the caller's to check. */
export function readSeed(key: Buffer, token: string): PuzzleSeed | null {
  const p = openToken(key, token);
  if (!p || p.v !== VERSION) return null;
  const { s, ip, iat, exp, d, r } = p;
  if (typeof s !== 'string' || typeof ip !== 'string' || !isInt(iat) || !isInt(exp) || !isInt(d) || typeof r !== 'string') return null;
  return { siteId: s, clientIp: ip, issuedAt: iat, expiresAt: exp, difficultyBits: d, random: r };
}

// ---- proof of work -----------------------------------------------------------------------------

/** Number of leading zero bits of `digest`. */
export function leadingZeroBits(digest: Uint8Array): number {
  let bits = 0;
  for (const byte of digest) {
    if (byte === 0) {
      bits += 8;
      continue;
    }
    return bits + Math.clz32(byte) - 24;
  }
  return bits;
}

/** What the client hashes: SHA-256 of `seed + ":" + nonce`. */
export const workDigest = (seed: string, nonce: string): Buffer => createHash('sha256').update(`${seed}:${nonce}`).digest();

export const hasEnoughWork = (seed: string, nonce: string, bits: number): boolean => leadingZeroBits(workDigest(seed, nonce)) >= bits;

// ---- clearances --------------------------------------------------------------------------------

export function issueClearance(key: Buffer, clearance: { siteId: string; clientIp: string; nowMs: number; ttlSeconds: number }): string {
  return signToken(key, { v: VERSION, s: clearance.siteId, ip: clearance.clientIp, exp: Math.floor(clearance.nowMs / 1000) + clearance.ttlSeconds });
}

/** Whether `token` is a clearance for this site and client that has not expired. */
export function isValidClearance(key: Buffer, token: string, siteId: string, clientIp: string, nowMs: number): boolean {
  const p = openToken(key, token);
  return p !== null && p.v === VERSION && p.s === siteId && p.ip === clientIp && isInt(p.exp) && p.exp * 1000 > nowMs;
}

/**
 * Whether a `Cookie` header carries a valid clearance for this site and client. Other cookies are
 * ignored; when several cookies carry our name (another path, a stale one) any valid one counts.
 * Runs on every request a rule would challenge: a string scan and at most one HMAC per candidate.
 */
export function verifyClearance(key: Buffer, cookieHeader: string | undefined, siteId: string, clientIp: string, nowMs: number): boolean {
  if (!cookieHeader) return false;
  const prefix = `${CLEARANCE_COOKIE}=`;
  let at = cookieHeader.indexOf(prefix);
  let candidates = 0;
  while (at !== -1) {
    // Our name only counts at the start of a cookie pair, not inside another name (`xaegis_clearance`).
    const boundary = at === 0 || cookieHeader[at - 1] === ';' || cookieHeader[at - 1] === ' ';
    if (boundary) {
      if (++candidates > MAX_CLEARANCE_CANDIDATES) return false;
      const start = at + prefix.length;
      const end = cookieHeader.indexOf(';', start);
      const value = cookieHeader.slice(start, end === -1 ? undefined : end).trim();
      if (isValidClearance(key, value, siteId, clientIp, nowMs)) return true;
    }
    at = cookieHeader.indexOf(prefix, at + prefix.length);
  }
  return false;
}
