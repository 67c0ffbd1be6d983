// Multilingual docs-site and CMS traffic from expressjs/expressjs.com: its pages in ten languages
// (titles, headings, paragraphs with MDX markup, API examples) saved from a CMS admin, translated
// in a translation tool, searched, linked by slug, and its code posted to snippet and sandbox APIs.
import { Deck, Rng } from './benign-rng.ts';
import { Mirror } from './benign-mirror.ts';
import { type Draft, generate, type Template } from './benign-gen.ts';
import { browserHeaders, cookieHeader, externalReferer, formEncode, multipart, pickBrowser, queryEncode, seg, xmlEscape } from './benign-http.ts';
import { type CodeBlock, distinct, parseMarkdown, sentences, slugify } from './benign-text.ts';
import type { EvalRequest } from './types.ts';

const REPO = 'expressjs/expressjs.com';
const DOCS = 'https://docs.example.org';
const CMS = 'https://cms.example.org';
const TRANSLATE = 'https://translate.example.org';
const SNIPPETS = 'https://snippets.example.dev';
const LANGS = ['de', 'en', 'es', 'fr', 'it', 'ja', 'ko', 'pt-br', 'zh-cn', 'zh-tw'];

interface Page {
  lang: string;
  /** The site route the file is served at (`/ja/5x/guide/routing`). */
  route: string;
  title: string;
  description: string;
  text: string;
}

interface Piece {
  lang: string;
  route: string;
  text: string;
}

interface Pools {
  pages: Deck<Page>;
  paragraphs: Deck<Piece>;
  headings: Deck<Piece>;
  sentences: Deck<Piece>;
  inline: Deck<Piece>;
  ui: Deck<Piece>;
  code: Deck<CodeBlock & { lang: string }>;
}

function routeOf(path: string): { lang: string; route: string } {
  const rel = path.replace(/^src\/content\/(docs|pages|api)\//, '').replace(/^src\/content\//, '').replace(/(\/index)?\.mdx?$/, '');
  const first = rel.split('/')[0] ?? '';
  const lang = LANGS.includes(first) ? first : 'en';
  return { lang, route: LANGS.includes(first) ? `/${rel}` : `/en/${rel}` };
}

/** Flattens a UI-strings JSON file into its string values. */
function uiStrings(json: string): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  try {
    walk(JSON.parse(json));
  } catch {
    // A file that is not JSON gives no strings.
  }
  return out;
}

/** Translations leave some text (code, names, untranslated paragraphs) the same in every language. */
const byText = (p: Piece): string => p.text;

function load(mirrors: string, rng: Rng): Pools | null {
  const mirror = new Mirror(mirrors, REPO);
  if (!mirror.present) return null;
  const files = mirror.read((p) => /^src\/content\/.*\.mdx?$/.test(p) || /^src\/i18n\/ui\/[a-z-]+\.json$/.test(p));
  const pages: Page[] = [];
  const paragraphs: Piece[] = [];
  const headings: Piece[] = [];
  const inline: Piece[] = [];
  const ui: Piece[] = [];
  const code: CodeBlock[] = [];
  for (const f of files) {
    if (f.path.endsWith('.json')) {
      const lang = (f.path.split('/').pop() as string).replace(/\.json$/, '');
      for (const text of uiStrings(f.text)) ui.push({ lang, route: `/${lang}/`, text });
      continue;
    }
    const { lang, route } = routeOf(f.path);
    const md = parseMarkdown(f.text);
    const title = md.title ?? md.headings[0] ?? route.split('/').pop() ?? 'Express';
    pages.push({ lang, route, title, description: md.description ?? '', text: f.text });
    for (const text of md.paragraphs) paragraphs.push({ lang, route, text });
    for (const text of md.headings) headings.push({ lang, route, text });
    for (const text of md.inlineCode) inline.push({ lang, route, text });
    code.push(...md.code);
  }
  if (pages.length === 0) return null;
  return {
    pages: new Deck(rng, pages),
    paragraphs: new Deck(rng, distinct(paragraphs, byText)),
    headings: new Deck(rng, distinct(headings, byText)),
    sentences: new Deck(
      rng,
      distinct(
        paragraphs.flatMap((p) => sentences(p.text).map((text) => ({ ...p, text }))),
        byText,
      ).filter((p) => p.text.length <= 200),
    ),
    inline: new Deck(rng, distinct(inline, byText)),
    ui: new Deck(rng, ui.length ? distinct(ui, byText) : [{ lang: 'en', route: '/en/', text: 'Express' }]),
    code: new Deck(rng, distinct(code, (c) => c.code)),
  };
}

