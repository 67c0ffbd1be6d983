// The sandbox's built-in demo target: "Demo Shop", a tiny fake web shop that Aegis serves itself so
// a test-mode URL scan (DAST) has something to find on day one. The caller mounts it with
// `app.register(demoTargetRoutes, { prefix: DEMO_TARGET_PATH })`; every link it prints is absolute
// under that prefix, so a scan scoped to the prefix reaches every page.
//
// Planted flaws (each one something the DAST engine in scanners/dast proves; rule id in []):
//   1. Reflected XSS — GET /search?q= prints q unescaped in the results line.     [dast-xss-reflected]
//   2. SQL injection, error-based — GET /product?id= "concatenates" id into SQL; a quote brings a
//      canned PostgreSQL error (`unterminated quoted string`).                      [dast-sqli-error]
//   3. SQL injection, boolean-based — GET /orders?code= (form on /) swallows errors but
//      `A100' AND '1'='1` finds the order and `A100' AND '1'='2` does not.          [dast-sqli-boolean]
//   4. Server-side template injection — GET /gift-card?message= escapes the message, then
//      "renders" it: `{{7*6}}` comes back as 42 (integer products only).            [dast-ssti]
//   5. Path traversal — GET /manual?file= joins file naively onto /srv/demo-shop/manuals, so
//      `../../../etc/passwd` reaches a fake passwd file.                            [dast-path-traversal]
//   6. Error disclosure — GET /checkout shows a fake Node.js stack trace ("debug mode").
//                                                                                   [dast-error-disclosure]
//   7. Directory listing — GET /files/ is an "Index of …/files/" page.              [dast-directory-listing]
//   8. Clickjacking — no X-Frame-Options and no CSP frame-ancestors.               [dast-missing-xfo]
//   9. Cookie flags — / sets a fake cart cookie without HttpOnly or SameSite.      [dast-cookie-flags]
//  10. Version banner — `X-Powered-By: DemoShop/1.4.2 (DEMO-ONLY)` on every response.
//                                                                                   [dast-version-banner]
// Not planted, on purpose: open redirect (it would be a real one on Aegis's own origin), CORS with
// credentials (other sites could read responses with the visitor's Aegis cookies), and the timing
// injections (sleeping requests would tie up the production API process).
//
// Safety — this runs in the production API process, on the dashboard's origin:
// - Nothing touches the file system, a database, a shell or the network. Files come from the
//   in-memory DEMO_FAKE_FILES (path joining is string arithmetic with node:path's posix.normalize),
//   SQL errors are canned strings, the "template engine" multiplies two short integers, secrets are
//   obviously fake (DEMO-ONLY).
// - Every response of this plugin (pages, 404s, errors) carries `Content-Security-Policy: sandbox`
//   (no allow-scripts, no allow-same-origin: reflected markup gets an opaque origin, runs no script
//   and cannot read Aegis cookies or call the API), plus default-src 'none' so injected markup loads
//   nothing, and `X-Robots-Tag: noindex`, nosniff, no-store and CORP same-origin. The XSS rule
//   still fires: the engine judges the reflection in the body, not whether a browser would run it.
//   (Only a URL Fastify refuses before routing, e.g. bad percent-encoding, is answered by the host
//   application's JSON error envelope instead, without these headers.)
// - The SQL error and crash pages answer 200, so scanning the demo does not count as API errors.
// - Inputs are capped (MAX_INPUT characters, else 400), the template engine takes at most six-digit
//   integers, pages are under 4 KB; GET/HEAD only, so no body is ever read; no redirects.
// - The cookie is scoped to the demo's path, so it never reaches any other Aegis route.
import { posix } from 'node:path';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';

export const DEMO_TARGET_PATH = '/sandbox/demo';

/** Longest accepted query value; anything longer is refused with 400. */
const MAX_INPUT = 256;

/** Sent on every response of the demo target (see the header comment). */
const SAFETY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "sandbox; default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'",
  'x-robots-tag': 'noindex, nofollow',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};

/** Flaw 10: a software banner with a version number. */
const BANNER = 'DemoShop/1.4.2 (DEMO-ONLY)';

const MANUALS_DIR = '/srv/demo-shop/manuals';

