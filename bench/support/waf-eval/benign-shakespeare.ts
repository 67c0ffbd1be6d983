// Forum, review and comment traffic from karpathy/char-rnn's tinyshakespeare: whole speeches as
// posts and reviews, single lines as subjects, searches, chat messages and thread slugs.
import { Deck, Rng } from './benign-rng.ts';
import { Mirror } from './benign-mirror.ts';
import { type Draft, generate, type Template } from './benign-gen.ts';
import { browserHeaders, cookieHeader, externalReferer, formEncode, multipart, person, pickBrowser, queryEncode, seg, xmlEscape } from './benign-http.ts';
import { parseSpeeches, slugify, type Speech } from './benign-text.ts';
import type { EvalRequest } from './types.ts';

const REPO = 'karpathy/char-rnn';
const FILE = 'data/tinyshakespeare/input.txt';
const FORUM = 'https://community.example.org';
const SHOP = 'https://shop.example.com';
const BLOG = 'https://blog.example.net';
const CHAT = 'https://chat.example.org';

interface Pools {
  speeches: Deck<Speech>;
  lines: Deck<string>;
  speakers: Deck<string>;
}

function load(mirrors: string, rng: Rng): Pools | null {
  const text = new Mirror(mirrors, REPO).readOne(FILE);
  if (!text) return null;
  const speeches = parseSpeeches(text);
  if (speeches.length === 0) return null;
  return {
    speeches: new Deck(rng, speeches),
    lines: new Deck(
      rng,
      speeches.flatMap((s) => s.lines),
    ),
    speakers: new Deck(rng, [...new Set(speeches.map((s) => s.speaker))]),
  };
}

/** A post body: one speech, or a few in a row (a long post). */
function postBody(rng: Rng, p: Pools): string {
  const n = rng.weighted([[1, 6], [2, 2], [4, 1]] as const);
  return Array.from({ length: n }, () => p.speeches.draw().lines.join('\n')).join('\n\n');
}

