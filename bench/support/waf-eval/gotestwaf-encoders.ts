// gotestwaf's payload encoders (internal/payload/encoder), by the name its test cases use, with
// the name this evaluation reports them under.
import { pathEscape } from './go-url.ts';

/** Go's xml.EscapeString: quotes, markup, tab and line ends as character references; characters XML cannot hold become U+FFFD. */
function xmlEscape(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    const named: Record<string, string> = { '"': '&#34;', "'": '&#39;', '&': '&amp;', '<': '&lt;', '>': '&gt;', '\t': '&#x9;', '\n': '&#xA;', '\r': '&#xD;' };
    if (named[ch]) out += named[ch];
    else if ((c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff)) out += ch;
    else out += '\ufffd';
  }
  return out;
}

export interface Encoder {
  /** The name in this evaluation's tables and JSON. */
  label: string;
  encode(payload: string): string;
}

export const ENCODERS: Record<string, Encoder> = {
  Plain: { label: 'plain', encode: (s) => s },
  // url.PathEscape, not QueryEscape: `/`, `?` and spaces become %2F, %3F, %20; `&`, `=`, `+` stay.
  URL: { label: 'url', encode: pathEscape },
  Base64: { label: 'base64', encode: (s) => Buffer.from(s, 'utf8').toString('base64') },
  Base64Flat: { label: 'base64_flat', encode: (s) => Buffer.from(s, 'utf8').toString('base64').replace(/=/g, '') },
  // Every UTF-16 code unit as \uXXXX, lower-case hex.
  JSUnicode: { label: 'js_unicode', encode: (s) => [...Array(s.length).keys()].map((i) => `\\u${s.charCodeAt(i).toString(16).padStart(4, '0')}`).join('') },
  // Go's xml.Encoder.Encode of a string: an element named `string` around the escaped text.
  XMLEntity: { label: 'xml_entity', encode: (s) => `<string>${xmlEscape(s)}</string>` },
};
