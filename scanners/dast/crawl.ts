// Breadth-first crawler: from the start URL it follows `<a>/<area>/<iframe>/<frame>` links, submits
// forms (GET, and POST urlencoded) with their default or plausible values, and follows redirects,
// level by level up to maxDepth (the start page is depth 0). Only in-scope URLs are requested (the
// check is made before sending, so nothing out of scope ever leaves). Requests are deduplicated by
// method + origin + path + sorted parameter names: `/p?id=1` and `/p?id=2` are one page. What it
// fetched doubles as the baseline of every later check, so the crawl's responses are kept.
import type { HttpExchange, ScanRequest } from '../web/http.ts';
import { rawTextAfter, scanTags } from './html.ts';
import { BudgetStop, runPool, type Prober } from './probe.ts';

export type Param = [name: string, value: string];

export interface CrawlRequest {
  method: 'GET' | 'POST';
  /** GET: origin + path + query built from `params`. POST: the form action, its own query kept. */
  url: string;
  params: Param[];
  in: 'query' | 'body';
  depth: number;
}

export interface CrawledPage {
  request: CrawlRequest;
  exchange: HttpExchange;
}

export interface CrawlOptions {
  maxDepth: number;
  /** Pages fetched at most (keeps part of the budget for the checks). */
  maxPages: number;
  concurrency: number;
  /** Added to every crawl request (the CORS check's probe Origin). */
  headers: Record<string, string>;
  inScope: (url: string) => boolean;
  onLevel?: (depth: number) => void;
}

export interface CrawlResult {
  pages: CrawledPage[];
  /** Distinct out-of-scope URLs seen in links, forms or redirects (not requested). */
  outOfScope: number;
  /** In-scope URLs found on pages at maxDepth (not requested). */
  beyondDepth: number;
  pageCapHit: boolean;
  /** Multipart forms and logout links, not submitted/followed. */
  skipped: number;
}

export interface FormSpec {
  action: string;
  method: 'GET' | 'POST';
  multipart: boolean;
  fields: Param[];
}

// Static assets: nothing to crawl or inject there, and they would eat the budget.
const STATIC = /\.(?:css|js|mjs|map|png|jpe?g|gif|svg|ico|webp|avif|bmp|woff2?|ttf|eot|otf|mp[34]|webm|ogg|wav|pdf|zip|gz|tgz|tar|rar|7z|exe|dmg|iso|apk)$/i;
// Following these would end an authenticated session halfway through the scan.
const LOGOUT = /log-?out|sign-?out/i;

