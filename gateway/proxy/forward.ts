// Forwarding an allowed request to the site's origin over keep-alive connection pools (undici), one
// pool per origin. Bodies stream both ways; nothing is buffered here. Which request headers go
// along is header-policy.ts: hop-by-hop headers dropped in both directions, every client claim about
// the client, scheme, host or URL removed and the gateway's own forwarding headers written
// (X-Forwarded-For chained only from a trusted proxy), the headers that shape how the body and the
// method are read kept whatever Connection lists. Connections are opened by the outbound policy's
// connector (net/outbound.ts) under the `origin` rule (net/origin-policy.ts): an origin that is, or
// resolves at connect time to, a cloud metadata or link-local address is never connected to; its
// requests fail as unreachable (502).
import type { GatewayRequest, GatewayResponse } from './exchange.ts';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { Pool, errors as undiciErrors } from 'undici';
import { literalOriginRefusal, originHost, originPolicy } from '../../platform/net/origin-policy.ts';
import { everywhere, originRule, outboundConnector, type OriginPolicy } from '../../platform/net/outbound.ts';
import { connectionListed, dropsRequestHeader, HOP_BY_HOP } from './header-policy.ts';
import { SlowBodyError } from './request-body.ts';

export interface UpstreamOptions {
  connectionsPerOrigin?: number;
  /** Requests one client may have in flight to one origin: a share of its pool, so no client holds all of it (default a quarter). */
  connectionsPerClient?: number;
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
  /** The validated Host (proxy/host.ts), or a trusted proxy's validated X-Forwarded-Host. */
  host: string;
  requestId: string;
  /** The client's own X-Request-Id when it was not adopted as ours (untrusted peers), forwarded as X-Client-Request-Id. */
  clientRequestId: string | undefined;
  /** The request body when the gateway buffered it for inspection; else the request streams. */
  body: Buffer | Readable | undefined;
  /** `body` is the request body with its Content-Encoding undone: the header is not forwarded. */
  decodedBody?: boolean;
}

/** Why a request got no answer from the origin: `slow_body` the client stopped sending its body, `client_share` the client already holds its share of the origin's connections. */
export type ForwardFailure = 'unreachable' | 'timeout' | 'slow_body' | 'client_share';
export type ForwardResult = { ok: true; status: number } | { ok: false; failure: ForwardFailure };

interface Origin {
  pool: Pool;
  basePath: string;
  /** scheme://host:port, as logs name it (never the URL's credentials or path). */
  name: string;
  /** Why the origin (a literal address, which net.connect does not look up) is refused, or null. */
  refused: string | null;
  lastRefusalLog: number;
  /** Requests in flight per client address, and in all. */
  inFlight: Map<string, number>;
  total: number;
}

const REFUSAL_LOG_INTERVAL_MS = 60_000;

export class Upstreams {
  readonly #origins = new Map<string, Origin>();
  readonly #policy: OriginPolicy;
  readonly #perClient: number;
  readonly #poolSize: number;

  constructor(private readonly options: UpstreamOptions = {}) {
    this.#policy = options.originPolicy ?? originPolicy({ allowMetadataOrigins: false, dnsServers: [] });
    this.#poolSize = options.connectionsPerOrigin ?? 128;
    this.#perClient = options.connectionsPerClient ?? Math.max(1, Math.floor(this.#poolSize / 4));
  }

