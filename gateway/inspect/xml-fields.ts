// Reads an XML body (SOAP, XML-RPC, an XML API) into fields the way an application bound to it sees
// its parameters: each element's text and each attribute's value, character references decoded, under
// the element's or attribute's local name. Rules that read parameter values then see what sits in
// `<name>…</name>` or `<a probe="…">` as they see a form field, where before only the rules that read a
// whole body did.
//
// Lenient on purpose: an attacker's document need not be well formed, and the parser behind the
// origin may accept what a strict one refuses. Declarations (`<?xml …?>`, `<!DOCTYPE …>`, the XXE
// rules' business, which read the body whole) and comments are skipped, CDATA sections are text,
// namespace declarations are no values. No entity is expanded: only the predefined and numeric
// references are decoded. One pass with indexOf, linear in the body.

/** Where the fields go: false when no more are taken. */
export type XmlSink = (path: string, name: string, value: string) => boolean;

const PREDEFINED: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
const REFERENCE = /&(?:#x([0-9a-f]{1,6})|#(\d{1,7})|(lt|gt|amp|quot|apos));/gi;
const TAG_NAME = /^\/?\s*([^\s/>]+)/;
/** Deeper elements push out the outermost: closing tags are matched among this many open ones. */
const MAX_DEPTH = 64;
/** Names in a field's path: the innermost ones. */
const PATH_NAMES = 16;

function decodeReferences(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(REFERENCE, (match: string, hex: string | undefined, dec: string | undefined, name: string | undefined) => {
    if (name !== undefined) return PREDEFINED[name.toLowerCase()]!;
    const code = hex !== undefined ? Number.parseInt(hex, 16) : Number(dec);
    return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : match;
  });
}

const localName = (qualified: string): string => qualified.slice(qualified.indexOf(':') + 1).toLowerCase();

/** The index just past the first `close` from `at`; the body's end when there is none. */
function endOf(text: string, at: number, close: string): number {
  const end = text.indexOf(close, at);
  return end < 0 ? text.length : end + close.length;
}

/** The end of a tag starting at `at` (`<`), quotes respected: the index after its `>`. */
function tagEnd(text: string, at: number): number {
  let quote = 0;
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (quote !== 0) {
      if (c === quote) quote = 0;
    } else if (c === 34 || c === 39) quote = c;
    else if (c === 62) return i + 1;
  }
  return text.length;
}

const isSpace = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13;

/**
 * Hands each attribute of a tag's text after its name to `each` as name and value (quoted or bare;
 * names without a value skipped) until it says stop. A scan by hand: a regular expression here
 * would backtrack over a long run of name characters at every start.
 */
function forEachAttribute(tag: string, at: number, each: (name: string, value: string) => boolean): boolean {
  const n = tag.length;
  while (at < n) {
    while (at < n && (isSpace(tag.charCodeAt(at)) || tag.charCodeAt(at) === 47 /* / */)) at++;
    const nameStart = at;
    while (at < n && !isSpace(tag.charCodeAt(at)) && tag.charCodeAt(at) !== 61 /* = */ && tag.charCodeAt(at) !== 47) at++;
    const nameEnd = at;
    while (at < n && isSpace(tag.charCodeAt(at))) at++;
    if (at >= n || tag.charCodeAt(at) !== 61) {
      if (at === nameStart) at++;
      continue;
    }
    at++;
    while (at < n && isSpace(tag.charCodeAt(at))) at++;
    const quote = tag.charCodeAt(at);
    const start = quote === 34 || quote === 39 ? at + 1 : at;
    let end: number;
    if (start > at) {
      end = tag.indexOf(quote === 34 ? '"' : "'", start);
      if (end < 0) end = n;
      at = end + 1;
    } else {
      while (at < n && !isSpace(tag.charCodeAt(at))) at++;
      end = at;
    }
    if (nameEnd > nameStart && !each(tag.slice(nameStart, nameEnd), tag.slice(start, end))) return false;
  }
  return true;
}

/** Whether a text body is XML by its start (a declaration or a root element), for untyped bodies. */
export const looksLikeXml = (text: string): boolean => /^\s*<(?:\?xml\b|[a-z_][\w.:-]*[\s/>])/i.test(text);

/** Hands every element text and attribute value of `text` to `sink`, until it says stop. */
export function scanXml(text: string, sink: XmlSink): void {
  const open: string[] = [];
  const path = (): string => (open.length > PATH_NAMES ? open.slice(-PATH_NAMES) : open).join('.');
  let at = 0;
  let cdata = '';
  const flushText = (raw: string): boolean => {
    const value = (cdata + decodeReferences(raw)).trim();
    cdata = '';
    const name = open[open.length - 1];
    return value === '' || name === undefined || sink(path(), name, value);
  };
  while (at < text.length) {
    const lt = text.indexOf('<', at);
    const textEnd = lt < 0 ? text.length : lt;
    if (lt < 0 || !text.startsWith('<![CDATA[', lt)) {
      if (!flushText(text.slice(at, textEnd))) return;
    } else {
      cdata += decodeReferences(text.slice(at, textEnd));
    }
    if (lt < 0) return;
    if (text.startsWith('<!--', lt)) at = endOf(text, lt + 4, '-->');
    else if (text.startsWith('<![CDATA[', lt)) {
      const end = text.indexOf(']]>', lt + 9);
      cdata += text.slice(lt + 9, end < 0 ? text.length : end);
      at = end < 0 ? text.length : end + 3;
    } else if (text.startsWith('<?', lt)) at = endOf(text, lt + 2, '?>');
    else if (text.startsWith('<!', lt)) {
      // A DOCTYPE's internal subset holds `>` of its own: it ends at `]>`. The `[` is looked for
      // before the first `>` only, so a run of declarations is not searched to the end each time.
      const close = text.indexOf('>', lt);
      const end = close < 0 ? text.length : close;
      let bracket = -1;
      for (let i = lt + 2; i < end && bracket < 0; i++) if (text.charCodeAt(i) === 91 /* [ */) bracket = i;
      at = bracket >= 0 ? endOf(text, bracket, ']>') : Math.min(end + 1, text.length);
    } else {
      at = tagEnd(text, lt);
      const tag = text.slice(lt + 1, text.charCodeAt(at - 1) === 62 ? at - 1 : at);
      const match = TAG_NAME.exec(tag);
      if (match === null) continue;
      const local = localName(match[1]!);
      if (tag.startsWith('/')) {
        const depth = open.lastIndexOf(local);
        if (depth >= 0) open.length = depth;
        continue;
      }
      if (open.length >= MAX_DEPTH) open.shift();
      open.push(local);
      const more = forEachAttribute(tag, match[0].length, (name, raw) => {
        const attribute = name.toLowerCase();
        if (attribute === 'xmlns' || attribute.startsWith('xmlns:')) return true;
        const value = decodeReferences(raw);
        return value === '' || sink(`${path()}@${attribute}`, localName(attribute), value);
      });
      if (!more) return;
      if (tag.endsWith('/')) open.pop();
    }
  }
}