/** The whole "file system" of the demo shop. Every file says DEMO-ONLY. */
export const DEMO_FAKE_FILES: ReadonlyMap<string, string> = new Map([
  [
    '/etc/passwd',
    'root:x:0:0:DEMO-ONLY fake account:/root:/bin/sh\n' +
      'daemon:x:1:1:DEMO-ONLY fake account:/usr/sbin:/usr/sbin/nologin\n' +
      'demoshop:x:1000:1000:DEMO-ONLY fake account:/srv/demo-shop:/bin/sh\n',
  ],
  ['/srv/demo-shop/.env', '# DEMO-ONLY: not real credentials\nDATABASE_URL=postgres://demo:DEMO-ONLY-not-a-password@db.invalid/shop\nPAYMENT_API_KEY=DEMO-ONLY-fake-key-0000\n'],
  [`${MANUALS_DIR}/returns.txt`, 'Returns (DEMO-ONLY)\nUnworn items can be returned within 30 days.\n'],
  [`${MANUALS_DIR}/sizes.txt`, 'Size guide (DEMO-ONLY)\nS 36-38, M 39-41, L 42-44\n'],
  ['/srv/demo-shop/public/files/readme.txt', 'Public files of Demo Shop (DEMO-ONLY).\n'],
  ['/srv/demo-shop/public/files/price-list.txt', 'Price list (DEMO-ONLY)\nTrail shoes 89\nRain jacket 120\nWool socks 12\n'],
]);

const PUBLIC_FILES_DIR = '/srv/demo-shop/public/files';

interface Product {
  id: number;
  name: string;
  price: number;
}

const PRODUCTS: readonly Product[] = [
  { id: 1, name: 'Trail shoes', price: 89 },
  { id: 2, name: 'Rain jacket', price: 120 },
  { id: 3, name: 'Wool socks', price: 12 },
];

const ORDERS: ReadonlyMap<string, string> = new Map([
  ['A100', 'shipped'],
  ['B200', 'being packed'],
]);

// ---------------------------------------------------------------------------------------------
// Helpers

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

class InputTooLong extends Error {}

/** The first value of a query parameter ('' when absent); throws InputTooLong past MAX_INPUT. */
function queryValue(request: FastifyRequest, name: string): string {
  const at = request.url.indexOf('?');
  if (at < 0) return '';
  const value = new URLSearchParams(request.url.slice(at + 1)).get(name) ?? '';
  if (value.length > MAX_INPUT) throw new InputTooLong();
  return value;
}

