// The inspection bypass corpus (bypass-corpus.test.ts): requests that carry an attack a virtual
// patch names, written the way some origin framework would still read it, as raw HTTP/1.1 bytes.
// h2.test.ts sends the same shapes over HTTP/2 and expects the same verdicts.
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import type { Echo } from '../support/origin.ts';

export const SQLI = '1 union select password from users';
export const XSS = '<script>alert(document.cookie)</script>';

export type Header = [string, string];

export interface RawOptions {
  headers?: Header[];
  body?: Buffer | string;
  /** Send the body chunked (Transfer-Encoding) instead of with Content-Length. */
  chunked?: boolean;
}

/** One request as raw bytes, tagged with `x-shape` so the origin's copy can be found. */
export function raw(host: string, tag: string, method: string, target: string, options: RawOptions = {}): Buffer {
  const body = options.body === undefined ? undefined : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body, 'utf8');
  const lines = [`${method} ${target} HTTP/1.1`, `Host: ${host}`, `X-Shape: ${tag}`, 'Connection: close'];
  for (const [name, value] of options.headers ?? []) lines.push(`${name}: ${value}`);
  let payload = body ?? Buffer.alloc(0);
  if (body !== undefined) {
    if (options.chunked) {
      lines.push('Transfer-Encoding: chunked');
      const parts: Buffer[] = [];
      for (let i = 0; i < body.length; i += 7) {
        const chunk = body.subarray(i, i + 7);
        parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'));
      }
      parts.push(Buffer.from('0\r\n\r\n'));
      payload = Buffer.concat(parts);
    } else lines.push(`Content-Length: ${body.length}`);
  }
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload]);
}

export function multipart(parts: { name: string; value: string; filename?: string; headers?: string[] }[], boundary = 'aegisBoundary7MA4YWxk'): { body: string; type: string } {
  const lines: string[] = [];
  for (const part of parts) {
    lines.push(`--${boundary}`);
    lines.push(`Content-Disposition: form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ''}`);
    for (const header of part.headers ?? []) lines.push(header);
    if (part.filename !== undefined) lines.push('Content-Type: application/octet-stream');
    lines.push('', part.value);
  }
  lines.push(`--${boundary}--`, '');
  return { body: lines.join('\r\n'), type: `multipart/form-data; boundary=${boundary}` };
}

export const enc = encodeURIComponent;
export const json = (value: unknown) => JSON.stringify(value);
export const jsonHeaders = (type = 'application/json'): Header[] => [['Content-Type', type]];

export interface Shape {
  name: string;
  /** Builds the raw request for the site's host. */
  request: (host: string, tag: string) => Buffer;
  /** Set when the request may reach the origin: why that is harmless, and the check of what it received. */
  harmless?: { why: string; check: (echo: Echo) => boolean };
}

const get = (name: string, target: string, harmless?: Shape['harmless']): Shape => ({ name, request: (host, tag) => raw(host, tag, 'GET', target), ...(harmless ? { harmless } : {}) });
const order = (name: string, options: RawOptions, harmless?: Shape['harmless']): Shape => ({
  name,
  request: (host, tag) => raw(host, tag, 'POST', '/api/orders', options),
  ...(harmless ? { harmless } : {}),
});

const nested = (depth: number): string => `${'{"a":'.repeat(depth)}${json({ note: XSS })}${'}'.repeat(depth)}`;
const bomb = gzipSync(Buffer.alloc(60 * 1024 * 1024, 0x20), { level: 9 });

