// Passive checks: read the responses the crawl already got, send nothing of their own. The CORS
// check works because the crawler's GET requests carry a foreign Origin (CORS_PROBE_ORIGIN) while
// that rule is on. Header and cookie rules are site-wide (one finding per origin and header or
// cookie, located at the first page showing it); the others are per page.
import type { HttpExchange } from '../web/http.ts';
import { around, clip } from './probe.ts';

export const CORS_PROBE_ORIGIN = 'https://aegis-cors-check.example';

export interface PassiveHit {
  rule: string;
  /** `site`: one finding per origin (and subject); `page`: one per method and path (and subject). */
  scope: 'site' | 'page';
  /** The header or cookie the finding is about. */
  subject?: string;
  evidence: string;
  /** Body excerpt for details.response. */
  proof?: string;
}

const isHtml = (ex: HttpExchange): boolean => /html/i.test(ex.headers['content-type'] ?? '');
const ok = (ex: HttpExchange): boolean => ex.status >= 200 && ex.status < 300;

function missingHeaders(ex: HttpExchange, enabled: Set<string>): PassiveHit[] {
  const hits: PassiveHit[] = [];
  const h = ex.headers;
  const csp = h['content-security-policy'];
  const line = `${ex.request.method} ${new URL(ex.request.url).pathname} → ${ex.status} ${h['content-type'] ?? ''}`.trim();
  if (ok(ex) && isHtml(ex)) {
    if (enabled.has('dast-missing-csp') && !csp) hits.push({ rule: 'dast-missing-csp', scope: 'site', subject: 'content-security-policy', evidence: `${line} without Content-Security-Policy` });
    if (enabled.has('dast-missing-xfo') && !h['x-frame-options'] && !/frame-ancestors/i.test(csp ?? '')) {
      hits.push({ rule: 'dast-missing-xfo', scope: 'site', subject: 'x-frame-options', evidence: `${line} without X-Frame-Options or CSP frame-ancestors` });
    }
  }
  if (enabled.has('dast-missing-xcto') && ok(ex) && ex.body.length > 0 && (h['x-content-type-options'] ?? '').toLowerCase().trim() !== 'nosniff') {
    hits.push({ rule: 'dast-missing-xcto', scope: 'site', subject: 'x-content-type-options', evidence: `${line} without X-Content-Type-Options: nosniff` });
  }
  if (enabled.has('dast-missing-hsts') && ex.request.url.toLowerCase().startsWith('https:') && !h['strict-transport-security']) {
    hits.push({ rule: 'dast-missing-hsts', scope: 'site', subject: 'strict-transport-security', evidence: `${line} without Strict-Transport-Security` });
  }
  return hits;
}

interface Cookie {
  name: string;
  value: string;
  attrs: Map<string, string>;
}

export function parseSetCookie(header: string): Cookie | null {
  const [pair, ...rest] = header.split(';');
  const eq = pair!.indexOf('=');
  if (eq <= 0) return null;
  const attrs = new Map<string, string>();
  for (const part of rest) {
    const i = part.indexOf('=');
    const key = (i < 0 ? part : part.slice(0, i)).trim().toLowerCase();
    if (key) attrs.set(key, i < 0 ? '' : part.slice(i + 1).trim());
  }
  return { name: pair!.slice(0, eq).trim(), value: pair!.slice(eq + 1).trim(), attrs };
}

function cookieFlags(ex: HttpExchange): PassiveHit[] {
  const https = ex.request.url.toLowerCase().startsWith('https:');
  const hits: PassiveHit[] = [];
  for (const header of ex.setCookies) {
    const c = parseSetCookie(header);
    if (!c) continue;
    // Deleting a cookie exposes nothing.
    const maxAge = c.attrs.get('max-age');
    const expires = c.attrs.get('expires');
    if (c.value === '' || (maxAge !== undefined && Number(maxAge) <= 0) || (expires !== undefined && Date.parse(expires) < Date.now())) continue;
    const missing: string[] = [];
    if (!c.attrs.has('httponly')) missing.push('HttpOnly');
    const sameSite = (c.attrs.get('samesite') ?? '').toLowerCase();
    if (sameSite !== 'lax' && sameSite !== 'strict') missing.push(sameSite === 'none' ? 'SameSite (None)' : 'SameSite');
    if (https && !c.attrs.has('secure')) missing.push('Secure');
    if (missing.length === 0) continue;
    const attrs = header.split(';').slice(1).map((s) => s.trim()).filter(Boolean).join('; ');
    hits.push({ rule: 'dast-cookie-flags', scope: 'site', subject: c.name, evidence: `Set-Cookie: ${c.name}=…${attrs ? `; ${attrs}` : ''} — missing ${missing.join(', ')}` });
  }
  return hits;
}

