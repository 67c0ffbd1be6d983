// Developer-site traffic from rust-lang/book: its prose paragraphs, headings, inline code and code
// (fenced blocks and the listings' .rs files) posted as blog comments, Q&A questions and answers,
// playground links, pastes and searches.
import { Deck, Rng } from './benign-rng.ts';
import { Mirror } from './benign-mirror.ts';
import { type Draft, generate, type Template } from './benign-gen.ts';
import { browserHeaders, cookieHeader, externalReferer, formEncode, htmlEscape, multipart, person, pickBrowser, queryEncode, seg, xmlEscape } from './benign-http.ts';
import { type CodeBlock, distinct, parseMarkdown, sentences, slugify } from './benign-text.ts';
import type { EvalRequest } from './types.ts';

const REPO = 'rust-lang/book';
const BLOG = 'https://blog.example.dev';
const QA = 'https://qa.example.dev';
const PLAY = 'https://play.example.dev';
const PASTE = 'https://paste.example.dev';
const TAGS = ['rust', 'borrow-checker', 'lifetimes', 'traits', 'cargo', 'generics', 'closures', 'iterators', 'async-await', 'error-handling', 'ownership', 'smart-pointers'];

interface Code extends CodeBlock {
  /** File name for uploads: the listing's own name, or one fitting the fence's language. */
  name: string;
}

interface Pools {
  pages: string[];
  paragraphs: Deck<string>;
  /** Every fenced block, mdBook include directives too (people paste the book's source). */
  posted: Deck<Code>;
  headings: Deck<string>;
  sentences: Deck<string>;
  inline: Deck<string>;
  /** Runnable code: the listings and the fenced blocks that are more than an include directive. */
  code: Deck<Code>;
}

