// multipart/form-data as every mainstream parser reads it alike. Parsers disagree at the edges of
// RFC 2046 and RFC 7578: a delimiter line with transport padding (`--AAA   `) is a delimiter to
// Werkzeug and content to busboy; a part whose disposition is `attachment` is a field to Werkzeug
// and nothing to busboy; a part in UTF-16 is gibberish to one and text to another; folded part
// headers, LF-only delimiters, RFC 2231 `name*=` and transfer encodings split them further. The
// gateway inspects with busboy, so a body outside the shape they all agree on is refused rather
// than forwarded for the origin to read differently. This is a linear scan of the raw body; busboy
// then reads what passed.

/** Charsets whose bytes read as the same ASCII in every parser: a part or form in anything else is refused. */
export const ASCII_COMPATIBLE_CHARSETS: ReadonlySet<string> = new Set([
  'utf-8',
  'utf8',
  'us-ascii',
  'ascii',
  'iso-8859-1',
  'iso8859-1',
  'latin1',
  'l1',
  'windows-1252',
  'cp1252',
]);

import { headerParams } from './content-type.ts';

const PLAIN_TRANSFER_ENCODINGS = new Set(['7bit', '8bit', 'binary']);
/** RFC 2046 bchars: what a boundary may be made of (a space only inside, never last). */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;

/** The boundary of a multipart Content-Type, or why it has none parsers agree on. */
export function multipartBoundary(contentType: string): { boundary: string } | { ambiguous: string } {
  const parsed = headerParams(contentType);
  if (!parsed) return { ambiguous: 'the Content-Type parameters cannot be read' };
  const boundaries = parsed.params.get('boundary') ?? [];
  if (boundaries.length !== 1) return { ambiguous: boundaries.length === 0 ? 'no boundary' : 'the boundary is given more than once' };
  const boundary = boundaries[0]!;
  if (!BOUNDARY.test(boundary)) return { ambiguous: 'the boundary is not 1–70 RFC 2046 characters' };
  return { boundary };
}

/**
 * Why parsers could read this multipart body differently, or null when they read it alike. A body
 * with no boundary at all is null here: no parser splits it, and the caller refuses it as
 * unparsable.
 */
export function ambiguousMultipart(body: Buffer, contentType: string): string | null {
  const found = multipartBoundary(contentType);
  if ('ambiguous' in found) return found.ambiguous === 'no boundary' ? null : found.ambiguous;
  const text = body.toString('latin1');
  const dash = `--${found.boundary}`;
  const parts: string[] = [];
  let closed = false;
  let partStart = -1;
  for (let at = text.indexOf(dash); at !== -1; at = text.indexOf(dash, at + dash.length)) {
    // The boundary never occurs in content (RFC 2046 has senders choose it so): anywhere but at the
    // start of a CRLF line, some parser (Werkzeug, PHP) would take it for a delimiter anyway.
    if (at !== 0 && text.slice(at - 2, at) !== '\r\n') return text[at - 1] === '\n' ? 'a delimiter line follows a bare LF' : 'the boundary occurs inside a line';
    const after = text.slice(at + dash.length, at + dash.length + 2);
    const isClose = after === '--';
    if (!isClose && after !== '\r\n') return `a line starts with the boundary but is not a delimiter (${JSON.stringify(text.slice(at, at + dash.length + 6))})`;
    if (partStart !== -1) parts.push(text.slice(partStart, at - 2));
    if (isClose) {
      closed = true;
      break;
    }
    partStart = at + dash.length + 2;
  }
  if (parts.length === 0 && !closed) return 'no delimiter line';
  if (!closed) return 'no closing delimiter';
  for (const part of parts) {
    const problem = ambiguousPart(part);
    if (problem) return problem;
  }
  return null;
}

function ambiguousPart(part: string): string | null {
  const end = part.indexOf('\r\n\r\n');
  if (end === -1) return 'a part has no blank line after its headers';
  const seen = new Map<string, string>();
  for (const line of part.slice(0, end).split('\r\n')) {
    if (line === '') continue;
    if (line.startsWith(' ') || line.startsWith('\t')) return 'a part header is folded over lines';
    if (line.includes('\n') || line.includes('\r')) return 'a part header line ends with a bare LF or CR';
    const colon = line.indexOf(':');
    if (colon <= 0) return 'a part header line has no name';
    const name = line.slice(0, colon).trim().toLowerCase();
    if (seen.has(name)) return `a part repeats ${name}`;
    seen.set(name, line.slice(colon + 1).trim());
  }
  const disposition = seen.get('content-disposition');
  if (disposition === undefined) return 'a part has no Content-Disposition';
  const parsed = headerParams(disposition);
  if (!parsed) return 'a Content-Disposition cannot be read';
  if (parsed.value !== 'form-data') return `a part's disposition is ${parsed.value}, not form-data`;
  if ((parsed.params.get('name') ?? []).length !== 1) return 'a part has no name, or more than one';
  if ((parsed.params.get('filename') ?? []).length > 1) return 'a part names its file more than once';
  if (parsed.params.has('name*') || parsed.params.has('filename*')) return 'a part uses RFC 2231 extended parameters (name*, filename*)';
  const type = seen.get('content-type');
  if (type !== undefined) {
    const charset = headerParams(type)?.params.get('charset');
    if (charset && charset.some((c) => !ASCII_COMPATIBLE_CHARSETS.has(c.toLowerCase()))) return `a part is in charset ${charset.join(', ')}`;
  }
  const coding = seen.get('content-transfer-encoding');
  if (coding !== undefined && !PLAIN_TRANSFER_ENCODINGS.has(coding.toLowerCase())) return `a part has Content-Transfer-Encoding ${coding}`;
  return null;
}
