// Which request headers reach the origin, and how (docs/shield-gateway.md, "Header hygiene"). The
// gateway is the only writer of who the client is and where the request came from, so every header
// that says so is removed from the client's request and written afresh; and the headers that say
// how the body and the method are read survive whatever `Connection` lists, so the origin reads
// the request exactly as it was inspected.

/** Hop-by-hop (RFC 9110 §7.6.1) and framing the gateway redoes: never forwarded as sent. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  // The gateway answered `100-continue` itself (node:http does); the origin gets the whole body.
  'expect',
  // HTTP/2's h2c upgrade settings (RFC 7540 §3.2.1): connection-specific, and refused by HTTP/2 responses.
  'http2-settings',
]);

/**
 * Client-supplied claims about the client, the scheme, the host or the URL: proxies and frameworks
 * believe them (Express `trust proxy`, Symfony, IIS URL rewriting, Cloudflare-style headers), so a
 * client must not be able to set them. Removed always; the gateway writes its own forwarding
 * headers (X-Forwarded-For/-Proto/-Host, X-Real-IP, Forwarded) after them.
 */
export const CLIENT_CLAIMS: ReadonlySet<string> = new Set([
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'x-forwarded-port',
  'x-forwarded-prefix',
  'x-forwarded-server',
  'x-forwarded-scheme',
  'x-forwarded-ssl',
  'x-forwarded-uri',
  'x-original-forwarded-for',
  'x-real-ip',
  'true-client-ip',
  'cf-connecting-ip',
  'fastly-client-ip',
  'x-client-ip',
  'x-cluster-client-ip',
  'x-original-url',
  'x-rewrite-url',
  'x-original-host',
  'x-host',
  // Ours is generated (or a trusted proxy's kept); a client's own id travels as X-Client-Request-Id.
  'x-request-id',
  'x-client-request-id',
]);

/**
 * Headers that change how the body or the method is read. `Connection: keep-alive,
 * Content-Encoding` must not strip the coding the gateway decoded (the origin would parse the
 * compressed bytes, comments and all): these survive a Connection listing.
 */
export const READ_SHAPING: ReadonlySet<string> = new Set(['content-encoding', 'content-type', 'content-length', 'content-language', 'x-http-method-override', 'x-http-method', 'x-method-override']);

/** Names a message's Connection header lists (lower case), other than the ones nothing depends on. */
export function connectionListed(value: string | string[] | undefined): Set<string> | undefined {
  // `keep-alive` and `close` are all most messages carry: nothing extra to drop, nothing to allocate.
  if (!value || value === 'keep-alive' || value === 'close' || value === 'Keep-Alive' || value === 'Close') return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  return new Set(text.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean));
}

/**
 * Whether a request header is dropped before forwarding (the gateway writes its own in its place
 * where needed). Names with `_` are dropped too, as nginx does by default: CGI, WSGI and PHP map
 * `X_HTTP_Method_Override` and `X-HTTP-Method-Override` to one variable, so an underscore spelling
 * would smuggle past every check made on the dashed name.
 */
export function dropsRequestHeader(name: string, listed: ReadonlySet<string> | undefined): boolean {
  // HTTP/2 pseudo-headers (`:path`, `:authority`) are the request line, never headers to pass on.
  if (name.charCodeAt(0) === 58 || HOP_BY_HOP.has(name) || CLIENT_CLAIMS.has(name) || name.includes('_')) return true;
  return listed !== undefined && listed.has(name) && !READ_SHAPING.has(name);
}
