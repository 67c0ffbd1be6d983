// The parts of Go's net/url that decide what gotestwaf puts on the wire. gotestwaf builds a URL
// string with the (encoded) payload in it, `http.NewRequest` parses it with url.Parse, and the
// client writes `URL.RequestURI()`: the fragment is dropped, the query goes out as written, and
// the path goes out as written when it is validly encoded, else decoded and re-escaped. A URL
// with a control character or a bad percent-escape in its path cannot be built at all.
// Worked on bytes (UTF-8), as Go's strings are.

const HEX = '0123456789ABCDEF';
const isAlnum = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isHex = (c: number | undefined): boolean => c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
const chars = (s: string): Set<number> => new Set([...s].map((c) => c.charCodeAt(0)));

const UNRESERVED = chars('-_.~');
/** Reserved characters url.PathEscape (mode encodePathSegment) leaves alone. */
const SEGMENT_KEEPS = chars('$&+:=@');
/** Reserved characters escape(_, encodePath) leaves alone: all but `?`. */
const PATH_KEEPS = chars('$&+,/:;=@');
/** What validEncoded(_, encodePath) accepts besides what encodePath leaves alone. */
const VALID_IN_ENCODED_PATH = chars("!$&'()*+,;=:@[]%");

function escapeBytes(bytes: Uint8Array, keep: (c: number) => boolean): string {
  let out = '';
  for (const c of bytes) out += keep(c) ? String.fromCharCode(c) : `%${HEX[c >> 4]}${HEX[c & 15]}`;
  return out;
}

const utf8 = (s: string): Uint8Array => Buffer.from(s, 'utf8');
const keepInPath = (c: number): boolean => isAlnum(c) || UNRESERVED.has(c) || PATH_KEEPS.has(c);

/** Go's url.PathEscape: what gotestwaf's URL encoder does to a payload. */
export function pathEscape(s: string): string {
  return escapeBytes(utf8(s), (c) => isAlnum(c) || UNRESERVED.has(c) || SEGMENT_KEEPS.has(c));
}

/** Go's unescape in path mode: the bytes, or null for a bad escape (url.Parse fails). */
function unescapePath(s: string): Uint8Array | null {
  const src = utf8(s);
  const out: number[] = [];
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c !== 0x25) {
      out.push(c);
      continue;
    }
    if (!isHex(src[i + 1]) || !isHex(src[i + 2])) return null;
    out.push(parseInt(String.fromCharCode(src[i + 1]!, src[i + 2]!), 16));
    i += 2;
  }
  return Uint8Array.from(out);
}

const validEncodedPath = (s: string): boolean => [...utf8(s)].every((c) => VALID_IN_ENCODED_PATH.has(c) || keepInPath(c));
const hasControl = (s: string): boolean => /[\x00-\x1f\x7f]/.test(s);

export interface RequestTarget {
  /** The request-target as written on the wire. */
  target: string;
  /**
   * Bytes of the query that Go writes raw but that cannot be on a request line (space, bytes past
   * ASCII) were percent-encoded here: Go would send an invalid request line that some servers
   * read and others refuse, and undici refuses to send it.
   */
  queryEscaped: boolean;
}

/**
 * The request-target gotestwaf's Go client sends for a URL whose path and query (after the
 * authority) are `pathAndQuery`, or null when Go cannot build the request.
 */
export function goRequestTarget(pathAndQuery: string): RequestTarget | null {
  const hash = pathAndQuery.indexOf('#');
  const beforeFragment = hash < 0 ? pathAndQuery : pathAndQuery.slice(0, hash);
  if (hash >= 0 && unescapePath(pathAndQuery.slice(hash + 1)) === null) return null;
  if (hasControl(beforeFragment)) return null;
  const q = beforeFragment.indexOf('?');
  const rawPath = q < 0 ? beforeFragment : beforeFragment.slice(0, q);
  const decoded = unescapePath(rawPath);
  if (decoded === null) return null;
  const path = validEncodedPath(rawPath) ? rawPath : escapeBytes(decoded, keepInPath);
  if (q < 0) return { target: path || '/', queryEscaped: false };
  const rawQuery = beforeFragment.slice(q + 1);
  const query = escapeBytes(utf8(rawQuery), (c) => c > 0x20 && c < 0x7f);
  return { target: `${path || '/'}?${query}`, queryEscaped: query !== rawQuery };
}
