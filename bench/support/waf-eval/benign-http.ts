// What a browser (or an API client) puts around a benign text: the header set of a real browser
// family, cookies of the kind the site sets, and the body encodings browsers use (form, multipart).
// The header values are those current browsers send; nothing here looks at the text itself.
import type { Rng } from './benign-rng.ts';

export interface Browser {
  family: 'chrome' | 'edge' | 'firefox' | 'safari' | 'samsung';
  ua: string;
  /** `sec-ch-ua-platform` for Chromium browsers. */
  platform: string;
  mobile: boolean;
  /** Chromium major version, for `sec-ch-ua`. */
  major?: number;
}

const BROWSERS: readonly Browser[] = [
  { family: 'chrome', platform: 'Windows', mobile: false, major: 124, ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36' },
  { family: 'chrome', platform: 'Windows', mobile: false, major: 126, ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36' },
  { family: 'chrome', platform: 'macOS', mobile: false, major: 125, ua: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36' },
  { family: 'chrome', platform: 'Linux', mobile: false, major: 124, ua: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36' },
  { family: 'chrome', platform: 'Android', mobile: true, major: 125, ua: 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Mobile Safari/537.36' },
  { family: 'edge', platform: 'Windows', mobile: false, major: 125, ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36 Edg/125.0.0.0' },
  { family: 'firefox', platform: 'Windows', mobile: false, ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:126.0) Gecko/20100101 Firefox/126.0' },
  { family: 'firefox', platform: 'macOS', mobile: false, ua: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:125.0) Gecko/20100101 Firefox/125.0' },
  { family: 'firefox', platform: 'Linux', mobile: false, ua: 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0' },
  { family: 'safari', platform: 'macOS', mobile: false, ua: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15' },
  { family: 'safari', platform: 'iOS', mobile: true, ua: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1' },
  { family: 'safari', platform: 'iOS', mobile: true, ua: 'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1' },
  { family: 'samsung', platform: 'Android', mobile: true, major: 121, ua: 'Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36' },
];

/** Non-browser clients that call JSON and form APIs. */
export const API_CLIENTS: readonly string[] = [
  'python-requests/2.32.3',
  'axios/1.7.2',
  'okhttp/4.12.0',
  'curl/8.7.1',
  'PostmanRuntime/7.39.0',
  'Go-http-client/2.0',
  'node-fetch/1.0 (+https://github.com/bitinn/node-fetch)',
];

const LANGUAGES: Record<string, readonly string[]> = {
  en: ['en-US,en;q=0.9', 'en-GB,en;q=0.9,en-US;q=0.8', 'en-US,en;q=0.5', 'en-CA,en-US;q=0.9,en;q=0.8'],
  de: ['de-DE,de;q=0.9,en-US;q=0.8,en;q=0.7', 'de,en-US;q=0.7,en;q=0.3'],
  es: ['es-ES,es;q=0.9', 'es-419,es;q=0.9,en;q=0.8'],
  fr: ['fr-FR,fr;q=0.9,en-US;q=0.8,en;q=0.7', 'fr,fr-FR;q=0.8,en-US;q=0.5,en;q=0.3'],
  it: ['it-IT,it;q=0.9,en-US;q=0.8,en;q=0.7'],
  ja: ['ja,en-US;q=0.9,en;q=0.8', 'ja-JP,ja;q=0.9'],
  ko: ['ko-KR,ko;q=0.9,en-US;q=0.8,en;q=0.7'],
  'pt-br': ['pt-BR,pt;q=0.9,en-US;q=0.8,en;q=0.7'],
  'zh-cn': ['zh-CN,zh;q=0.9,en;q=0.8'],
  'zh-tw': ['zh-TW,zh;q=0.9,en-US;q=0.8,en;q=0.7'],
};

const HTML_ACCEPT: Record<Browser['family'], string> = {
  chrome: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7',
  edge: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7',
  samsung: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7',
  firefox: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8',
  safari: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
};

const ENCODINGS: Record<Browser['family'], string> = {
  chrome: 'gzip, deflate, br, zstd',
  edge: 'gzip, deflate, br, zstd',
  samsung: 'gzip, deflate, br',
  firefox: 'gzip, deflate, br, zstd',
  safari: 'gzip, deflate, br',
};

export function pickBrowser(rng: Rng): Browser {
  // Roughly the market mix: Chromium browsers most, then Safari, then Firefox.
  return rng.weighted(BROWSERS.map((b) => [b, b.family === 'chrome' ? 3 : b.family === 'safari' ? 2 : 1] as const));
}

export function acceptLanguage(rng: Rng, lang = 'en'): string {
  return rng.pick(LANGUAGES[lang] ?? (LANGUAGES['en'] as readonly string[]));
}

/** How the request is made: a page load or form submit (`navigate`), or a script's fetch (`fetch`). */
export type Mode = 'navigate' | 'fetch';

export interface BrowserRequest {
  browser: Browser;
  mode: Mode;
  origin: string;
  /** Path and query of the page the request came from, on the same site; none for a typed URL. */
  refererPath?: string;
  /** A referer on another site (a search engine, a newsletter). */
  externalReferer?: string;
  lang?: string;
  cookie?: string;
  contentType?: string;
  /** Whether the method sends a body (adds `origin`, as browsers do for POST). */
  hasBody?: boolean;
  /** For fetch: the Accept header the script sets. */
  accept?: string;
  extra?: Record<string, string>;
}

/** The headers a browser sends, in lower case. */
export function browserHeaders(rng: Rng, r: BrowserRequest): Record<string, string> {
  const b = r.browser;
  const h: Record<string, string> = {};
  const chromium = b.major !== undefined;
  if (chromium) {
    const brand = b.family === 'edge' ? 'Microsoft Edge' : b.family === 'samsung' ? 'Samsung Internet' : 'Google Chrome';
    h['sec-ch-ua'] = `"${brand}";v="${b.major}", "Chromium";v="${b.major}", "Not-A.Brand";v="99"`;
    h['sec-ch-ua-mobile'] = b.mobile ? '?1' : '?0';
    h['sec-ch-ua-platform'] = `"${b.platform}"`;
  }
  if (r.mode === 'navigate') {
    if (r.hasBody) h['cache-control'] = 'max-age=0';
    h['upgrade-insecure-requests'] = '1';
  }
  if (r.hasBody) h['origin'] = r.origin;
  if (r.contentType) h['content-type'] = r.contentType;
  h['user-agent'] = b.ua;
  h['accept'] = r.mode === 'navigate' ? HTML_ACCEPT[b.family] : (r.accept ?? 'application/json, text/plain, */*');
  const site = r.refererPath !== undefined ? 'same-origin' : r.externalReferer ? 'cross-site' : 'none';
  h['sec-fetch-site'] = r.mode === 'fetch' && site === 'none' ? 'same-origin' : site;
  h['sec-fetch-mode'] = r.mode === 'navigate' ? 'navigate' : 'cors';
  if (r.mode === 'navigate') h['sec-fetch-user'] = '?1';
  h['sec-fetch-dest'] = r.mode === 'navigate' ? 'document' : 'empty';
  if (r.refererPath !== undefined) h['referer'] = r.origin + r.refererPath;
  else if (r.externalReferer) h['referer'] = r.externalReferer;
  h['accept-encoding'] = ENCODINGS[b.family];
  h['accept-language'] = acceptLanguage(rng, r.lang);
  if (r.cookie) h['cookie'] = r.cookie;
  if (chromium && r.mode === 'navigate' && rng.chance(0.3)) h['priority'] = 'u=0, i';
  return { ...h, ...r.extra };
}

/** Headers of a server-side API client (an SDK, curl, a job). */
export function apiHeaders(rng: Rng, contentType?: string, extra?: Record<string, string>): Record<string, string> {
  const h: Record<string, string> = { 'user-agent': rng.pick(API_CLIENTS), accept: 'application/json' };
  if (contentType) h['content-type'] = contentType;
  h['authorization'] = `Bearer ${rng.alnum(40)}`;
  return { ...h, ...extra };
}

/** Search engines and mail links a visit arrives from. */
export function externalReferer(rng: Rng): string {
  return rng.pick([
    'https://www.google.com/',
    'https://www.bing.com/',
    'https://duckduckgo.com/',
    'https://news.ycombinator.com/',
    'https://www.reddit.com/',
    'https://t.co/',
    'android-app://com.google.android.gm/',
  ]);
}

// --- Cookies --------------------------------------------------------------------------------------

export type CookieKind = 'shop' | 'phpbb' | 'discourse' | 'wordpress' | 'wordpress-admin' | 'dev' | 'docs' | 'files' | 'django' | 'search';

function analytics(rng: Rng): string[] {
  const out: string[] = [];
  const t = rng.unixTime();
  if (rng.chance(0.7)) out.push(`_ga=GA1.1.${rng.digits(10)}.${t}`);
  if (rng.chance(0.4)) out.push(`_ga_${rng.alnum(10).toUpperCase()}=GS1.1.${t}.${rng.range(1, 40)}.1.${t + rng.int(900)}.0.0.0`);
  if (rng.chance(0.3)) out.push(`_gid=GA1.2.${rng.digits(10)}.${t}`);
  if (rng.chance(0.25)) out.push(`_fbp=fb.1.${t}${rng.digits(3)}.${rng.digits(10)}`);
  if (rng.chance(0.2)) {
    // OneTrust's consent cookie: a form-encoded record inside a cookie value.
    const date = new Date(t * 1000).toUTCString().replace(/,/g, '').replace(/ /g, '+').replace(/:/g, '%3A');
    out.push(`OptanonConsent=isGpcEnabled=0&datestamp=${date}&version=202403.1.0&isIABGlobal=false&hosts=&landingPath=NotLandingPage&groups=C0001%3A1%2CC0002%3A${rng.int(2)}%2CC0004%3A${rng.int(2)}`);
  }
  if (rng.chance(0.2)) out.push(`cookieconsent_status=${rng.pick(['allow', 'dismiss', 'deny'])}`);
  return out;
}

/** A Cookie header of the kind the site sets: a session, preferences, and analytics. */
export function cookieHeader(rng: Rng, kind: CookieKind, prefs: [string, string][] = []): string {
  const c: string[] = [];
  const t = rng.unixTime();
  switch (kind) {
    case 'shop':
      c.push(`SID=${rng.uuid()}`, `cart_id=${rng.hex(24)}`);
      if (rng.chance(0.5)) c.push(`currency=USD`, `intl_splash=false`);
      break;
    case 'phpbb': {
      const p = `phpbb3_${rng.alnum(5).toLowerCase()}`;
      c.push(`${p}_u=${rng.range(2, 90000)}`, `${p}_k=`, `${p}_sid=${rng.hex(32)}`);
      if (rng.chance(0.3)) c.push('style_cookie=null');
      break;
    }
    case 'discourse':
      c.push(`_t=${rng.hex(32)}`, `_forum_session=${rng.alnum(120)}%3D%3D--${rng.hex(40)}`);
      break;
    case 'wordpress':
      if (rng.chance(0.4)) c.push(`comment_author_${rng.hex(32)}=${encodeURIComponent(rng.pick(FIRST_NAMES))}`);
      c.push('wordpress_test_cookie=WP%20Cookie%20check');
      break;
    case 'wordpress-admin': {
      const user = rng.pick(['admin', 'editor', 'jdoe', 'maria', 'docs-team']);
      c.push(
        `wordpress_logged_in_${rng.hex(32)}=${user}%7C${t + 1209600}%7C${rng.alnum(43)}%7C${rng.hex(64)}`,
        `wp-settings-1=libraryContent%3Dbrowse%26editor%3D${rng.pick(['tinymce', 'html'])}%26mfold%3Do`,
        `wp-settings-time-1=${t}`,
        'wordpress_test_cookie=WP%20Cookie%20check',
      );
      break;
    }
    case 'dev':
      c.push(`prov=${rng.uuid()}`);
      if (rng.chance(0.5)) c.push(`theme=${rng.pick(['dark', 'light', 'system'])}`);
      if (rng.chance(0.4)) c.push(`OptanonAlertBoxClosed=${new Date(t * 1000).toISOString()}`);
      break;
    case 'docs':
      if (rng.chance(0.6)) c.push(`theme=${rng.pick(['dark', 'light'])}`);
      break;
    case 'files':
      c.push(`PHPSESSID=${rng.alnum(26).toLowerCase()}`);
      if (rng.chance(0.5)) c.push(`fm_view=${rng.pick(['list', 'grid'])}`, `fm_sort=${rng.pick(['name', 'mtime', 'size'])}%3A${rng.pick(['asc', 'desc'])}`);
      break;
    case 'django':
      c.push(`csrftoken=${rng.alnum(32)}`, `sessionid=${rng.alnum(32).toLowerCase()}`);
      break;
    case 'search':
      c.push(`sid=${rng.alnum(22)}`);
      if (rng.chance(0.5)) c.push(`safesearch=${rng.pick(['moderate', 'strict', 'off'])}`);
      break;
  }
  for (const [k, v] of prefs) c.push(`${k}=${v}`);
  c.push(...analytics(rng));
  return rng.chance(0.5) ? c.join('; ') : rng.shuffled(c).join('; ');
}

// --- People (form filler, not under measurement) -------------------------------------------------

const FIRST_NAMES = ['James', 'Mary', 'Robert', 'Patricia', 'John', 'Jennifer', 'Michael', 'Linda', 'David', 'Elizabeth', 'William', 'Barbara', 'Richard', 'Susan', 'José', 'María', 'Wei', 'Yuki', 'Aisha', 'Olga', 'Liam', 'Chloé', 'Søren', 'Priya', "Conan", 'Zoë', 'Mohammed', 'Anna', 'Lucas', 'Emma'];
const LAST_NAMES = ['Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez', 'Hernández', "O'Brien", 'Nguyen', 'Kim', 'Müller', 'Rossi', 'Tanaka', 'Kowalski', 'Dubois', 'Silva', 'Van der Berg', 'Andersson', 'Patel', 'Cohen', 'Lee'];
const MAIL_DOMAINS = ['example.com', 'example.org', 'mail.example.net', 'example.co.uk'];

export interface Person {
  first: string;
  last: string;
  email: string;
  phone: string;
}

export function person(rng: Rng): Person {
  const first = rng.pick(FIRST_NAMES);
  const last = rng.pick(LAST_NAMES);
  const local = `${first}.${last}`
    .normalize('NFKD')
    .replace(/[^A-Za-z.]/g, '')
    .toLowerCase();
  const email = `${rng.chance(0.3) ? local + rng.range(1, 99) : local}${rng.chance(0.15) ? '+shop' : ''}@${rng.pick(MAIL_DOMAINS)}`;
  const phone = rng.pick([`(${rng.digits(3)}) 555-01${rng.int(10)}${rng.int(10)}`, `${rng.digits(3)}-555-01${rng.int(10)}${rng.int(10)}`, `+1 ${rng.digits(3)} 555 01${rng.int(10)}${rng.int(10)}`]);
  return { first, last, email, phone };
}

// --- Body encodings -------------------------------------------------------------------------------

/** application/x-www-form-urlencoded as a browser submits a form: textarea newlines become CRLF. */
export function formEncode(fields: readonly (readonly [string, string])[]): string {
  const p = new URLSearchParams();
  for (const [k, v] of fields) p.append(k, v.replace(/\r?\n/g, '\r\n'));
  return p.toString();
}

/** A query string as a GET form (URLSearchParams, `+` for spaces) or a script (encodeURIComponent) builds it. */
export function queryEncode(fields: readonly (readonly [string, string])[], style: 'form' | 'script' = 'form'): string {
  if (style === 'form') {
    const p = new URLSearchParams();
    for (const [k, v] of fields) p.append(k, v);
    return p.toString();
  }
  return fields.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

export type Part = { name: string; value: string } | { name: string; filename: string; type: string; content: string };

/** How browsers escape a field or file name inside Content-Disposition (HTML's multipart rules). */
function dispositionName(name: string): string {
  return name.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** multipart/form-data with the boundary style of the browser family. */
export function multipart(rng: Rng, browser: Browser, parts: readonly Part[]): { body: string; contentType: string } {
  const boundary = browser.family === 'firefox' ? `----geckoformboundary${rng.hex(32)}` : `----WebKitFormBoundary${rng.alnum(16)}`;
  let body = '';
  for (const part of parts) {
    body += `--${boundary}\r\n`;
    if ('filename' in part) {
      body += `Content-Disposition: form-data; name="${dispositionName(part.name)}"; filename="${dispositionName(part.filename)}"\r\n`;
      body += `Content-Type: ${part.type}\r\n\r\n${part.content}\r\n`;
    } else {
      body += `Content-Disposition: form-data; name="${dispositionName(part.name)}"\r\n\r\n${part.value.replace(/\r?\n/g, '\r\n')}\r\n`;
    }
  }
  body += `--${boundary}--\r\n`;
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

export function xmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

/** Text as a rich-text editor stores it inside HTML elements. */
export function htmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A path segment as a site's link builder encodes it. */
export const seg = encodeURIComponent;
