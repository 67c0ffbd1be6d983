// Search-box traffic from first20hours/google-10000-english: one-to-three-word queries typed into
// site search, autocomplete prefixes, filter values, campaign tags, tag pages, search APIs, recent
// searches kept in a cookie, and passphrase logins.
import { Deck, Rng } from './benign-rng.ts';
import { Mirror } from './benign-mirror.ts';
import { type Draft, generate, type Template } from './benign-gen.ts';
import { browserHeaders, cookieHeader, externalReferer, formEncode, pickBrowser, queryEncode, seg } from './benign-http.ts';
import type { EvalRequest } from './types.ts';

const REPO = 'first20hours/google-10000-english';
const SEARCH = 'https://search.example.com';
const SHOP = 'https://shop.example.com';
const BLOG = 'https://blog.example.net';

interface Pools {
  common: Deck<string>;
  all: Deck<string>;
}

function load(mirrors: string, rng: Rng): Pools | null {
  const mirror = new Mirror(mirrors, REPO);
  if (!mirror.present) return null;
  const words = (text: string | null): string[] => (text ?? '').split(/\r?\n/).map((w) => w.trim()).filter((w) => w !== '');
  const common = words(mirror.readOne('google-10000-english.txt'));
  const all = [...new Set([...common, ...words(mirror.readOne('20k.txt'))])];
  if (all.length === 0) return null;
  return { common: new Deck(rng, common.length ? common : all), all: new Deck(rng, all) };
}

/** A query of one to three words, mostly common ones. */
function phrase(rng: Rng, p: Pools, max = 3): string {
  const n = rng.weighted([[1, 3], [2, 4], [3, 2]] as const);
  return Array.from({ length: Math.min(n, max) }, () => (rng.chance(0.7) ? p.common : p.all).draw()).join(' ');
}

