// Serves the dashboard (web/, built into web/dist/ by `npm run build`) from the API process, at
// the same origin as the API it calls: the session cookie and the CSRF origin check work unchanged.
//
// - Hashed files under /assets/ are cached for a year (`immutable`); index.html is revalidated on
//   every visit, so a new build is picked up at once.
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
      res.header('Cache-Control', path.includes('/assets/') ? `public, max-age=${YEAR}, immutable` : 'no-cache');
    },
  });
  const sendApp = (reply: FastifyReply) => reply.sendFile('index.html');
  app.get('/', { schema: { hide: true } }, async (_request, reply) => sendApp(reply));
  for (const section of DASHBOARD_SECTIONS) {
    app.get(`/${section}`, { schema: { hide: true } }, async (_request, reply) => sendApp(reply));
    app.get(`/${section}/*`, { schema: { hide: true } }, async (_request, reply) => sendApp(reply));
  }
};
