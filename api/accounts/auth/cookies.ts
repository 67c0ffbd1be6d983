// The session cookie. `__Host-` binds it to this host (no Domain attribute, Path=/, Secure);
// browsers accept Secure cookies on http://localhost, so the quick start works without TLS, but a
// server reached over plain HTTP on another name cannot keep a session (put TLS in front).
import type { CookieSerializeOptions } from '@fastify/cookie';

/** How long a session lasts after its last request (the cookie's and the row's sliding expiry). */
export const SESSION_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;

export const SESSION_COOKIE = '__Host-aegis_session';
/** Binds an identity-provider sign-in to the browser that started it (its `state`). */
export const FLOW_COOKIE = '__Host-aegis_flow';

export const sessionCookieOptions: CookieSerializeOptions = {
  httpOnly: true,
  secure: true,
  sameSite: 'lax',
  path: '/',
  maxAge: SESSION_LIFETIME_MS / 1000,
};

export const flowCookieOptions: CookieSerializeOptions = { httpOnly: true, secure: true, sameSite: 'lax', path: '/', maxAge: 15 * 60 };

export const clearedCookieOptions: CookieSerializeOptions = { httpOnly: true, secure: true, sameSite: 'lax', path: '/' };
