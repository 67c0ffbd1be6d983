// CSRF protection for cookie-authenticated writes: an Origin check (DESIGN §7). A browser names the
// page that sent a request in `Origin` (and in `Sec-Fetch-Site`); a write carrying the session
// cookie must come from Aegis's own origin: the public URL (AEGIS_PUBLIC_URL) or the origin the
// request itself was addressed to. SameSite=Lax already stops cross-site form posts; this also
// stops sibling subdomains and old browsers. API keys need none of it: a browser never adds them.
import type { FastifyRequest } from 'fastify';

export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The request's Origin, or undefined when it names none (absent, or `null`: privacy-sensitive contexts). */
function originOf(request: FastifyRequest): string | undefined {
  const origin = request.headers.origin;
  return origin === 'null' ? undefined : origin;
}

export function fromOwnOrigin(request: FastifyRequest, publicOrigin: string): boolean {
  const origin = originOf(request);
  if (origin !== undefined) return origin === publicOrigin || origin === `${request.protocol}://${request.host}`;
  // Without an Origin to go by (left out, or `null`), Fetch Metadata still tells.
  return request.headers['sec-fetch-site'] === 'same-origin';
}

/**
 * For sign-in posts that need no session (using a magic link or an invite, asking for a link):
 * refused when a browser says another site sent them, so no page can sign a visitor into someone
 * else's account (login CSRF). Clients that are not browsers send neither header and are let
 * through. Routes opt in with `config.signIn` (api/accounts/auth/plugin.ts runs this for them).
 */
export function sentByAnotherSite(request: FastifyRequest, publicOrigin: string): boolean {
  if (request.headers.origin !== undefined) return !fromOwnOrigin(request, publicOrigin);
  const site = request.headers['sec-fetch-site'];
  return site === 'cross-site' || site === 'same-site';
}
