// Serves the dashboard (web/, built into web/dist/ by `npm run build`) from the API process, at
// the same origin as the API it calls: the session cookie and the CSRF origin check work unchanged.
//
// - Hashed files under /assets/ are cached for a year (`immutable`); index.html is revalidated on
//   every visit, so a new build is picked up at once. The favicon (web/public/favicon.svg, a fixed
//   name every page can point at) is cached for 30 days; /favicon.ico, which browsers ask for on
//   pages that name no icon (the server's own sign-in pages), redirects to it.
// - Precompressed .br/.gz files are sent to browsers that accept them (build/web.mjs writes them).
// - The dashboard's pages carry a strict Content-Security-Policy: scripts and styles only from this
//   origin (no inline script, no eval), no framing, no plugins.
// - Client-side routes (/findings/…, /settings/…) answer index.html; everything else keeps the API's
//   404 envelope.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';

/** The built dashboard: web/dist/, or AEGIS_WEB_DIST (the folder build/web.mjs built into). */
export const WEB_ROOT = process.env.AEGIS_WEB_DIST ? `${resolve(process.env.AEGIS_WEB_DIST)}/` : fileURLToPath(new URL('../../web/dist/', import.meta.url));

export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The dashboard's top-level sections: their URLs (and everything under them) are the app's. */
export const DASHBOARD_SECTIONS = ['findings', 'scans', 'shield', 'config', 'settings', 'sign-in'] as const;

const YEAR = 365 * 24 * 3600;
const FAVICON = '/favicon.svg';
/** Long, but not a year and not `immutable`: the name is fixed, so a new icon must reach browsers. */
const FAVICON_CACHE = `public, max-age=${30 * 24 * 3600}`;

/** Cache-Control for a built file, by its path on disk. */
function cacheControlOf(path: string): string {
  if (path.includes('/assets/')) return `public, max-age=${YEAR}, immutable`;
  // The path is the file sent: the precompressed .br/.gz beside it when the browser accepts one.
  if (/\/favicon\.svg(\.br|\.gz)?$/.test(path)) return FAVICON_CACHE;
  return 'no-cache';
}

/** On every answer of the dashboard: the CSP and what keeps it out of frames and other sites' referrers. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': DASHBOARD_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
};

export const webPlugin: FastifyPluginAsync = async (app) => {
  if (!existsSync(`${WEB_ROOT}index.html`)) {
    // A checkout that was never built (`npm run build` builds it; `npm start` builds when stale).
    app.get('/', { schema: { hide: true } }, async (_request, reply) =>
      reply.headers(SECURITY_HEADERS).code(503).type('text/plain; charset=utf-8').send('The dashboard is not built: run `npm run build` (or `npm start`, which builds it).\nThe API is up at /api/v1.\n'),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root: WEB_ROOT,
    prefix: '/',
    // One route per built file (read at start-up) instead of a catch-all: unknown paths keep the
    // API's 404, and /api/* can never be shadowed by a file.
    wildcard: false,
    index: false,
    preCompressed: true,
    cacheControl: false,
    allowedPath: (path) => !path.endsWith('build-info.json') && !/\.(br|gz)$/.test(path),
    // Every file, index.html included (sendFile below goes through here too).
    setHeaders: (res, path) => {
      res.headers(SECURITY_HEADERS);
      res.header('Cache-Control', cacheControlOf(path));
    },
  });
  const sendApp = (reply: FastifyReply) => reply.sendFile('index.html');
  if (existsSync(`${WEB_ROOT}${FAVICON.slice(1)}`)) {
    app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) => reply.header('Cache-Control', FAVICON_CACHE).redirect(FAVICON, 301));
  }
  app.get('/', { schema: { hide: true } }, async (_request, reply) => sendApp(reply));
  for (const section of DASHBOARD_SECTIONS) {
    app.get(`/${section}`, { schema: { hide: true } }, async (_request, reply) => sendApp(reply));
    app.get(`/${section}/*`, { schema: { hide: true } }, async (_request, reply) => sendApp(reply));
  }
};
