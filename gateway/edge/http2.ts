// The HTTP/2 side of the TLS listener: a node:http2 server that is handed connections which
// negotiated ALPN `h2` (tls-listener.ts), with limits a public edge needs (docs/shield-edge.md,
// "HTTP/2"):
//
//   - at most `maxConcurrentStreams` streams open per connection (SETTINGS_MAX_CONCURRENT_STREAMS);
//   - a header list of at most `maxHeaderListSize` bytes (SETTINGS_MAX_HEADER_LIST_SIZE; by default
//     the same figure as HTTP/1.1's request head, http1.ts), and as many header fields as HTTP/1.1
//     accepts;
//   - no server push (SETTINGS_ENABLE_PUSH 0; the gateway never pushes);
//   - rapid reset (CVE-2023-44487): a client that opens streams and cancels them before they are
//     answered makes the gateway start (and abandon) work for free. Streams a client resets before
//     their response ended are counted per connection per second; past `resetsPerSecond` the
//     connection gets GOAWAY ENHANCE_YOUR_CALM and is closed;
//   - a connection idle for `idleTimeoutMs` is closed (GOAWAY NO_ERROR).
import { constants, createServer, type Http2Server, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import { MAX_REQUEST_HEAD_BYTES } from './http1.ts';

export interface Http2Limits {
  maxConcurrentStreams: number;
  maxHeaderListSize: number;
  resetsPerSecond: number;
  idleTimeoutMs: number;
}

export const DEFAULT_HTTP2_LIMITS: Http2Limits = {
  maxConcurrentStreams: 100,
  maxHeaderListSize: MAX_REQUEST_HEAD_BYTES,
  resetsPerSecond: 100,
  idleTimeoutMs: 120_000,
};

/** node:http's default maxHeadersCount: HTTP/2 must not refuse a request HTTP/1.1 would take. */
const MAX_HEADER_PAIRS = 2000;
/** How long a connection closed for rapid reset may take to finish the streams it still has open. */
const RAPID_RESET_GRACE_MS = 1_000;
/** Opaque data of our GOAWAY: says why to whoever reads the client's logs. */
const RAPID_RESET_DEBUG = Buffer.from('too many streams reset by the client');

export interface Http2ServerOptions {
  limits?: Partial<Http2Limits> | undefined;
  /** A connection was closed for resetting streams too fast (logs and metrics). */
  onRapidReset?: ((session: ServerHttp2Session) => void) | undefined;
}

export function createHttp2Server(onRequest: (req: Http2ServerRequest, res: Http2ServerResponse) => void, options: Http2ServerOptions = {}): { server: Http2Server; sessions: Set<ServerHttp2Session> } {
  const limits = { ...DEFAULT_HTTP2_LIMITS, ...options.limits };
  const server = createServer(
    {
      settings: { maxConcurrentStreams: limits.maxConcurrentStreams, maxHeaderListSize: limits.maxHeaderListSize, enablePush: false },
      maxHeaderListPairs: MAX_HEADER_PAIRS,
    },
    onRequest,
  );
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    session.on('error', () => session.destroy());
    session.setTimeout(limits.idleTimeoutMs, () => session.close());
    guardResets(session, limits.resetsPerSecond, () => options.onRapidReset?.(session));
  });
  return { server, sessions };
}

/** Counts streams the client abandoned (closed before our response ended) per second; past the limit, GOAWAY and close. */
function guardResets(session: ServerHttp2Session, perSecond: number, onTripped: () => void): void {
  let windowStart = 0;
  let resets = 0;
  let tripped = false;
  let lastStream = 0;
  session.on('stream', (stream) => {
    lastStream = Math.max(lastStream, stream.id ?? 0);
    stream.once('aborted', () => {
      if (tripped) return;
      const now = Date.now();
      if (now - windowStart >= 1_000) {
        windowStart = now;
        resets = 0;
      }
      if (++resets <= perSecond) return;
      tripped = true;
      onTripped();
      session.goaway(constants.NGHTTP2_ENHANCE_YOUR_CALM, lastStream, RAPID_RESET_DEBUG);
      // close(), not destroy(): a session destroyed from here drops the queued GOAWAY unsent and
      // leaves the client's side of the connection open. close() admits no new stream and ends the
      // connection once the streams still open end; a client keeping some open is cut off after
      // RAPID_RESET_GRACE_MS.
      session.close();
      setTimeout(() => {
        if (!session.destroyed) session.destroy();
      }, RAPID_RESET_GRACE_MS).unref();
    });
  });
}
