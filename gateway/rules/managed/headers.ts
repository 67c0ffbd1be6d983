// Which request headers the managed rules read as free text (the `header` target). Attack tools put
// payloads in any header an application might log or echo (X-Forwarded-For, X-Api-Version, a
// made-up X-Foo); headers whose grammar the gateway or the browser fixes are left out, because their
// punctuation (`*/*;q=0.8`, `"Chromium";v="124"`) is not input and would only cost false positives:
// the Cookie header is parsed into fields, User-Agent and Referer are targets of their own.
import type { IncomingHttpHeaders } from 'node:http';

const STRUCTURED: ReadonlySet<string> = new Set([
  'host', 'content-length', 'content-type', 'content-encoding', 'transfer-encoding', 'accept', 'accept-encoding', 'accept-language',
  'accept-charset', 'connection', 'keep-alive', 'proxy-connection', 'cookie', 'user-agent', 'referer', 'authorization',
  'proxy-authorization', 'cache-control', 'pragma', 'if-none-match', 'if-match', 'if-modified-since', 'if-unmodified-since', 'if-range',
  'range', 'upgrade-insecure-requests', 'upgrade', 'te', 'dnt', 'priority', 'expect', 'origin', 'content-md5', 'x-request-id',
  'traceparent', 'tracestate', 'baggage', 'x-amzn-trace-id', 'x-b3-traceid', 'x-b3-spanid', 'x-b3-parentspanid', 'x-b3-sampled',
  'x-csrf-token', 'x-xsrf-token', 'idempotency-key', 'if-schedule-tag-match',
]);

/** Free-text headers: name (lower case) and value, repeated headers one by one. */
export function* freeFormHeaders(headers: IncomingHttpHeaders): Generator<[string, string]> {
  for (const name in headers) {
    if (STRUCTURED.has(name) || name.startsWith('sec-') || name.startsWith(':')) continue;
    const value = headers[name];
    if (typeof value === 'string') yield [name, value];
    else if (Array.isArray(value)) for (const one of value) yield [name, one];
  }
}