/** A CMS section: a heading and the paragraphs and code that follow it in one page. */
function section(rng: Rng, p: Pools): { lang: string; route: string; title: string; content: string; excerpt: string } {
  const page = p.pages.draw();
  // Whole pages when small, otherwise a slice of consecutive lines starting at a heading.
  if (page.text.length < 20000 || rng.chance(0.2)) return { lang: page.lang, route: page.route, title: page.title, content: page.text, excerpt: page.description };
  const lines = page.text.split('\n');
  const starts = lines.flatMap((l, i) => (/^#{2,3}\s/.test(l) ? [i] : []));
  const start = starts.length ? rng.pick(starts) : 0;
  return { lang: page.lang, route: page.route, title: page.title, content: lines.slice(start, start + rng.range(20, 120)).join('\n'), excerpt: page.description };
}

function templates(p: Pools): Template[] {
  const cmsPageSave = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const s = section(rng, p);
    const id = rng.range(10, 4000);
    const body = JSON.stringify({ id, title: s.title, content: s.content, excerpt: s.excerpt, slug: slugify(s.title), status: rng.pick(['draft', 'publish', 'pending']), lang: s.lang, meta: { source_route: s.route, footnotes: '' } });
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: CMS, refererPath: `/wp-admin/post.php?post=${id}&action=edit&lang=${s.lang}`, lang: s.lang, cookie: cookieHeader(rng, 'wordpress-admin'), contentType: 'application/json', hasBody: true, extra: { 'x-wp-nonce': rng.hex(10), 'x-http-method-override': 'PUT' } });
    return { method: 'POST', target: `/wp-json/wp/v2/pages/${id}?_locale=user`, headers, body, placement: 'json', encoding: 'plain' };
  };

  const cmsAdminForm = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const s = section(rng, p);
    const id = rng.range(10, 4000);
    const body = formEncode([
      ['_wpnonce', rng.hex(10)],
      ['_wp_http_referer', `/wp-admin/post.php?post=${id}&action=edit`],
      ['user_ID', String(rng.range(1, 12))],
      ['action', 'editpost'],
      ['originalaction', 'editpost'],
      ['post_type', 'page'],
      ['post_ID', String(id)],
      ['post_title', s.title],
      ['content', s.content],
      ['excerpt', s.excerpt],
      ['post_name', slugify(s.title)],
      ['tax_input[post_tag]', `express,${s.lang}`],
      ['post_status', 'draft'],
      ['save', 'Save Draft'],
    ]);
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: CMS, refererPath: `/wp-admin/post.php?post=${id}&action=edit`, lang: s.lang, cookie: cookieHeader(rng, 'wordpress-admin'), contentType: 'application/x-www-form-urlencoded', hasBody: true });
    return { method: 'POST', target: '/wp-admin/post.php', headers, body, placement: 'form', encoding: 'plain' };
  };

  const searchText = (rng: Rng): Piece =>
    rng.weighted<() => Piece>([
      [() => p.headings.draw(), 3],
      [() => p.inline.draw(), 2],
      [() => p.sentences.draw(), 2],
      [() => p.ui.draw(), 1],
    ])();

  const docsSearch = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const q = searchText(rng);
    const target = `/${q.lang}/search?${queryEncode([['q', q.text], ...(rng.chance(0.3) ? [['version', rng.pick(['4x', '5x'])] as [string, string]] : [])])}`;
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: DOCS, refererPath: q.route, lang: q.lang, cookie: cookieHeader(rng, 'docs', [['lang', q.lang]]) });
    return { method: 'GET', target, headers, placement: 'query', encoding: 'plain' };
  };

  // DocSearch-style hosted search: the query travels in a JSON body, with its own encoded params.
  const searchApi = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const q = searchText(rng);
    const params = queryEncode([['hitsPerPage', '20'], ['highlightPreTag', '<mark>'], ['highlightPostTag', '</mark>'], ['facetFilters', JSON.stringify([`lang:${q.lang}`, ['version:5x']])]], 'script');
    const body = JSON.stringify({ requests: [{ query: q.text, indexName: 'express-docs', params }] });
    const target = `/1/indexes/*/queries?${queryEncode([['x-algolia-agent', 'Algolia for JavaScript (4.24.0); Browser (lite); docsearch (3.6.0)'], ['x-algolia-api-key', rng.hex(32)], ['x-algolia-application-id', rng.alnum(10).toUpperCase()]], 'script')}`;
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: DOCS, refererPath: q.route, lang: q.lang, contentType: 'application/x-www-form-urlencoded', hasBody: true, accept: '*/*' });
    return { method: 'POST', target, headers, body, placement: 'json', encoding: 'plain' };
  };

  const docsPath = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const h = p.headings.draw();
    const target = rng.chance(0.5) ? `/${h.lang}/blog/${seg(slugify(h.text))}` : `${h.route.split('/').map(seg).join('/')}/${seg(slugify(h.text))}`;
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: DOCS, refererPath: rng.chance(0.6) ? h.route : undefined, externalReferer: externalReferer(rng), lang: h.lang, cookie: rng.chance(0.5) ? cookieHeader(rng, 'docs', [['lang', h.lang]]) : undefined });
    return { method: 'GET', target, headers, placement: 'path', encoding: 'plain' };
  };

  // A Weblate-style translation editor saving one string.
  const translationForm = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const piece = rng.chance(0.75) ? p.paragraphs.draw() : p.ui.draw();
    const body = formEncode([
      ['csrfmiddlewaretoken', rng.alnum(64)],
      ['checksum', rng.hex(16)],
      ['contentsum', rng.hex(16)],
      ['translationsum', rng.hex(16)],
      ['target_0', piece.text],
      ['review', rng.pick(['10', '20'])],
      ['explanation', ''],
      ['save', 'Save and continue'],
    ]);
    const path = `/translate/express/${seg(piece.route.split('/').slice(2).join('-') || 'ui')}/${piece.lang}/`;
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: TRANSLATE, refererPath: `${path}?checksum=${rng.hex(16)}&sort_by=-priority,position`, lang: piece.lang, cookie: cookieHeader(rng, 'django', [['django_language', piece.lang]]), contentType: 'application/x-www-form-urlencoded', hasBody: true });
    return { method: 'POST', target: path, headers, body, placement: 'form', encoding: 'plain' };
  };

  const snippetUpload = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const c = p.code.draw();
    const name = c.lang === 'sh' || c.lang === 'bash' || c.lang === 'console' ? 'commands.sh' : c.lang === 'json' ? 'package.json' : c.lang === 'html' ? 'index.html' : rng.pick(['app.js', 'index.js', 'server.js', 'routes.js']);
    const type = name.endsWith('.js') ? 'text/javascript' : name.endsWith('.json') ? 'application/json' : name.endsWith('.html') ? 'text/html' : 'application/x-sh';
    const h = p.headings.draw();
    const { body, contentType } = multipart(rng, browser, [
      { name: 'title', value: h.text },
      { name: 'language', value: c.lang || 'javascript' },
      { name: 'file', filename: name, type, content: c.code },
    ]);
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: SNIPPETS, refererPath: '/new', lang: h.lang, cookie: cookieHeader(rng, 'dev'), contentType, hasBody: true });
    return { method: 'POST', target: '/snippets', headers, body, placement: 'multipart', encoding: 'plain' };
  };

  // Sandbox "define" APIs take a project as JSON: file names mapped to contents.
  const sandboxJson = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const c = p.code.drawFitting((x) => ['js', 'javascript', 'mjs', ''].includes(x.lang)) ?? p.code.draw();
    const body = JSON.stringify({
      files: {
        'package.json': { content: { name: 'express-example', main: 'index.js', dependencies: { express: rng.pick(['^4.21.2', '^5.1.0']) } } },
        'index.js': { content: c.code },
      },
      template: 'node',
    });
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: SNIPPETS, refererPath: '/', cookie: cookieHeader(rng, 'dev'), contentType: 'application/json', hasBody: true });
    return { method: 'POST', target: '/api/v1/sandboxes/define?json=1', headers, body, placement: 'json', encoding: 'plain' };
  };

  // A feed reader's import of a site's RSS, posted for preview.
  const rssXml = (rng: Rng): Draft => {
    const items = Array.from({ length: rng.range(1, 5) }, () => {
      const page = p.pages.draw();
      return `<item><title>${xmlEscape(page.title)}</title><link>${DOCS}${page.route}</link><description>${xmlEscape(page.description || p.paragraphs.draw().text)}</description><guid isPermaLink="false">${rng.uuid()}</guid></item>`;
    }).join('');
    const body = `<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel><title>Express</title><link>${DOCS}/</link><description>Express blog</description>${items}</channel></rss>\n`;
    const browser = pickBrowser(rng);
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: CMS, refererPath: '/feeds/new', cookie: cookieHeader(rng, 'dev'), contentType: 'application/rss+xml', hasBody: true });
    return { method: 'POST', target: '/api/feeds/preview', headers, body, placement: 'xml', encoding: 'plain' };
  };

  return [
    { what: 'cms-page-json', weight: 1.5, make: cmsPageSave },
    { what: 'cms-admin-form', weight: 1.5, make: cmsAdminForm },
    { what: 'docs-search', weight: 2, make: docsSearch },
    { what: 'search-api-json', weight: 1, make: searchApi },
    { what: 'docs-slug-path', weight: 1.5, make: docsPath },
    { what: 'translation-form', weight: 2, make: translationForm },
    { what: 'snippet-upload', weight: 1, make: snippetUpload },
    { what: 'sandbox-json', weight: 1, make: sandboxJson },
    { what: 'rss-xml', weight: 0.4, make: rssXml },
  ];
}

export function expressDocsRequests(mirrors: string, count: number): EvalRequest[] {
  const rng = new Rng(`benign:${REPO}`);
  const pools = load(mirrors, rng);
  return pools ? generate(REPO, rng, templates(pools), count) : [];
}
