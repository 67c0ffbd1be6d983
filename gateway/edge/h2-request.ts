// An HTTP/2 request, read the way HTTP/1.1 carries the same message (RFC 9113 §8.3.1, §8.2.3), so
// that every rule sees exactly what it would see over HTTP/1.1 and the origin receives what an
// HTTP/1.1 client would have sent:
//
//   - pseudo-headers (`:method`, `:path`, `:scheme`, `:authority`) are the request line, not
//     headers: they are removed from the header list (method and URL still come from them);
//   - `:authority` is the Host, written first as an HTTP/1.1 client writes it; a Host header that
//     names something else as well makes the request malformed (§8.3.1);
//   - cookie crumbs (one `cookie` field per cookie, as HPACK prefers) are joined with "; " into one
//     Cookie header;
//   - repeated headers are combined by node:http's own rules (IncomingMessage#_addHeaderLine):
//     node:http2 keeps only the first of some names (`content-encoding`, …) that node:http joins,
//     which would let a second coding hide from inspection over one protocol and not the other.
//
// The request object keeps its prototype; `headers` and `rawHeaders` become own properties.
import { IncomingMessage, type IncomingHttpHeaders } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';

type HeaderLine = (this: { joinDuplicateHeaders: boolean }, field: string, value: string, dest: IncomingHttpHeaders) => void;

const addHeaderLine = (IncomingMessage.prototype as unknown as { _addHeaderLine?: HeaderLine })._addHeaderLine;
if (typeof addHeaderLine !== 'function') throw new Error('node:http has no IncomingMessage.prototype._addHeaderLine: gateway/edge/h2-request.ts cannot combine headers as HTTP/1.1 does');
/** The plain listener's node:http server runs with the default: duplicates of single-value headers dropped. */
const HTTP1_OPTIONS = { joinDuplicateHeaders: false };

/** `headers` as node:http builds them from a raw list (name, value, name, value, …). */
export function headersAsHttp1(rawHeaders: readonly string[]): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  for (let i = 0; i < rawHeaders.length; i += 2) addHeaderLine!.call(HTTP1_OPTIONS, rawHeaders[i]!, rawHeaders[i + 1]!, headers);
  return headers;
}

/** The raw header list of an HTTP/2 request as HTTP/1.1 would carry it; null when `:authority` and Host disagree. */
export function http1RawHeaders(raw: readonly string[]): string[] | null {
  let authority: string | undefined;
  const hosts: string[] = [];
  const out: string[] = [];
  let cookieAt = -1;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    if (name.charCodeAt(0) === 58) {
      if (name === ':authority') authority = value;
      continue;
    }
    if (name === 'host') hosts.push(value);
    else if (name === 'cookie') {
      if (cookieAt === -1) {
        cookieAt = out.length;
        out.push('cookie', value);
      } else out[cookieAt + 1] += `; ${value}`;
      continue;
    }
    out.push(name, value);
  }
  if (authority === undefined) return out;
  const lower = authority.toLowerCase();
  if (hosts.some((host) => host.toLowerCase() !== lower)) return null;
  const withoutHost: string[] = ['host', authority];
  for (let i = 0; i < out.length; i += 2) if (out[i] !== 'host') withoutHost.push(out[i]!, out[i + 1]!);
  return withoutHost;
}

/**
 * The header list's size as HTTP/2 counts it (RFC 9113 §6.5.2: name, value and 32 bytes per field,
 * pseudo-headers included). node:http2 enforces SETTINGS_MAX_HEADER_LIST_SIZE only once the client
 * has acknowledged our SETTINGS, so the first requests of a connection are measured here.
 */
export function headerListSize(raw: readonly string[]): number {
  let size = 0;
  for (let i = 0; i < raw.length; i += 2) size += Buffer.byteLength(raw[i]!) + Buffer.byteLength(raw[i + 1]!) + 32;
  return size;
}

/**
 * Rewrites the request's headers in place. `too_large` past `maxHeadBytes` (the limit HTTP/1.1
 * answers 431 at), `bad_host` when its `:authority` and Host disagree.
 */
export function readAsHttp1(req: Http2ServerRequest, maxHeadBytes: number): 'ok' | 'too_large' | 'bad_host' {
  if (headerListSize(req.rawHeaders) > maxHeadBytes) return 'too_large';
  const raw = http1RawHeaders(req.rawHeaders);
  if (raw === null) return 'bad_host';
  Object.defineProperty(req, 'rawHeaders', { value: raw, enumerable: true, configurable: true, writable: true });
  Object.defineProperty(req, 'headers', { value: headersAsHttp1(raw), enumerable: true, configurable: true, writable: true });
  return 'ok';
}
