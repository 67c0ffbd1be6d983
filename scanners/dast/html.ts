// Just enough HTML reading for a crawler and for judging reflections: a tag scanner that skips
// comments and the raw-text bodies of script/style (so markup inside them is not mistaken for
// links), attribute parsing with entity decoding, and a test for text-only contexts.

export interface Tag {
  /** Lower case. */
  name: string;
  closing: boolean;
  /** Lower-case attribute names; values entity-decoded; valueless attributes map to ''. */
  attrs: Map<string, string>;
  start: number;
  end: number;
}

const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9:-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>/y;
const ATTR = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
// Elements whose content is not markup: skipped to their end tag. (noscript is left out: its
// links are real for a browser without script.)
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp']);

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);?/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[ref.toLowerCase()] ?? whole;
  });
}

export function parseAttributes(text: string): Map<string, string> {
  const attrs = new Map<string, string>();
  for (const m of text.matchAll(ATTR)) {
    const name = m[1]!.toLowerCase();
    if (!attrs.has(name)) attrs.set(name, decodeEntities(m[2] ?? m[3] ?? m[4] ?? ''));
  }
  return attrs;
}

/** Tags in document order. Raw-text elements (script, style, textarea, title…) yield their start tag only. */
export function* scanTags(html: string): Generator<Tag> {
  let pos = 0;
  while (pos < html.length) {
    const lt = html.indexOf('<', pos);
    if (lt < 0) return;
    if (html.startsWith('<!--', lt)) {
      const close = html.indexOf('-->', lt + 4);
      if (close < 0) return;
      pos = close + 3;
      continue;
    }
    TAG.lastIndex = lt;
    const m = TAG.exec(html);
    if (!m) {
      pos = lt + 1;
      continue;
    }
    const name = m[2]!.toLowerCase();
    const closing = m[1] === '/';
    yield { name, closing, attrs: closing ? new Map() : parseAttributes(m[3]!), start: lt, end: TAG.lastIndex };
    pos = TAG.lastIndex;
    if (!closing && RAW_TEXT.has(name)) {
      const endTag = html.toLowerCase().indexOf(`</${name}`, pos);
      if (endTag < 0) return;
      pos = endTag;
    }
  }
}

/** The text content of a raw-text element starting right after `tag` (e.g. a textarea's default). */
export function rawTextAfter(html: string, tag: Tag): string {
  const close = html.toLowerCase().indexOf(`</${tag.name}`, tag.end);
  return decodeEntities(html.slice(tag.end, close < 0 ? undefined : close));
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/**
 * Whether `index` falls where injected markup stays text: inside a comment or a textarea, title,
 * xmp or noscript element. A reflection there is not exploitable without closing the element.
 */
export function inInertContext(html: string, index: number): boolean {
  const before = html.slice(0, index).toLowerCase();
  const comment = before.lastIndexOf('<!--');
  if (comment >= 0 && before.indexOf('-->', comment + 4) < 0) return true;
  for (const name of ['textarea', 'title', 'xmp', 'noscript']) {
    const open = before.lastIndexOf(`<${name}`);
    if (open >= 0 && before.indexOf(`</${name}`, open) < 0) return true;
  }
  return false;
}