function page(prefix: string, title: string, body: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(title)} · Demo Shop</title>
<style>body{font-family:sans-serif;max-width:40em;margin:2em auto}nav a{margin-right:1em}</style></head>
<body><p><b>Demo Shop</b> — a deliberately vulnerable demo target served by Aegis for sandbox scans. Do not enter real data.</p>
<nav><a href="${prefix}/">Home</a><a href="${prefix}/search?q=shoes">Search</a><a href="${prefix}/files/">Files</a></nav>
<h1>${escapeHtml(title)}</h1>
${body}
</body></html>
`;
}

function sendHtml(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(html);
}

// ---------------------------------------------------------------------------------------------
// Simulations

/** Flaw 2: `SELECT name, price FROM products WHERE id = <id>`, as PostgreSQL would answer it. */
function productQuery(id: string): { product: Product | null } | { error: string } {
  const sql = `SELECT name, price FROM products WHERE id = ${id}`;
  const find = (n: string): Product | null => PRODUCTS.find((p) => p.id === Number(n)) ?? null;
  if (/^\d{1,6}$/.test(id)) return { product: find(id) };
  const condition = /^(\d{1,6}) AND (\d{1,6})=(\d{1,6})$/i.exec(id);
  if (condition) return { product: condition[2] === condition[3] ? find(condition[1]!) : null };
  const quote = /['"]/.exec(id);
  if (quote) return { error: `ERROR:  unterminated quoted string at or near "${id.slice(quote.index)}"\nLINE 1: ${sql}` };
  return { error: `ERROR:  syntax error at or near "${id.replace(/^\d+\s*/, '').split(/\s+/)[0] ?? ''}"\nLINE 1: ${sql}` };
}

/**
 * Flaw 3: `SELECT status FROM orders WHERE code = '<code>'` with errors swallowed. Understands a
 * plain code and `<code>' AND '<a>'='<b>` (the template's closing quote ends the input).
 */
function orderQuery(code: string): { code: string; status: string } | null {
  const lookup = (c: string) => {
    const status = ORDERS.get(c);
    return status === undefined ? null : { code: c, status };
  };
  if (!code.includes("'")) return lookup(code);
  const m = /^([^']{0,20})' AND '([^']{0,20})'\s?=\s?'([^']{0,20})$/i.exec(code);
  if (!m) return null; // a syntax error, swallowed: looks like "not found"
  return m[2] === m[3] ? lookup(m[1]!) : null;
}

/** Flaw 4: a "template engine" that only knows `{{ a * b }}` on integers of up to six digits. */
function renderTemplate(escaped: string): string {
  return escaped.replace(/\{\{\s{0,3}(\d{1,6})\s{0,3}\*\s{0,3}(\d{1,6})\s{0,3}\}\}/g, (_whole, a: string, b: string) => String(Number(a) * Number(b)));
}

/** Flaw 5: the naive join — pure string arithmetic, looked up in DEMO_FAKE_FILES only. */
function readManual(file: string): string | null {
  const joined = posix.normalize(file.startsWith('/') ? file : `${MANUALS_DIR}/${file}`);
  return DEMO_FAKE_FILES.get(joined) ?? null;
}

const PUBLIC_FILES = [...DEMO_FAKE_FILES.keys()].filter((p) => posix.dirname(p) === PUBLIC_FILES_DIR).map((p) => posix.basename(p));

/** Flaw 6: what the shop's "debug mode" prints when checkout crashes (entirely made up). */
const FAKE_STACK = `TypeError: Cannot read properties of undefined (reading 'discount')
    at applyCoupon (/srv/demo-shop/src/cart.js:42:17)
    at checkout (/srv/demo-shop/src/routes/checkout.js:18:5)
    at Layer.handle (/srv/demo-shop/node_modules/router/lib/layer.js:95:5)
    at next (/srv/demo-shop/node_modules/router/lib/route.js:149:13)`;

// ---------------------------------------------------------------------------------------------
// Routes

const routeOptions = { config: { auth: 'public' as const }, schema: { hide: true } };

export const demoTargetRoutes: FastifyPluginAsync = async (app) => {
  const prefix = app.prefix;
  const cookiePath = prefix || DEMO_TARGET_PATH;

  // onSend runs for every reply of this context: routes, its 404 handler and error replies.
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.headers(SAFETY_HEADERS);
    reply.header('x-powered-by', BANNER);
    return payload;
  });

  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof InputTooLong) return sendHtml(reply, 400, page(prefix, 'Input too long', `<p>Values are limited to ${MAX_INPUT} characters.</p>`));
    const code: unknown = typeof error === 'object' && error !== null && 'statusCode' in error ? error.statusCode : undefined;
    const status = typeof code === 'number' && code >= 400 && code < 500 ? code : 500;
    return sendHtml(reply, status, page(prefix, 'Error', '<p>The demo shop could not answer this request.</p>'));
  });

  app.setNotFoundHandler((_request, reply) => sendHtml(reply, 404, page(prefix, 'Not found', '<p>There is no such page in the demo shop.</p>')));

  app.get('/', routeOptions, async (_request, reply) => {
    // Flaw 9: no HttpOnly, no SameSite (the value is fake; the path keeps it inside the demo).
    reply.header('set-cookie', `demo_cart=DEMO-ONLY-cart-0001; Path=${cookiePath}; Max-Age=3600`);
    const products = PRODUCTS.map((p) => `<li><a href="${prefix}/product?id=${p.id}">${escapeHtml(p.name)}</a></li>`).join('');
    return sendHtml(
      reply,
      200,
      page(
        prefix,
        'Welcome',
        `<h2>Products</h2><ul>${products}</ul>
