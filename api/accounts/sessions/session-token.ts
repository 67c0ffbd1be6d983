// The session cookie's value: a JWT (HS256, jose) naming the session row. The signature spares a
// database lookup for forged or expired cookies; the row decides revocation. The signing key is
// derived from the server key (AEGIS_SECRET_KEY), so every API process sharing one database
// accepts the others' cookies. A cookie that verified once is remembered until it expires: jose
// verifies through WebCrypto, an asynchronous job per call that was most of a cookie request's time.
import { hkdfSync } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';
import { SESSION_LIFETIME_MS } from '../auth/cookies.ts';

/** A cookie older than this is re-issued with a fresh 30 days (sliding expiry). */
export { SESSION_LIFETIME_MS };
export const SESSION_REFRESH_AFTER_MS = 60 * 1000;
const ISSUER = 'aegis';
const AUDIENCE = 'aegis-session';

export interface SessionClaims {
  sessionId: string;
  userId: string;
  /** Epoch ms the token was issued. */
  issuedAt: number;
  /** Epoch ms the token expires. */
  expiresAt: number;
}

/** Longest cookie value worth remembering (ours are about 250 characters). */
const CACHEABLE_LENGTH = 1024;

export class SessionTokens {
  private readonly key: Uint8Array;
  private readonly verified = new LRUCache<string, SessionClaims>({ max: 20_000 });

  constructor(serverKey: Buffer) {
    this.key = new Uint8Array(hkdfSync('sha256', serverKey, Buffer.alloc(0), 'aegis session jwt v1', 32));
  }

  async issue(sessionId: string, userId: string, now = Date.now()): Promise<string> {
    return new SignJWT({ sid: sessionId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(userId)
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(Math.floor((now + SESSION_LIFETIME_MS) / 1000))
      .sign(this.key);
  }

  /** The claims of a valid token, or null for anything forged, malformed or expired. */
  async verify(token: string): Promise<SessionClaims | null> {
    const known = this.verified.get(token);
    if (known) {
      if (Date.now() < known.expiresAt) return known;
      this.verified.delete(token);
      return null;
    }
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] });
      if (typeof payload.sid !== 'string' || typeof payload.sub !== 'string' || typeof payload.iat !== 'number' || typeof payload.exp !== 'number') return null;
      const claims = { sessionId: payload.sid, userId: payload.sub, issuedAt: payload.iat * 1000, expiresAt: payload.exp * 1000 };
      if (token.length <= CACHEABLE_LENGTH) this.verified.set(token, claims);
      return claims;
    } catch (err) {
      if (err instanceof errors.JOSEError) return null;
      throw err;
    }
  }
}