export function encodeParams(params: readonly Param[]): string {
  return params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

export function parseParams(query: string): Param[] {
  const out: Param[] = [];
  for (const part of query.replace(/^\?/, '').split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const dec = (s: string): string => {
      try {
        return decodeURIComponent(s.replace(/\+/g, ' '));
      } catch {
        return s;
      }
    };
    out.push(eq < 0 ? [dec(part), ''] : [dec(part.slice(0, eq)), dec(part.slice(eq + 1))]);
  }
  return out;
}

/** Origin + path of a URL (no query, no fragment). */
export function baseOf(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}

export function getUrl(base: string, params: readonly Param[]): string {
  return params.length > 0 ? `${base}?${encodeParams(params)}` : base;
}

export function dedupeKey(req: Pick<CrawlRequest, 'method' | 'url' | 'params' | 'in'>): string {
  const u = new URL(req.url);
  const names = (ps: readonly Param[]): string => [...new Set(ps.map(([k]) => k))].sort().join('&');
  const query = req.in === 'query' ? req.params : parseParams(u.search);
  const body = req.in === 'body' ? names(req.params) : '';
  return `${req.method} ${u.origin}${u.pathname} ?${names(query)} ${body}`;
}

function resolveHttp(href: string, base: string): string | null {
  const trimmed = href.trim();
  if (trimmed === '' || trimmed.startsWith('#')) return null;
  try {
    const u = new URL(trimmed, base);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    u.hash = '';
    return u.toString();
  } catch {
    return null;
  }
}

// Values for empty fields, by input type, so a form submission looks like a person's.
function defaultValue(type: string, name: string): string {
  if (type === 'email' || /e-?mail/i.test(name)) return 'aegis@example.com';
  if (type === 'number' || type === 'range') return '1';
  if (type === 'tel') return '5550100';
  if (type === 'url') return 'https://example.com/';
  if (type === 'date') return '2024-01-01';
  if (type === 'password') return 'Aegis-Scan-1';
  return 'aegis';
}

/** Links and forms of an HTML page, resolved against the page URL (or its `<base href>`). */
export function extractLinks(html: string, pageUrl: string): { links: string[]; forms: FormSpec[] } {
  let base = pageUrl;
  const links: string[] = [];
  const forms: FormSpec[] = [];
  let form: FormSpec | null = null;
  let submitTaken = false;
  const radios = new Map<string, { index: number; checked: boolean }>();
  let select: { name: string; value: string | null; first: string | null } | null = null;
  const endSelect = (): void => {
    if (select && form) form.fields.push([select.name, select.value ?? select.first ?? '']);
    select = null;
  };
  for (const tag of scanTags(html)) {
    const a = tag.attrs;
    if (tag.closing) {
      if (tag.name === 'select') endSelect();
      if (tag.name === 'form' && form) {
        endSelect();
        forms.push(form);
        form = null;
      }
      continue;
    }
    switch (tag.name) {
      case 'base': {
        const href = a.get('href');
        const resolved = href === undefined ? null : resolveHttp(href, pageUrl);
        if (resolved) base = resolved;
        break;
      }
      case 'a':
      case 'area': {
        const href = a.get('href');
        const resolved = href === undefined ? null : resolveHttp(href, base);
        if (resolved) links.push(resolved);
        break;
      }
      case 'iframe':
      case 'frame': {
        const src = a.get('src');
        const resolved = src === undefined ? null : resolveHttp(src, base);
        if (resolved) links.push(resolved);
        break;
      }
      case 'form': {
        if (form) forms.push(form);
        const action = resolveHttp(a.get('action') || pageUrl, base) ?? pageUrl;
        const method = (a.get('method') ?? 'get').toUpperCase() === 'POST' ? 'POST' : 'GET';
        form = { action, method, multipart: (a.get('enctype') ?? '').toLowerCase().includes('multipart'), fields: [] };
        submitTaken = false;
        radios.clear();
        break;
      }
      case 'input': {
        const name = a.get('name');
        if (!form || !name || a.has('disabled')) break;
        const type = (a.get('type') ?? 'text').toLowerCase();
        const value = a.get('value');
        if (type === 'file' || type === 'reset' || type === 'button') break;
        if (type === 'submit' || type === 'image') {
          // A browser sends the one button clicked: the first named one.
          if (!submitTaken) form.fields.push([name, value ?? '']);
          submitTaken = true;
        } else if (type === 'checkbox') {
          if (a.has('checked')) form.fields.push([name, value ?? 'on']);
        } else if (type === 'radio') {
          // The checked one of the group, else the first (a person would pick one).
          const seen = radios.get(name);
          if (!seen) {
            radios.set(name, { index: form.fields.length, checked: a.has('checked') });
            form.fields.push([name, value ?? 'on']);
          } else if (!seen.checked && a.has('checked')) {
            form.fields[seen.index] = [name, value ?? 'on'];
            seen.checked = true;
          }
        } else {
          form.fields.push([name, value || defaultValue(type, name)]);
        }
        break;
      }
      case 'textarea': {
        const name = a.get('name');
        if (form && name) form.fields.push([name, rawTextAfter(html, tag).trim() || 'aegis']);
        break;
      }
      case 'select': {
        endSelect();
        const name = a.get('name');
        if (form && name) select = { name, value: null, first: null };
        break;
      }
      case 'option': {
        if (!select) break;
        const s: { name: string; value: string | null; first: string | null } = select;
        const value = a.get('value') ?? '';
        s.first ??= value;
        if (a.has('selected') && s.value === null) s.value = value;
        break;
      }
    }
  }
  if (form) {
    endSelect();
    forms.push(form);
  }
  return { links, forms };
}

export function linkRequest(url: string, depth: number): CrawlRequest {
  const u = new URL(url);
  const params = parseParams(u.search);
  return { method: 'GET', url: getUrl(`${u.origin}${u.pathname}`, params), params, in: 'query', depth };
}

function formRequest(form: FormSpec, depth: number): CrawlRequest {
  if (form.method === 'GET') {
    // Browsers replace the action's query with the form's fields on GET.
    return { method: 'GET', url: getUrl(baseOf(form.action), form.fields), params: form.fields, in: 'query', depth };
  }
  return { method: 'POST', url: form.action, params: form.fields, in: 'body', depth };
}

/** The request as the crawl sends it (and as baselines are fetched again on a recheck). */
export function crawlRequestToScan(req: Pick<CrawlRequest, 'method' | 'url' | 'params' | 'in'>): ScanRequest {
  if (req.in === 'body') return { method: req.method, url: req.url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: encodeParams(req.params) };
  return { method: req.method, url: getUrl(baseOf(req.url), req.params) };
}

function isHtml(ex: HttpExchange): boolean {
  const type = ex.headers['content-type'] ?? '';
  return /html/i.test(type) || (type === '' && /^\s*<(?:!doctype|html)/i.test(ex.body));
}

export async function crawl(start: string, prober: Prober, options: CrawlOptions): Promise<CrawlResult> {
  const seen = new Set<string>();
  const outOfScope = new Set<string>();
  const pages: CrawledPage[] = [];
  let beyondDepth = 0;
  let skipped = 0;
  let pageCapHit = false;

  // Returns the request if it is new, in scope and worth fetching; records why not otherwise.
  const admit = (req: CrawlRequest): CrawlRequest | null => {
    if (!options.inScope(req.url)) {
      outOfScope.add(baseOf(req.url));
      return null;
    }
    const path = new URL(req.url).pathname;
    if (STATIC.test(path)) return null;
    if (LOGOUT.test(path)) {
      skipped++;
      return null;
    }
    const key = dedupeKey(req);
    if (seen.has(key)) return null;
    seen.add(key);
    if (req.depth > options.maxDepth) {
      beyondDepth++;
      return null;
    }
    return req;
  };

  let level: CrawlRequest[] = [];
  const first = admit(linkRequest(start, 0));
  if (first) level.push(first);
  for (let depth = 0; level.length > 0; depth++) {
    options.onLevel?.(depth);
    if (pages.length + level.length > options.maxPages) {
      pageCapHit = true;
      level = level.slice(0, Math.max(0, options.maxPages - pages.length));
    }
    const results: Array<CrawledPage | null> = new Array(level.length).fill(null);
    let budgetHit = false;
    try {
      await runPool(level, options.concurrency, async (req, i) => {
        const sent = crawlRequestToScan(req);
        // Extra headers (a foreign Origin) on GETs only: on a form POST it could trip CSRF checks
        // and make the baseline differ from what the probes get.
        const exchange = await prober.send(req.method === 'GET' ? { ...sent, headers: { ...options.headers, ...sent.headers } } : sent);
        if (exchange) results[i] = { request: req, exchange };
      });
    } catch (err) {
      // Keep what this level fetched before the budget ran out; the caller sees prober.budgetHit.
      if (!(err instanceof BudgetStop)) throw err;
      budgetHit = true;
    }
    // Collected in queue order, not completion order, so a crawl is reproducible.
    const next: CrawlRequest[] = [];
    for (const page of results) {
      if (!page) continue;
      pages.push(page);
      const ex = page.exchange;
      const location = ex.headers.location;
      if (ex.status >= 300 && ex.status < 400 && location) {
        const target = resolveHttp(location, ex.request.url);
        const admitted = target ? admit(linkRequest(target, depth + 1)) : null;
        if (admitted) next.push(admitted);
      }
      if (!isHtml(ex)) continue;
      const { links, forms } = extractLinks(ex.body, ex.request.url);
      for (const link of links) {
        const admitted = admit(linkRequest(link, depth + 1));
        if (admitted) next.push(admitted);
      }
      for (const form of forms) {
        if (form.multipart) {
          skipped++;
          continue;
        }
        const admitted = admit(formRequest(form, depth + 1));
        if (admitted) next.push(admitted);
      }
    }
    if (pageCapHit || budgetHit) break;
    level = next;
  }
  return { pages, outOfScope: outOfScope.size, beyondDepth, pageCapHit, skipped };
}