<h2>Search</h2><form action="${prefix}/search" method="get"><input name="q" placeholder="shoes"><input type="submit" value="Search"></form>
<h2>Track an order</h2><form action="${prefix}/orders" method="get"><input name="code" value="A100"><input type="submit" value="Track"></form>
<h2>Gift card</h2><form action="${prefix}/gift-card" method="get"><input name="message" value="Happy birthday"><input type="submit" value="Preview"></form>
<h2>Help</h2><ul><li><a href="${prefix}/manual?file=returns.txt">Returns</a></li><li><a href="${prefix}/manual?file=sizes.txt">Size guide</a></li></ul>
<p><a href="${prefix}/checkout">Checkout (beta)</a></p>`,
      ),
    );
  });

  // Flaw 1: q goes into the page as it came.
  app.get('/search', routeOptions, async (request, reply) => {
    const q = queryValue(request, 'q');
    const hits = PRODUCTS.filter((p) => q !== '' && p.name.toLowerCase().includes(q.toLowerCase()));
    const list = hits.length > 0 ? `<ul>${hits.map((p) => `<li><a href="${prefix}/product?id=${p.id}">${escapeHtml(p.name)}</a></li>`).join('')}</ul>` : '';
    return sendHtml(
      reply,
      200,
      page(prefix, 'Search', `<form action="${prefix}/search" method="get"><input name="q" value="${escapeHtml(q)}"></form><p>${hits.length} results for <b>${q}</b></p>${list}`),
    );
  });

  // Flaw 2.
  app.get('/product', routeOptions, async (request, reply) => {
    const result = productQuery(queryValue(request, 'id'));
    // A 200, like the other planted pages, so scans of the demo do not count as API errors.
    if ('error' in result) return sendHtml(reply, 200, page(prefix, 'Database error', `<pre>${escapeHtml(result.error)}</pre>`));
    if (!result.product) return sendHtml(reply, 404, page(prefix, 'No such product', '<p>That product does not exist.</p>'));
    const { name, price } = result.product;
    return sendHtml(reply, 200, page(prefix, name, `<p>Price: ${price} EUR (demo prices, nothing is for sale).</p>`));
  });

  // Flaw 3: the page never echoes the code it was sent, only what the "database" found.
  app.get('/orders', routeOptions, async (request, reply) => {
    const order = orderQuery(queryValue(request, 'code'));
    const body = order ? `<p>Order ${escapeHtml(order.code)}: ${escapeHtml(order.status)}.</p>` : '<p>No order found.</p>';
    return sendHtml(reply, 200, page(prefix, 'Order status', body));
  });

  // Flaw 4: escaped (so not XSS), then rendered as a template.
  app.get('/gift-card', routeOptions, async (request, reply) => {
    const message = renderTemplate(escapeHtml(queryValue(request, 'message')));
    return sendHtml(reply, 200, page(prefix, 'Gift card preview', `<blockquote>${message}</blockquote>`));
  });

  // Flaw 5.
  app.get('/manual', routeOptions, async (request, reply) => {
    const file = queryValue(request, 'file');
    const text = readManual(file);
    if (text === null) return sendHtml(reply, 404, page(prefix, 'No such manual', `<p>No manual called ${escapeHtml(file)}.</p>`));
    return sendHtml(reply, 200, page(prefix, 'Manual', `<pre>${escapeHtml(text)}</pre>`));
  });

  // Flaw 6: a 200 on purpose (a "debug page"), like the SQL error page.
  app.get('/checkout', routeOptions, async (_request, reply) =>
    sendHtml(reply, 200, page(prefix, 'Checkout failed', `<p>Debug mode is on (DEMO-ONLY simulated crash):</p><pre>${escapeHtml(FAKE_STACK)}</pre>`)),
  );

  // Flaw 7.
  app.get('/files/', routeOptions, async (_request, reply) => {
    const rows = PUBLIC_FILES.map((name) => `<li><a href="${prefix}/files/${encodeURIComponent(name)}">${escapeHtml(name)}</a></li>`).join('');
    const title = `Index of ${prefix}/files/`;
    return sendHtml(reply, 200, `<!doctype html>\n<html><head><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><ul><li><a href="${prefix}/">Parent Directory</a></li>${rows}</ul></body></html>\n`);
  });

  // Exact names only: no traversal here.
  app.get<{ Params: { name: string } }>('/files/:name', routeOptions, async (request, reply) => {
    const text = PUBLIC_FILES.includes(request.params.name) ? DEMO_FAKE_FILES.get(`${PUBLIC_FILES_DIR}/${request.params.name}`) : undefined;
    if (text === undefined) return sendHtml(reply, 404, page(prefix, 'Not found', '<p>No such file.</p>'));
    return reply.code(200).type('text/plain; charset=utf-8').send(text);
  });
};
