// Forwarding an allowed request to the site's origin over keep-alive connection pools (undici), one
// pool per origin. Bodies stream both ways; nothing is buffered here. Hop-by-hop headers (RFC 9110
// §7.6.1) are dropped in both directions; X-Forwarded-For/-Proto/-Host are set, and taken over from
// the client only when the peer is a trusted proxy. Connections are opened by the outbound policy's
// connector (net/outbound.ts) under the `origin` rule (net/origin-policy.ts): an origin that is, or
// resolves at connect time to, a cloud metadata or link-local address is never connected to; its
// requests fail as unreachable (502).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { Pool, errors as undiciErrors } from 'undici';
import { literalOriginRefusal, originHost, originPolicy } from '../../net/origin-policy.ts';
import { everywhere, originRule, outboundConnector, type OriginPolicy } from '../../net/outbound.ts';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);
const FORWARDED = new Set(['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host']);

export interface UpstreamOptions {
  connectionsPerOrigin?: number;
  connectTimeoutMs?: number;
  /** Time allowed for the origin to send response headers. */
  headersTimeoutMs?: number;
  /** Time allowed between response body chunks. */
  bodyTimeoutMs?: number;
  /** Which addresses origins may not be (default: no cloud metadata or link-local, system resolver). */
  originPolicy?: OriginPolicy;
  /** Where refused origins are reported, at most once a minute per origin. */
  log?: Logger | undefined;
}

export interface ForwardContext {
  clientIp: string;
  viaTrustedProxy: boolean;
  proto: 'http' | 'https';
  requestId: string;
  /** The request body when the gateway buffered it for inspection; else the request streams. */
  body: Buffer | Readable | undefined;
}

export type ForwardResult = { ok: true; status: number } | { ok: false; failure: 'unreachable' | 'timeout' };

interface Origin {
  pool: Pool;
  basePath: string;
  /** scheme://host:port, as logs name it (never the URL's credentials or path). */
  name: string;
  /** Why the origin (a literal address, which net.connect does not look up) is refused, or null. */
  refused: string | null;
  lastRefusalLog: number;
}

const REFUSAL_LOG_INTERVAL_MS = 60_000;

export class Upstreams {
  readonly #origins = new Map<string, Origin>();
  readonly #policy: OriginPolicy;

  constructor(private readonly options: UpstreamOptions = {}) {
    this.#policy = options.originPolicy ?? originPolicy({ allowMetadataOrigins: false, dnsServers: [] });
  }

  #origin(originUrl: string): Origin {
    let origin = this.#origins.get(originUrl);
    if (!origin) {
      const url = new URL(originUrl);
      const created: Origin = {
        pool: new Pool(url.origin, {
          connections: this.options.connectionsPerOrigin ?? 128,
          pipelining: 1,
          keepAliveTimeout: 30_000,
          headersTimeout: this.options.headersTimeoutMs ?? 60_000,
          bodyTimeout: this.options.bodyTimeoutMs ?? 60_000,
          // Per new connection, not per request: names are resolved and judged when a connection opens.
          connect: outboundConnector(everywhere(originRule(this.#policy)), {
            timeoutMs: this.options.connectTimeoutMs ?? 5_000,
            onRefused: (_host, reason) => this.#reportRefusal(created, reason),
          }),
        }),
        basePath: url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, ''),
        name: url.origin,
        refused: literalOriginRefusal(originHost(url), this.#policy),
        lastRefusalLog: -Infinity,
      };
      origin = created;
      this.#origins.set(originUrl, origin);
    }
    return origin;
  }

  #reportRefusal(origin: Origin, reason: string): void {
    const now = Date.now();
    if (now - origin.lastRefusalLog < REFUSAL_LOG_INTERVAL_MS) return;
    origin.lastRefusalLog = now;
    this.options.log?.warn({ origin: origin.name, reason }, 'shield: origin refused: not forwarding to a cloud metadata or link-local address');
  }

  forward(req: IncomingMessage, res: ServerResponse, originUrl: string, ctx: ForwardContext): Promise<ForwardResult> {
    const origin = this.#origin(originUrl);
    if (origin.refused !== null) {
      this.#reportRefusal(origin, origin.refused);
      return Promise.resolve({ ok: false, failure: 'unreachable' });
    }
    const headers = requestHeaders(req, ctx);
    const hasBody = ctx.body !== undefined || req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
    const body = ctx.body ?? (hasBody ? req : null);
    return origin.pool.request({ path: origin.basePath + (req.url ?? '/'), method: req.method as 'GET', headers, body }).then(
      (upstream): ForwardResult => {
        res.writeHead(upstream.statusCode, responseHeaders(upstream.headers, ctx.requestId));
        pipeBody(upstream.body, res);
        return { ok: true, status: upstream.statusCode };
      },
      (err: unknown): ForwardResult => ({ ok: false, failure: isTimeout(err) ? 'timeout' : 'unreachable' }),
    );
  }

  async close(): Promise<void> {
    await Promise.all([...this.#origins.values()].map((o) => o.pool.close()));
    this.#origins.clear();
  }
}

/**
 * Streams the origin's body to the client. Not stream.pipeline: on Node 20 it allocates an
 * AbortController per call and an AbortError when it finishes, a tenth of the proxy's CPU time.
 */
function pipeBody(body: Readable, res: ServerResponse): void {
  // An origin failing mid-body cuts the client connection: the status line has already gone out.
  body.on('error', () => res.destroy());
  // A client leaving early releases the origin connection rather than reading the body to the end.
  res.on('close', () => {
    if (!body.readableEnded) body.destroy();
  });
  body.pipe(res);
}

function isTimeout(err: unknown): boolean {
  return err instanceof undiciErrors.ConnectTimeoutError || err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError;
}

/** Names listed in a Connection header are hop-by-hop for this message too. */
function connectionListed(value: string | string[] | undefined): Set<string> | undefined {
  // `keep-alive` and `close` are all most messages carry: nothing extra to drop, nothing to allocate.
  if (!value || value === 'keep-alive' || value === 'close' || value === 'Keep-Alive' || value === 'Close') return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  return new Set(text.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean));
}

function requestHeaders(req: IncomingMessage, ctx: ForwardContext): string[] {
  const raw = req.rawHeaders;
  const listed = connectionListed(req.headers.connection);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(name) || FORWARDED.has(name) || listed?.has(name)) continue;
    if (ctx.body instanceof Buffer && name === 'content-length') continue;
    out.push(raw[i]!, raw[i + 1]!);
  }
  if (ctx.body instanceof Buffer) out.push('content-length', String(ctx.body.length));
  const priorFor = ctx.viaTrustedProxy ? req.headers['x-forwarded-for'] : undefined;
  const peer = (req.socket.remoteAddress ?? '').replace(/^::ffff:(?=\d+\.)/, '');
  out.push('x-forwarded-for', priorFor ? `${Array.isArray(priorFor) ? priorFor.join(', ') : priorFor}, ${peer}` : ctx.clientIp);
  out.push('x-forwarded-proto', ctx.proto);
  const host = ctx.viaTrustedProxy ? req.headers['x-forwarded-host'] : undefined;
  out.push('x-forwarded-host', typeof host === 'string' && host ? host : (req.headers.host ?? ''));
  out.push('x-request-id', ctx.requestId);
  return out;
}

function responseHeaders(headers: Record<string, string | string[] | undefined>, requestId: string): Record<string, string | string[]> {
  const listed = connectionListed(headers.connection);
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name) || listed?.has(name)) continue;
    out[name] = value;
  }
  out['x-request-id'] ??= requestId;
  return out;
}