export const SHAPES: Shape[] = [
  // --- Paths: the patch is on /search -----------------------------------------------------------
  get('baseline', `/search?q=${enc(SQLI)}`),
  get('path in another case', `/Search?q=${enc(SQLI)}`),
  get('path in upper case', `/SEARCH?q=${enc(SQLI)}`),
  get('servlet path parameter', `/search;x?q=${enc(SQLI)}`),
  get('jsessionid path parameter', `/search;jsessionid=0F3A?q=${enc(SQLI)}`),
  get('encoded semicolon', `/search%3bx?q=${enc(SQLI)}`),
  get('trailing slash', `/search/?q=${enc(SQLI)}`),
  get('repeated slashes', `//search?q=${enc(SQLI)}`),
  get('dot segment', `/./search?q=${enc(SQLI)}`),
  get('dot-dot segment', `/static/../search?q=${enc(SQLI)}`),
  get('encoded dot-dot and slash', `/static%2f%2e%2e%2fsearch?q=${enc(SQLI)}`),
  get('percent-encoded letter', `/%73earch?q=${enc(SQLI)}`),
  get('backslash separator (IIS)', `/static%5c..%5csearch?q=${enc(SQLI)}`),
  get('overlong UTF-8 slash', `/static%c0%af..%c0%afsearch?q=${enc(SQLI)}`),
  get('IIS %u escape in the path', `/%u0073earch?q=${enc(SQLI)}`),
  get('NUL-terminated path', `/search%00.html?q=${enc(SQLI)}`),
  get('servlet ..; traversal', `/static/..;/search?q=${enc(SQLI)}`),
  get('absolute-form request target', `http://shop.example/search?q=${enc(SQLI)}`),
  // --- Parameter names ---------------------------------------------------------------------------
  get('array brackets (qs, PHP)', `/search?q[]=${enc(SQLI)}`),
  get('indexed brackets', `/search?q[0]=${enc(SQLI)}`),
  get('keyed brackets', `/search?q[term]=${enc(SQLI)}`),
  get('name in upper case (ASP.NET)', `/search?Q=${enc(SQLI)}`),
  get('percent-encoded name', `/search?%71=${enc(SQLI)}`),
  get('percent-encoded brackets', `/search?q%5B%5D=${enc(SQLI)}`),
  // --- Parameter pollution -----------------------------------------------------------------------
  get('attack in the last of two values', `/search?q=shoes&q=${enc(SQLI)}`),
  get('attack in the first of two values', `/search?q=${enc(SQLI)}&q=shoes`),
  get('attack split across values joined by ASP.NET', `/search?q=${enc('1 union/*')}&q=${enc('*/select password from users')}`),
  get('attack after 40 decoy values', `/search?${Array.from({ length: 40 }, (_, i) => `q=x${i}`).join('&')}&q=${enc(SQLI)}`),
  get('more parameters than the gateway inspects', `/search?${Array.from({ length: 4200 }, (_, i) => `p${i}=1`).join('&')}&q=${enc(SQLI)}`),
  // --- Value encodings ---------------------------------------------------------------------------
  get('keywords in mixed case', `/search?q=${enc('1 UnIoN SeLeCt password from users')}`),
  get('plus as space', `/search?q=1+union+select+password+from+users`),
  get('tab and newline as whitespace', `/search?q=1%09union%0Aselect%0Dpassword from users`),
  get('vertical tab as whitespace (MySQL)', `/search?q=1%0Bunion%0Bselect%0Bpassword`),
  get('inline comment as whitespace', `/search?q=${enc('1 union/**/select password from users')}`),
  get('MySQL versioned comment', `/search?q=${enc('1 /*!50000union*/ /*!50000select*/ password from users')}`),
  get('UNION ALL', `/search?q=${enc('1 union all select password from users')}`),
  get('IIS %u escapes', `/search?q=1%u0020union%u0020select%u0020password`),
  get('overlong UTF-8 spaces', `/search?q=1%c0%a0union%c0%a0select%c0%a0password`),
  get('NUL inside a keyword', `/search?q=1 uni%00on sel%00ect password`.replace(/ /g, '%20')),
  get('attack after 20 KB of padding', `/search?q=${'a'.repeat(20_000)}%20${enc(SQLI)}`),
  get('double percent-encoding', `/search?q=${enc(enc(SQLI))}`, {
    why: 'the origin decodes once and receives `1%20union%20select…`: a percent sign is not whitespace in SQL, so no statement is formed',
    check: (echo) => !/union\s+select/i.test(new URL(echo.url, 'http://x').searchParams.get('q') ?? ''),
  }),
  get('full-width letters', `/search?q=${enc('1 ｕｎｉｏｎ ｓｅｌｅｃｔ password')}`, {
    why: 'no SQL engine reads full-width letters as keywords; the origin receives them as they are',
    check: (echo) => new URL(echo.url, 'http://x').searchParams.get('q')!.includes('ｕｎｉｏｎ'),
  }),
  {
    name: 'raw spaces in the request target',
    request: (host, tag) => raw(host, tag, 'GET', `/search?q=${SQLI}`),
  },
  // --- Methods and places the origin also reads ---------------------------------------------------
  { name: 'HEAD answered by the GET handler', request: (host, tag) => raw(host, tag, 'HEAD', `/search?q=${enc(SQLI)}`) },
  { name: 'POST to the GET route (app.all, $_REQUEST)', request: (host, tag) => raw(host, tag, 'POST', `/search?q=${enc(SQLI)}`, { headers: [['Content-Type', 'text/plain']], body: 'x' }) },
  { name: 'q in a form body of a GET', request: (host, tag) => raw(host, tag, 'GET', '/search', { headers: [['Content-Type', 'application/x-www-form-urlencoded']], body: `q=${enc(SQLI)}` }) },
  { name: 'q in a JSON body of a GET', request: (host, tag) => raw(host, tag, 'GET', '/search', { headers: jsonHeaders(), body: json({ q: SQLI }) }) },
  // --- Bodies: the patch is on POST /api/orders field note -----------------------------------------
  order('JSON baseline', { headers: jsonHeaders(), body: json({ note: XSS }) }),
  order('gzip-compressed JSON', { headers: [...jsonHeaders(), ['Content-Encoding', 'gzip']], body: gzipSync(json({ note: XSS })) }),
  order('deflate-compressed JSON', { headers: [...jsonHeaders(), ['Content-Encoding', 'deflate']], body: deflateSync(json({ note: XSS })) }),
  order('raw-deflate JSON', { headers: [...jsonHeaders(), ['Content-Encoding', 'deflate']], body: deflateRawSync(json({ note: XSS })) }),
  order('brotli-compressed JSON', { headers: [...jsonHeaders(), ['Content-Encoding', 'br']], body: brotliCompressSync(json({ note: XSS })) }),
  order('gzip twice', { headers: [...jsonHeaders(), ['Content-Encoding', 'gzip, gzip']], body: gzipSync(gzipSync(json({ note: XSS }))) }),
  order('coding name in upper case', { headers: [...jsonHeaders(), ['Content-Encoding', 'GZIP']], body: gzipSync(json({ note: XSS })) }),
  order('a coding the gateway cannot decode', { headers: [...jsonHeaders(), ['Content-Encoding', 'compress']], body: json({ note: XSS }) }),
  order('corrupt gzip data', { headers: [...jsonHeaders(), ['Content-Encoding', 'gzip']], body: Buffer.concat([gzipSync(json({ note: XSS })).subarray(0, 20), Buffer.from('garbage')]) }),
  order('decompression bomb', { headers: [...jsonHeaders(), ['Content-Encoding', 'gzip']], body: bomb }),
  order('multipart field', (() => {
    const m = multipart([{ name: 'note', value: XSS }]);
    return { headers: [['Content-Type', m.type]], body: m.body };
  })()),
  order('multipart field name in another case', (() => {
    const m = multipart([{ name: 'item', value: 'book' }, { name: 'NOTE', value: XSS }]);
    return { headers: [['Content-Type', m.type]], body: m.body };
  })()),
  order('multipart with a quoted, unusual boundary', (() => {
    const m = multipart([{ name: 'note', value: XSS }], "'()+_,-./:=? weird");
    return { headers: [['Content-Type', `multipart/form-data; boundary="'()+_,-./:=? weird"`]], body: m.body };
  })()),
  order('multipart file part named like the field', (() => {
    const m = multipart([{ name: 'note', value: XSS, filename: 'note.txt' }]);
    return { headers: [['Content-Type', m.type]], body: m.body };
  })()),
  order('multipart part in base64 transfer encoding', (() => {
    const m = multipart([{ name: 'note', value: Buffer.from(XSS).toString('base64'), headers: ['Content-Transfer-Encoding: base64'] }]);
    return { headers: [['Content-Type', m.type]], body: m.body };
  })()),
  order('multipart without its closing boundary', (() => {
    const m = multipart([{ name: 'note', value: XSS }]);
    return { headers: [['Content-Type', m.type]], body: m.body.slice(0, m.body.lastIndexOf('--aegis')) };
  })()),
  order('multipart sent with a mixed-case media type', (() => {
    const m = multipart([{ name: 'note', value: XSS }]);
    return { headers: [['Content-Type', m.type.replace('multipart/form-data', 'Multipart/Form-Data')]], body: m.body };
  })()),
  order('JSON sent as text/plain', { headers: jsonHeaders('text/plain'), body: json({ note: XSS }) }),
  order('JSON without a content type', { body: json({ note: XSS }) }),
  order('JSON sent as a form', { headers: jsonHeaders('application/x-www-form-urlencoded'), body: json({ note: XSS }) }),
  order('JSON sent as application/octet-stream', { headers: jsonHeaders('application/octet-stream'), body: json({ note: XSS }) }),
  order('JSON with a vendor media type', { headers: jsonHeaders('application/vnd.shop+json'), body: json({ note: XSS }) }),
  order('JSON unicode escapes', { headers: jsonHeaders(), body: '{"note":"\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"}' }),
  order('duplicate JSON keys, attack first', { headers: jsonHeaders(), body: `{"note":${json(XSS)},"note":"thanks"}` }),
  order('duplicate JSON keys, attack last', { headers: jsonHeaders(), body: `{"note":"thanks","note":${json(XSS)}}` }),
  order('field nested in an object', { headers: jsonHeaders(), body: json({ order: { lines: [{ sku: 'b1' }], note: XSS } }) }),
  order('field in an array of objects', { headers: jsonHeaders(), body: json([{ note: 'ok' }, { note: XSS }]) }),
  order('field name in another case', { headers: jsonHeaders(), body: json({ Note: XSS }) }),
  order('value as an array', { headers: jsonHeaders(), body: json({ note: ['fine', XSS] }) }),
  order('JSON with a byte-order mark', { headers: jsonHeaders(), body: `\ufeff${json({ note: XSS })}` }),
  order('JSON with comments (lenient parsers)', { headers: jsonHeaders(), body: `{"note": /* c */ ${json(XSS)}}` }),
  order('JSON with single quotes (lenient parsers)', { headers: jsonHeaders(), body: `{'note': '${XSS}'}` }),
  order('JSON with a trailing comma', { headers: jsonHeaders(), body: `{"note": ${json(XSS)},}` }),
  order('JSON nested 200 deep', { headers: jsonHeaders(), body: nested(200) }),
  order('JSON in UTF-16', { headers: jsonHeaders('application/json; charset=utf-16le'), body: Buffer.from(json({ note: XSS }), 'utf16le') }),
  order('form in EBCDIC (IBM037)', { headers: jsonHeaders('application/x-www-form-urlencoded; charset=ibm037'), body: Buffer.from('notefoo') }),
  order('JSON in UTF-7', { headers: jsonHeaders('application/json; charset=utf-7'), body: '{"note":"+ADw-script+AD4-alert(1)"}' }),
  order('form body', { headers: jsonHeaders('application/x-www-form-urlencoded'), body: `note=${enc(XSS)}` }),
  order('form field with brackets', { headers: jsonHeaders('application/x-www-form-urlencoded'), body: `note[]=${enc(XSS)}` }),
  order('form body sent as text/plain', { headers: jsonHeaders('text/plain'), body: `note=${enc(XSS)}` }),
  order('chunked body', { headers: jsonHeaders(), body: json({ note: XSS }), chunked: true }),
  order('body larger than the inspection cap', { headers: jsonHeaders(), body: json({ pad: 'x'.repeat(200 * 1024), note: XSS }) }),
  order('two Content-Type headers', { headers: [['Content-Type', 'text/plain'], ['Content-Type', 'application/json']], body: json({ note: XSS }) }),
  {
    name: 'Content-Type folded across lines (obs-fold)',
    request: (host, tag) => raw(host, tag, 'POST', '/api/orders', { headers: [['Content-Type', 'text/plain\r\n application/json']], body: json({ note: XSS }) }),
  },
  {
    name: 'Content-Length and Transfer-Encoding together',
    request: (host, tag) => raw(host, tag, 'POST', '/api/orders', { headers: [...jsonHeaders(), ['Content-Length', '4']], body: json({ note: XSS }), chunked: true }),
  },
  {
    name: 'unknown Transfer-Encoding',
    request: (host, tag) => Buffer.from(`POST /api/orders HTTP/1.1\r\nHost: ${host}\r\nX-Shape: ${tag}\r\nContent-Type: application/json\r\nTransfer-Encoding: xchunked\r\nConnection: close\r\n\r\n${json({ note: XSS })}`),
  },
  order('attack in a different parameter', { headers: jsonHeaders(), body: json({ comment: XSS }) }, {
    why: 'not the patched field, but managed rules see every parameter; if the request got through, this check fails',
    check: () => false,
  }),
];