  #origin(originUrl: string): Origin {
    let origin = this.#origins.get(originUrl);
    if (!origin) {
      const url = new URL(originUrl);
      const created: Origin = {
        pool: new Pool(url.origin, {
          connections: this.#poolSize,
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
        inFlight: new Map(),
        total: 0,
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

  forward(req: GatewayRequest, res: GatewayResponse, originUrl: string, ctx: ForwardContext): Promise<ForwardResult> {
    const origin = this.#origin(originUrl);
    if (origin.refused !== null) {
      this.#reportRefusal(origin, origin.refused);
      return Promise.resolve({ ok: false, failure: 'unreachable' });
    }
    // A client's share of the pool: past it, a client may take more only while a share's worth of
    // connections stays free for everyone else; otherwise it is refused rather than queued behind
    // its own requests. (A strict cap would turn away busy NATs and proxies on an idle origin.)
    const mine = origin.inFlight.get(ctx.clientIp) ?? 0;
    if (mine >= this.#perClient && this.#poolSize - origin.total <= this.#perClient) return Promise.resolve({ ok: false, failure: 'client_share' });
    origin.inFlight.set(ctx.clientIp, mine + 1);
    origin.total++;
    res.once('close', () => {
      origin.total--;
      const left = (origin.inFlight.get(ctx.clientIp) ?? 1) - 1;
      if (left > 0) origin.inFlight.set(ctx.clientIp, left);
      else origin.inFlight.delete(ctx.clientIp);
    });
    const headers = requestHeaders(req, ctx);
    const hasBody = ctx.body !== undefined || req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
    const body = ctx.body ?? (hasBody ? req : null);
    return origin.pool.request({ path: origin.basePath + (req.url ?? '/'), method: req.method as 'GET', headers, body }).then(
      (upstream): ForwardResult => {
        res.writeHead(upstream.statusCode, responseHeaders(upstream.headers, ctx.requestId));
        pipeBody(upstream.body, res);
        return { ok: true, status: upstream.statusCode };
      },
      (err: unknown): ForwardResult => ({ ok: false, failure: slowBody(err) ? 'slow_body' : isTimeout(err) ? 'timeout' : 'unreachable' }),
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
function pipeBody(body: Readable, res: GatewayResponse): void {
  // An origin failing mid-body cuts the client connection: the status line has already gone out.
  body.on('error', () => res.destroy());
  // A client leaving early releases the origin connection rather than reading the body to the end.
  res.on('close', () => {
    if (!body.readableEnded) body.destroy();
  });
  body.pipe(res);
}

/** Whether the request failed because its client sent the body too slowly (request-body.ts), at any depth of causes. */
function slowBody(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; e instanceof Error && depth < 6; depth++) {
    if (e instanceof SlowBodyError) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

function isTimeout(err: unknown): boolean {
  return err instanceof undiciErrors.ConnectTimeoutError || err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError;
}

/** The request headers the origin receives (header-policy.ts), as name/value pairs; also the WebSocket handshake's (websocket.ts). */
export function requestHeaders(req: GatewayRequest, ctx: ForwardContext): string[] {
  const raw = req.rawHeaders;
  const listed = connectionListed(req.headers.connection);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (dropsRequestHeader(name, listed)) continue;
    if (ctx.body instanceof Buffer && name === 'content-length') continue;
    if (ctx.decodedBody && name === 'content-encoding') continue;
    out.push(raw[i]!, raw[i + 1]!);
  }
  if (ctx.body instanceof Buffer) out.push('content-length', String(ctx.body.length));
  const priorFor = ctx.viaTrustedProxy ? req.headers['x-forwarded-for'] : undefined;
  const peer = (req.socket.remoteAddress ?? '').replace(/^::ffff:(?=\d+\.)/, '');
  out.push('x-forwarded-for', priorFor ? `${Array.isArray(priorFor) ? priorFor.join(', ') : priorFor}, ${peer}` : ctx.clientIp);
  out.push('x-forwarded-proto', ctx.proto);
  out.push('x-forwarded-host', ctx.host);
  out.push('x-real-ip', ctx.clientIp);
  // RFC 7239: an IPv6 node and a host with a port are quoted.
  const node = ctx.clientIp.includes(':') ? `"[${ctx.clientIp}]"` : ctx.clientIp;
  out.push('forwarded', `for=${node};proto=${ctx.proto};host="${ctx.host}"`);
  out.push('x-request-id', ctx.requestId);
  if (ctx.clientRequestId !== undefined) out.push('x-client-request-id', ctx.clientRequestId);
  return out;
}

/** The origin's response headers as the client receives them: hop-by-hop and Connection-listed ones dropped, our request id added. */
export function responseHeaders(headers: Record<string, string | string[] | undefined>, requestId: string): Record<string, string | string[]> {
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