function templates(p: Pools): Template[] {
  const searchBox = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const q = phrase(rng, p);
    const style = rng.int(6);
    const page = (): [string, string][] => (rng.chance(0.3) ? [['page', String(rng.range(2, 12))]] : []);
    const target = [
      () => `/search?${queryEncode([['q', q], ...page()])}`,
      () => `/s?${queryEncode([['k', q], ['ref', rng.pick(['nb_sb_noss', 'nb_sb_noss_2', 'sr_pg_2'])]])}`,
      () => `/?${queryEncode([['s', q]])}`,
      () => `/search?${queryEncode([['query', q], ['type', rng.pick(['all', 'posts', 'users', 'products'])], ...page()])}`,
      () => `/results?${queryEncode([['search_query', q]])}`,
      () => `/search?${queryEncode([['keywords', q], ['sort', rng.pick(['relevance', 'newest', 'price-asc', 'rating'])], ['category', rng.pick(['all', 'books', 'electronics', 'home'])]])}`,
    ][style]!();
    const origin = rng.pick([SEARCH, SHOP, BLOG]);
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin, refererPath: rng.chance(0.6) ? (rng.chance(0.5) ? '/' : `/search?${queryEncode([['q', phrase(rng, p, 2)]])}`) : undefined, cookie: cookieHeader(rng, 'search') });
    return { method: 'GET', target, headers, placement: 'query', encoding: 'plain' };
  };

  // Suggestions fetched as the user types: the last word is cut where typing stopped.
  const autocomplete = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const words = phrase(rng, p).split(' ');
    const last = words.pop() as string;
    const typed = [...words, last.slice(0, rng.range(1, last.length))].join(' ');
    const target = rng.pick([
      () => `/complete/search?${queryEncode([['client', rng.pick(['firefox', 'chrome', 'safari'])], ['q', typed]], 'script')}`,
      () => `/api/suggest?${queryEncode([['term', typed], ['limit', '8']], 'script')}`,
      () => `/autocomplete.json?${queryEncode([['prefix', typed], ['_', String(rng.unixTime()) + rng.digits(3)]], 'script')}`,
    ])();
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: rng.pick([SEARCH, SHOP]), refererPath: '/', cookie: cookieHeader(rng, 'search'), accept: 'application/json' });
    return { method: 'GET', target, headers, placement: 'query', encoding: 'plain' };
  };

  const filterQuery = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const fields: [string, string][] = [['category', p.common.draw()]];
    if (rng.chance(0.6)) fields.push(['color', p.common.draw()]);
    if (rng.chance(0.4)) fields.push(['brand', p.all.draw()]);
    if (rng.chance(0.4)) fields.push(['price_min', String(rng.range(0, 50))], ['price_max', String(rng.range(60, 2000))]);
    fields.push(['sort', rng.pick(['price_asc', 'price_desc', 'newest', 'bestselling'])], ['page', String(rng.range(1, 20))], ['per_page', rng.pick(['24', '48', '96'])]);
    const target = `/products?${queryEncode(fields)}`;
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: SHOP, refererPath: '/products', cookie: cookieHeader(rng, 'shop') });
    return { method: 'GET', target, headers, placement: 'query', encoding: 'plain' };
  };

  // A landing page opened from an ad or a newsletter, campaign words in the utm parameters.
  const utmLanding = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const slug = phrase(rng, p).split(' ').map(seg).join('-');
    const fields: [string, string][] = [
      ['utm_source', rng.pick(['google', 'newsletter', 'facebook', 'bing', 'twitter', 'partner'])],
      ['utm_medium', rng.pick(['cpc', 'email', 'social', 'referral', 'display'])],
      ['utm_campaign', phrase(rng, p).replace(/ /g, '_')],
    ];
    if (rng.chance(0.6)) fields.push(['utm_term', phrase(rng, p)]);
    if (rng.chance(0.4)) fields.push(['utm_content', p.common.draw()]);
    if (rng.chance(0.3)) fields.push([rng.pick(['gclid', 'fbclid', 'msclkid']), rng.alnum(rng.range(40, 90))]);
    const target = `/${rng.pick(['landing', 'promo', 'blog', 'deals'])}/${slug}?${queryEncode(fields)}`;
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: rng.pick([SHOP, BLOG]), externalReferer: externalReferer(rng) });
    return { method: 'GET', target, headers, placement: 'query', encoding: 'plain' };
  };

  const tagPath = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const words = phrase(rng, p).split(' ');
    const target = rng.pick([
      () => `/tag/${seg(words.join('-'))}/`,
      () => `/search/${words.map(seg).join('%20')}`,
      () => `/wiki/${seg(words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('_'))}`,
      () => `/category/${words.map(seg).join('/')}/`,
      () => `/topics/${seg(words.join('-'))}?page=${rng.range(1, 6)}`,
    ])();
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: BLOG, refererPath: rng.chance(0.5) ? '/' : undefined, cookie: rng.chance(0.5) ? cookieHeader(rng, 'search') : undefined });
    return { method: 'GET', target, headers, placement: 'path', encoding: 'plain' };
  };

  const searchApi = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const body = JSON.stringify({
      query: phrase(rng, p),
      filters: { category: [p.common.draw()], inStock: rng.chance(0.5), tags: rng.chance(0.5) ? [p.common.draw(), p.all.draw()] : [] },
      sort: { field: rng.pick(['relevance', 'price', 'createdAt']), order: rng.pick(['asc', 'desc']) },
      page: rng.range(1, 10),
      size: rng.pick([10, 20, 24, 50]),
      highlight: { pre: '<em>', post: '</em>' },
    });
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: SHOP, refererPath: `/search?${queryEncode([['q', phrase(rng, p)]])}`, cookie: cookieHeader(rng, 'shop'), contentType: 'application/json', hasBody: true });
    return { method: 'POST', target: '/api/search', headers, body, placement: 'json', encoding: 'plain' };
  };

  // Sites keep the last searches in a cookie: JSON, percent-encoded.
  const recentSearches = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const recent = Array.from({ length: rng.range(1, 5) }, () => phrase(rng, p));
    const cookie = cookieHeader(rng, 'search', [['recent_searches', encodeURIComponent(JSON.stringify(recent))]]);
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: SEARCH, refererPath: rng.chance(0.5) ? '/' : undefined, cookie });
    return { method: 'GET', target: rng.pick(['/', '/search', '/account/history']), headers, placement: 'header', encoding: 'url' };
  };

  // Logins with passphrases made of dictionary words, and word-based user names.
  const loginForm = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const user = `${p.common.draw()}${rng.chance(0.5) ? rng.range(1, 2025) : ''}`;
    const pass = Array.from({ length: rng.range(2, 4) }, () => p.all.draw()).join(rng.pick([' ', '-', '', '.']));
    const body = formEncode([
      ['csrf_token', rng.alnum(43)],
      [rng.pick(['username', 'login', 'email']), user],
      ['password', pass],
      ...(rng.chance(0.5) ? [['remember', 'on'] as [string, string]] : []),
      ['next', `/search?${queryEncode([['q', phrase(rng, p, 2)]])}`],
    ]);
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: rng.pick([SHOP, BLOG, SEARCH]), refererPath: '/login', cookie: cookieHeader(rng, 'search'), contentType: 'application/x-www-form-urlencoded', hasBody: true });
    return { method: 'POST', target: '/login', headers, body, placement: 'form', encoding: 'plain' };
  };

  return [
    { what: 'search-box', weight: 4, make: searchBox },
    { what: 'autocomplete', weight: 2, make: autocomplete },
    { what: 'filter-query', weight: 1, make: filterQuery },
    { what: 'utm-landing', weight: 1.5, make: utmLanding },
    { what: 'tag-path', weight: 1.5, make: tagPath },
    { what: 'search-api-json', weight: 1.5, make: searchApi },
    { what: 'recent-searches-cookie', weight: 0.7, make: recentSearches },
    { what: 'login-form', weight: 1, make: loginForm },
  ];
}

export function wordRequests(mirrors: string, count: number): EvalRequest[] {
  const rng = new Rng(`benign:${REPO}`);
  const pools = load(mirrors, rng);
  return pools ? generate(REPO, rng, templates(pools), count) : [];
}