function templates(p: Pools): Template[] {
  // phpBB's reply form.
  const forumPost = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const f = rng.range(2, 60);
    const t = rng.range(100, 250000);
    const now = rng.unixTime();
    const body = formEncode([
      ['subject', `Re: ${p.lines.draw()}`],
      ['addbbcode20', '100'],
      ['message', postBody(rng, p)],
      ['attach_sig', 'on'],
      ['notify', 'on'],
      ['topic_cur_post_id', String(rng.range(1000, 3000000))],
      ['lastclick', String(now - rng.range(30, 900))],
      ['post', 'Submit'],
      ['creation_time', String(now - rng.range(30, 900))],
      ['form_token', rng.hex(40)],
    ]);
    const target = `/posting.php?mode=reply&f=${f}&t=${t}`;
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: FORUM, refererPath: target, cookie: cookieHeader(rng, 'phpbb'), contentType: 'application/x-www-form-urlencoded', hasBody: true });
    return { method: 'POST', target, headers, body, placement: 'form', encoding: 'plain' };
  };

  const reviewJson = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const sku = rng.digits(7);
    const s = p.speeches.draw();
    const body = JSON.stringify({
      rating: rng.range(1, 5),
      title: p.lines.draw(),
      body: s.lines.join('\n'),
      nickname: s.speaker,
      recommend: rng.chance(0.7),
      usage: rng.pick(['less than a week', 'one month', 'over a year']),
      photos: [],
    });
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: SHOP, refererPath: `/site/reviews/write/${sku}`, cookie: cookieHeader(rng, 'shop'), contentType: 'application/json', hasBody: true, extra: { 'x-requested-with': 'XMLHttpRequest' } });
    return { method: 'POST', target: `/api/products/${sku}/reviews`, headers, body, placement: 'json', encoding: 'plain' };
  };

  const commentForm = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const who = person(rng);
    const s = p.speeches.draw();
    const body = formEncode([
      ['comment', s.lines.join('\n')],
      ['author', rng.chance(0.5) ? s.speaker : `${who.first} ${who.last}`],
      ['email', who.email],
      ['url', ''],
      ['wp-comment-cookies-consent', 'yes'],
      ['submit', 'Post Comment'],
      ['comment_post_ID', String(rng.range(10, 9000))],
      ['comment_parent', '0'],
    ]);
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: BLOG, refererPath: `/${seg(slugify(p.lines.draw()))}/`, cookie: cookieHeader(rng, 'wordpress'), contentType: 'application/x-www-form-urlencoded', hasBody: true });
    return { method: 'POST', target: '/wp-comments-post.php', headers, body, placement: 'form', encoding: 'plain' };
  };

  // phpBB's search page, and a Discourse-style search.
  const searchQuery = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const line = p.lines.draw();
    const target = rng.chance(0.5)
      ? `/search.php?${queryEncode([['keywords', line], ['terms', rng.pick(['all', 'any'])], ['author', ''], ['sc', '1'], ['sf', rng.pick(['all', 'titleonly', 'msgonly'])], ['sr', 'posts'], ['sk', 't'], ['sd', 'd'], ['st', '0'], ['ch', '300'], ['t', '0'], ['submit', 'Search']])}`
      : `/search?${queryEncode([['q', line], ...(rng.chance(0.4) ? [['page', String(rng.range(2, 9))] as [string, string]] : [])])}`;
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: FORUM, refererPath: rng.chance(0.7) ? '/search.php' : undefined, cookie: cookieHeader(rng, rng.chance(0.5) ? 'phpbb' : 'discourse') });
    return { method: 'GET', target, headers, placement: 'query', encoding: 'plain' };
  };

  const threadPath = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const slug = seg(slugify(p.lines.draw()));
    const target = rng.chance(0.6) ? `/t/${slug}/${rng.range(100, 400000)}${rng.chance(0.3) ? `/${rng.range(2, 80)}` : ''}` : `/forum/${rng.range(1, 40)}-${seg(slugify(p.speakers.draw()))}/${slug}.html`;
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: FORUM, externalReferer: rng.chance(0.5) ? externalReferer(rng) : undefined, cookie: rng.chance(0.5) ? cookieHeader(rng, 'discourse') : undefined });
    return { method: 'GET', target, headers, placement: 'path', encoding: 'plain' };
  };

  // A reply with an attached text file, as phpBB's posting form sends it.
  const attachmentUpload = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const s = p.speeches.draw();
    const f = rng.range(2, 60);
    const t = rng.range(100, 250000);
    const { body, contentType } = multipart(rng, browser, [
      { name: 'subject', value: `Re: ${p.lines.draw()}` },
      { name: 'message', value: p.lines.draw() },
      { name: 'fileupload', filename: `${slugify(s.speaker)}-${rng.range(1, 9)}.txt`, type: 'text/plain', content: s.lines.join('\n') + '\n' },
      { name: 'filecomment', value: p.lines.draw() },
      { name: 'add_file', value: 'Add the file' },
      { name: 'creation_time', value: String(rng.unixTime()) },
      { name: 'form_token', value: rng.hex(40) },
    ]);
    const target = `/posting.php?mode=reply&f=${f}&t=${t}`;
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: FORUM, refererPath: target, cookie: cookieHeader(rng, 'phpbb'), contentType, hasBody: true });
    return { method: 'POST', target, headers, body, placement: 'multipart', encoding: 'plain' };
  };

  const chatJson = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const channel = rng.pick(['general', 'random', 'book-club', 'theatre', 'help']);
    const body = JSON.stringify({ channel, text: rng.chance(0.7) ? p.lines.draw() : p.speeches.draw().lines.join('\n'), client_msg_id: rng.uuid(), thread_ts: rng.chance(0.3) ? `${rng.unixTime()}.${rng.digits(6)}` : null });
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: CHAT, refererPath: `/client/T${rng.alnum(8).toUpperCase()}/${channel}`, cookie: cookieHeader(rng, 'discourse'), contentType: 'application/json', hasBody: true });
    return { method: 'POST', target: '/api/chat.postMessage', headers, body, placement: 'json', encoding: 'plain' };
  };

  // Blog comments posted over XML-RPC by a mobile app.
  const xmlrpcComment = (rng: Rng): Draft => {
    const s = p.speeches.draw();
    const body =
      `<?xml version="1.0"?>\n<methodCall><methodName>wp.newComment</methodName><params>` +
      `<param><value><int>1</int></value></param><param><value><string></string></value></param><param><value><string></string></value></param>` +
      `<param><value><int>${rng.range(10, 9000)}</int></value></param>` +
      `<param><value><struct>` +
      `<member><name>content</name><value><string>${xmlEscape(s.lines.join('\n'))}</string></value></member>` +
      `<member><name>author</name><value><string>${xmlEscape(s.speaker)}</string></value></member>` +
      `<member><name>author_email</name><value><string>${person(rng).email}</string></value></member>` +
      `</struct></value></param></params></methodCall>\n`;
    const headers = { 'user-agent': rng.pick(['wp-iphone/24.9 (iOS 17.5, iPhone15,2) Mobile', 'wp-android/24.9 (Android 14; en_US; samsung SM-S918B; b1s; aarch64)']), 'content-type': 'text/xml', accept: '*/*', 'accept-language': 'en-US,en;q=0.9' };
    return { method: 'POST', target: '/xmlrpc.php', headers, body, placement: 'xml', encoding: 'plain' };
  };

  return [
    { what: 'forum-post', weight: 3, make: forumPost },
    { what: 'review-json', weight: 2, make: reviewJson },
    { what: 'comment-form', weight: 2, make: commentForm },
    { what: 'search-query', weight: 1.5, make: searchQuery },
    { what: 'thread-path', weight: 1.5, make: threadPath },
    { what: 'attachment-upload', weight: 0.8, make: attachmentUpload },
    { what: 'chat-json', weight: 1, make: chatJson },
    { what: 'xmlrpc-comment', weight: 0.25, make: xmlrpcComment },
  ];
}

export function shakespeareRequests(mirrors: string, count: number): EvalRequest[] {
  const rng = new Rng(`benign:${REPO}`);
  const pools = load(mirrors, rng);
  return pools ? generate(REPO, rng, templates(pools), count) : [];
}