const INCLUDE_ONLY = /^(\s*\{\{#[^}]*\}\}\s*)+$/;

function fileNameFor(lang: string): string {
  if (lang.startsWith('rust') || lang === '') return 'main.rs';
  if (lang === 'toml') return 'Cargo.toml';
  if (lang === 'console' || lang === 'sh' || lang === 'bash' || lang === 'powershell') return 'session.txt';
  return `snippet.${lang.replace(/[^a-z0-9]/gi, '') || 'txt'}`;
}

const same = (s: string): string => s;

function load(mirrors: string, rng: Rng): Pools | null {
  const mirror = new Mirror(mirrors, REPO);
  if (!mirror.present) return null;
  const files = mirror.read((p) => p.endsWith('.md') || (p.startsWith('listings/') && p.endsWith('.rs')));
  const paragraphs: string[] = [];
  const headings: string[] = [];
  const inline: string[] = [];
  const code: Code[] = [];
  const pages: string[] = [];
  for (const f of files) {
    if (f.path.endsWith('.rs')) {
      code.push({ lang: 'rust', code: f.text, name: f.path.split('/').pop() as string });
      continue;
    }
    const md = parseMarkdown(f.text);
    paragraphs.push(...md.paragraphs);
    headings.push(...md.headings);
    inline.push(...md.inlineCode);
    for (const c of md.code) code.push({ ...c, name: fileNameFor(c.lang) });
    if (/(^|\/)src\/[^/]+\.md$/.test(f.path)) pages.push((f.path.split('/').pop() as string).replace(/\.md$/, ''));
  }
  if (paragraphs.length === 0) return null;
  return {
    pages: pages.length ? pages : ['index'],
    paragraphs: new Deck(rng, distinct(paragraphs, same)),
    headings: new Deck(rng, distinct(headings.length ? headings : ['Rust'], same)),
    sentences: new Deck(rng, distinct(paragraphs.flatMap(sentences), same).filter((s) => s.length <= 200)),
    inline: new Deck(rng, distinct(inline.length ? inline : ['fn main()'], same)),
    posted: new Deck(rng, distinct(code, (c) => c.code)),
    code: new Deck(rng, distinct(code, (c) => c.code).filter((c) => !INCLUDE_ONLY.test(c.code))),
  };
}

/** A comment body as people post it: prose, prose with a fenced code block, or just the code. */
function postText(rng: Rng, p: Pools): string {
  const roll = rng.next();
  if (roll < 0.55) return p.paragraphs.draw();
  const c = p.posted.draw();
  const fenced = '```' + (c.lang || 'rust') + '\n' + c.code.replace(/\n$/, '') + '\n```';
  if (roll < 0.85) return `${p.paragraphs.draw()}\n\n${fenced}`;
  return fenced;
}

function templates(p: Pools): Template[] {
  const commentForm = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const who = person(rng);
    const postId = rng.range(100, 9999);
    const slug = slugify(p.headings.draw());
    const body = formEncode([
      ['comment', postText(rng, p)],
      ['author', `${who.first} ${who.last}`],
      ['email', who.email],
      ['url', rng.chance(0.3) ? `https://${who.last.toLowerCase().replace(/[^a-z]/g, '')}.example.dev/` : ''],
      ['submit', 'Post Comment'],
      ['comment_post_ID', String(postId)],
      ['comment_parent', rng.chance(0.3) ? String(rng.range(1000, 99999)) : '0'],
    ]);
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: BLOG, refererPath: `/2024/${String(rng.range(1, 12)).padStart(2, '0')}/${seg(slug)}/`, cookie: cookieHeader(rng, 'wordpress'), contentType: 'application/x-www-form-urlencoded', hasBody: true });
    return { method: 'POST', target: '/wp-comments-post.php', headers, body, placement: 'form', encoding: 'plain' };
  };

  const questionJson = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const body = JSON.stringify({
      title: p.headings.draw(),
      body: postText(rng, p),
      tags: rng.shuffled(TAGS).slice(0, rng.range(1, 4)),
      notify: rng.chance(0.5),
    });
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: QA, refererPath: '/questions/ask', cookie: cookieHeader(rng, 'dev'), contentType: 'application/json', hasBody: true, extra: { 'x-csrf-token': rng.alnum(43) } });
    return { method: 'POST', target: '/api/v1/questions', headers, body, placement: 'json', encoding: 'plain' };
  };

  // A WYSIWYG editor's output: the text inside <p> and <pre><code>, escaped as HTML.
  const answerRichText = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const id = rng.range(10000, 999999);
    let html = `<p>${htmlEscape(p.paragraphs.draw())}</p>`;
    if (rng.chance(0.7)) {
      const c = p.code.draw();
      html += `<pre><code class="language-${c.lang || 'rust'}">${htmlEscape(c.code)}</code></pre>`;
    }
    if (rng.chance(0.3)) html += `<p>${htmlEscape(p.paragraphs.draw())}</p>`;
    const body = formEncode([
      ['_token', rng.alnum(40)],
      ['content', html],
      ['subscribe', '1'],
    ]);
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: QA, refererPath: `/questions/${id}/${seg(slugify(p.headings.draw()))}`, cookie: cookieHeader(rng, 'dev'), contentType: 'application/x-www-form-urlencoded', hasBody: true });
    return { method: 'POST', target: `/questions/${id}/answer`, headers, body, placement: 'form', encoding: 'html' };
  };

  const searchQuery = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const text = rng.weighted<() => string>([
      [() => p.headings.draw(), 3],
      [() => p.inline.draw(), 3],
      [() => p.sentences.draw(), 2],
    ])();
    let target: string;
    let origin = QA;
    let refererPath: string | undefined = rng.chance(0.7) ? '/questions' : undefined;
    const style = rng.int(3);
    if (style === 0) target = `/search?${queryEncode([['q', rng.chance(0.3) ? `[rust] ${text}` : text], ...(rng.chance(0.4) ? [['tab', rng.pick(['relevance', 'newest', 'votes'])] as [string, string]] : [])])}`;
    else if (style === 1) {
      // mdBook keeps the search box's text in the page URL; a shared link is loaded from another page.
      origin = BLOG;
      const page = `/book/${rng.pick(p.pages)}.html`;
      target = `${page}?${queryEncode([['search', text]], 'script')}`;
      refererPath = refererPath && page;
    } else target = `/search?${queryEncode([['q', text], ['page', String(rng.range(1, 5))], ['pagesize', rng.pick(['15', '30', '50'])]])}`;
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin, refererPath, cookie: cookieHeader(rng, 'dev') });
    return { method: 'GET', target, headers, placement: 'query', encoding: 'plain' };
  };

  const slugPath = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const slug = seg(slugify(p.headings.draw()));
    const target = rng.pick([`/questions/${rng.range(1000, 79999999)}/${slug}`, `/blog/${rng.range(2015, 2025)}/${String(rng.range(1, 12)).padStart(2, '0')}/${slug}/`, `/t/${slug}/${rng.range(100, 99999)}`]);
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: QA, externalReferer: rng.chance(0.5) ? externalReferer(rng) : undefined, cookie: rng.chance(0.6) ? cookieHeader(rng, 'dev') : undefined });
    return { method: 'GET', target, headers, placement: 'path', encoding: 'plain' };
  };

  // Playground share links carry the whole program in the query string.
  const playground = (rng: Rng): Draft | null => {
    const c = p.code.drawFitting((x) => encodeURIComponent(x.code).length < 4500);
    if (!c) return null;
    const browser = pickBrowser(rng);
    const target = `/?${queryEncode([['version', rng.pick(['stable', 'beta', 'nightly'])], ['mode', rng.pick(['debug', 'release'])], ['edition', rng.pick(['2018', '2021', '2024'])], ['code', c.code]], 'script')}`;
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: PLAY, externalReferer: rng.chance(0.6) ? `${QA}/questions/${rng.range(1000, 79999999)}` : undefined });
    return { method: 'GET', target, headers, placement: 'query', encoding: 'plain' };
  };

  const snippetUpload = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const c = p.code.draw();
    // Browsers on Linux take the type from /etc/mime.types, which gives .rs the RLS services type.
    const type = c.name.endsWith('.rs') && browser.platform === 'Linux' ? 'application/rls-services+xml' : c.name.endsWith('.toml') ? 'application/toml' : 'application/octet-stream';
    const { body, contentType } = multipart(rng, browser, [
      { name: 'authenticity_token', value: rng.alnum(86) + '==' },
      { name: 'description', value: p.headings.draw() },
      { name: 'visibility', value: rng.pick(['public', 'secret']) },
      { name: 'file', filename: c.name, type, content: c.code },
    ]);
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: PASTE, refererPath: '/new', cookie: cookieHeader(rng, 'dev'), contentType, hasBody: true });
    return { method: 'POST', target: '/pastes', headers, body, placement: 'multipart', encoding: 'plain' };
  };

  // Desktop blog editors publish over WordPress's XML-RPC.
  const xmlrpcPost = (rng: Rng): Draft => {
    const title = p.headings.draw();
    const text = postText(rng, p);
    const body =
      `<?xml version="1.0"?>\n<methodCall><methodName>metaWeblog.newPost</methodName><params>` +
      `<param><value><string>1</string></value></param>` +
      `<param><value><string>editor</string></value></param>` +
      `<param><value><string>${rng.alnum(24)}</string></value></param>` +
      `<param><value><struct>` +
      `<member><name>title</name><value><string>${xmlEscape(title)}</string></value></member>` +
      `<member><name>description</name><value><string>${xmlEscape(text)}</string></value></member>` +
      `<member><name>mt_keywords</name><value><string>rust, programming</string></value></member>` +
      `</struct></value></param>` +
      `<param><value><boolean>${rng.int(2)}</boolean></value></param></params></methodCall>\n`;
    const headers = { 'user-agent': rng.pick(['MarsEdit/5.1.2 (Macintosh; Mac OS X 14.5)', 'Open Live Writer 0.6.2.0', 'WordPress/6.5.4; https://blog.example.dev']), 'content-type': 'text/xml', accept: '*/*' };
    return { method: 'POST', target: '/xmlrpc.php', headers, body, placement: 'xml', encoding: 'plain' };
  };

  return [
    { what: 'comment-form', weight: 3, make: commentForm },
    { what: 'question-json', weight: 2, make: questionJson },
    { what: 'answer-richtext', weight: 1, make: answerRichText },
    { what: 'search-query', weight: 2, make: searchQuery },
    { what: 'slug-path', weight: 1.5, make: slugPath },
    { what: 'playground-link', weight: 1, make: playground },
    { what: 'snippet-upload', weight: 1, make: snippetUpload },
    { what: 'xmlrpc-post', weight: 0.3, make: xmlrpcPost },
  ];
}

export function rustBookRequests(mirrors: string, count: number): EvalRequest[] {
  const rng = new Rng(`benign:${REPO}`);
  const pools = load(mirrors, rng);
  return pools ? generate(REPO, rng, templates(pools), count) : [];
}