function cors(ex: HttpExchange): PassiveHit[] {
  const allowOrigin = (ex.headers['access-control-allow-origin'] ?? '').trim();
  const credentials = (ex.headers['access-control-allow-credentials'] ?? '').trim().toLowerCase() === 'true';
  if (!credentials) return [];
  const sent = ex.request.headers.origin;
  if (sent && allowOrigin === sent) return [{ rule: 'dast-cors-misconfig', scope: 'page', evidence: `Origin: ${sent} echoed in Access-Control-Allow-Origin with Access-Control-Allow-Credentials: true` }];
  if (allowOrigin === '*') return [{ rule: 'dast-cors-misconfig', scope: 'page', evidence: 'Access-Control-Allow-Origin: * with Access-Control-Allow-Credentials: true' }];
  return [];
}

const BANNER_HEADERS = ['server', 'x-powered-by', 'x-aspnet-version', 'x-aspnetmvc-version'];

function versionBanner(ex: HttpExchange): PassiveHit[] {
  const hits: PassiveHit[] = [];
  for (const name of BANNER_HEADERS) {
    const value = ex.headers[name];
    if (value && /\d+\.\d+/.test(value)) hits.push({ rule: 'dast-version-banner', scope: 'site', subject: name, evidence: `${name}: ${clip(value, 120)}` });
  }
  return hits;
}

const ERROR_PATTERNS: Array<[what: string, pattern: RegExp]> = [
  ['Node.js stack trace', /^[ \t]*at (?:async )?(?:new )?[\w$.<>[\] ]{1,120} \((?:file:\/\/|\/|[A-Za-z]:\\|node:)[^)\n]{1,300}:\d+:\d+\)/m],
  ['Node.js stack trace', /^[ \t]*at (?:file:\/\/|\/|node:)[^\s]{1,300}:\d+:\d+$/m],
  ['Java stack trace', /^[ \t]*at [\w$]+(?:\.[\w$<>]+)+\([\w$]+\.java:\d+\)/m],
  ['Java exception', /Exception in thread "[^"\n]{0,80}" [\w.$]+(?:Exception|Error)/],
  ['Python traceback', /Traceback \(most recent call last\):/],
  ['PHP error', /<b>(?:Fatal error|Parse error|Warning|Notice)<\/b>:[^\n]{1,300}? on line <b>\d+<\/b>/],
  ['PHP error', /PHP (?:Fatal error|Parse error|Warning):[^\n]{1,300}? on line \d+/],
  ['ASP.NET error page', /Server Error in '[^'\n]{0,80}' Application\./],
  ['.NET stack trace', /^[ \t]*at [\w.`<>]+\([^)\n]{0,200}\) in [^\n]{1,200}:line \d+/m],
  ['Ruby backtrace', /\.rb:\d+:in `[^'\n]{1,80}'/],
  ['Go panic', /^goroutine \d+ \[running\]:/m],
];

function errorDisclosure(ex: HttpExchange): PassiveHit[] {
  for (const [what, pattern] of ERROR_PATTERNS) {
    const m = pattern.exec(ex.body);
    if (m) return [{ rule: 'dast-error-disclosure', scope: 'page', evidence: `${what}: ${clip(m[0], 140)}`, proof: around(ex.body, m.index, m[0].length, 150) }];
  }
  return [];
}

const LISTING_PATTERNS: RegExp[] = [
  /<title>\s*Index of \/[^<]{0,200}<\/title>/i,
  /<h1>\s*Index of \/[^<]{0,200}<\/h1>/i,
  /<title>\s*Directory listing for \/[^<]{0,200}<\/title>/i,
  /\[To Parent Directory\]/i,
];

function directoryListing(ex: HttpExchange): PassiveHit[] {
  if (!ok(ex) || !isHtml(ex)) return [];
  for (const pattern of LISTING_PATTERNS) {
    const m = pattern.exec(ex.body);
    if (m) return [{ rule: 'dast-directory-listing', scope: 'page', evidence: `directory index: ${clip(m[0].replace(/<[^>]*>/g, ' '), 120)}`, proof: clip(ex.body, 300) }];
  }
  return [];
}

/** Everything the enabled passive rules see in one response. */
export function passiveHits(ex: HttpExchange, enabled: Set<string>): PassiveHit[] {
  const hits = missingHeaders(ex, enabled);
  if (enabled.has('dast-cookie-flags')) hits.push(...cookieFlags(ex));
  if (enabled.has('dast-cors-misconfig')) hits.push(...cors(ex));
  if (enabled.has('dast-version-banner')) hits.push(...versionBanner(ex));
  if (enabled.has('dast-error-disclosure')) hits.push(...errorDisclosure(ex));
  if (enabled.has('dast-directory-listing')) hits.push(...directoryListing(ex));
  return hits;
}
