// WebSocket pass-through (docs/shield-edge.md, "WebSockets"). An upgrade request the pipeline
// allowed is sent on to the site's origin — ws:// for an http origin, wss:// (TLS, certificate
// verified) for an https one — over connections opened under the origin rule (net/origin-policy.ts:
// never to a cloud metadata or link-local address), with the same forwarding headers as any
// forwarded request (forward.ts, header-policy.ts). The origin's 101 joins the two sockets
// (tunnel.ts); any other answer is relayed to the client and the connection closed. Frames are not
// inspected. Open connections are capped per site, per gateway process.
import type { IncomingMessage } from 'node:http';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { originHost, originPolicy } from '../../platform/net/origin-policy.ts';
import { everywhere, originRule, outboundNodeAgents, type OriginPolicy } from '../../platform/net/outbound.ts';
import { requestHeaders, responseHeaders, type ForwardContext } from './forward.ts';
import type { GatewayAnswer } from './pages.ts';
import { connectionListed, HOP_BY_HOP } from './header-policy.ts';
import { responseOnSocket } from './socket-response.ts';
import { joinSockets, type Tunnel } from './tunnel.ts';

export interface WebSocketOptions {
  /** No bytes either way for this long closes both sides (AEGIS_SHIELD_WS_IDLE_MS; default 5 minutes). */
  idleMs?: number;
  /** Open WebSocket connections one site may have on this process (AEGIS_SHIELD_WS_MAX_PER_SITE; default 10 000). */
  maxPerSite?: number;
  /** Time for the origin to answer the handshake, connecting included (the upstream timeout). */
  handshakeTimeoutMs?: number;
  /** Which addresses origins may not be; the same policy as forwarded requests. */
  originPolicy?: OriginPolicy;
  log?: Logger | undefined;
  /** Told when a site's established WebSocket connections change (+1, -1): the gauge. */
  onOpenChange?: ((siteId: string, delta: number) => void) | undefined;
}

export const DEFAULT_WS_IDLE_MS = 5 * 60_000;
export const DEFAULT_WS_MAX_PER_SITE = 10_000;

/** What an upgrade past the site's cap is answered with. */
export const WEBSOCKETS_FULL: GatewayAnswer = {
  status: 503,
  code: 'unavailable',
  title: 'Busy',
  message: 'The site has as many open WebSocket connections as it accepts. Try again shortly.',
  headers: { 'retry-after': '5' },
};

/**
 * How an upgrade ended: `upgraded` (101, the sockets are joined), `refused` (the origin answered
 * something else, relayed), or no answer from the origin — `unreachable`, `timeout`, or
 * `client_gone` (the client closed during the handshake).
 */
export type UpgradeResult =
  | { outcome: 'upgraded' | 'refused'; status: number }
  | { outcome: 'unreachable' | 'timeout' | 'client_gone' };

const REFUSAL_LOG_INTERVAL_MS = 60_000;
/** Bytes a client may send before the origin's 101 (RFC 6455 has it wait; a few frames are tolerated). */
const MAX_EARLY_BYTES = 64 * 1024;

export class WebSocketProxy {
  readonly #agents: ReturnType<typeof outboundNodeAgents>;
  readonly #admitted = new Map<string, number>();
  readonly #sockets = new Set<Duplex>();
  readonly #tunnels = new Set<Tunnel>();
  readonly #lastRefusalLog = new Map<string, number>();
  readonly #idleMs: number;
  readonly #maxPerSite: number;
  readonly #handshakeMs: number;
  #closed = false;

  constructor(private readonly options: WebSocketOptions = {}) {
    const policy = options.originPolicy ?? originPolicy({ allowMetadataOrigins: false, dnsServers: [] });
    this.#agents = outboundNodeAgents(everywhere(originRule(policy)), { onRefused: (host, reason) => this.#reportRefusal(host, reason) });
    this.#idleMs = options.idleMs ?? DEFAULT_WS_IDLE_MS;
    this.#maxPerSite = options.maxPerSite ?? DEFAULT_WS_MAX_PER_SITE;
    this.#handshakeMs = options.handshakeTimeoutMs ?? 60_000;
  }

  /** WebSocket connections (open or in their handshake) of a site on this process. */
  openFor(siteId: string): number {
    return this.#admitted.get(siteId) ?? 0;
  }

  /**
   * Counts `socket` against the site's cap until it closes; false (nothing counted) when the site
   * is at its cap or the gateway is closing.
   */
  admit(siteId: string, socket: Duplex): boolean {
    const count = this.openFor(siteId);
    if (this.#closed || count >= this.#maxPerSite) return false;
    // Already gone (while the request was decided): nothing to count, proxy() sees it.
    if (socket.destroyed) return true;
    this.#admitted.set(siteId, count + 1);
    this.#sockets.add(socket);
    socket.once('close', () => {
      this.#sockets.delete(socket);
      const left = this.openFor(siteId) - 1;
      if (left > 0) this.#admitted.set(siteId, left);
      else this.#admitted.delete(siteId);
    });
    return true;
  }

  /** Sends the upgrade to the origin and relays its answer on `socket` (admitted first). */
  proxy(req: IncomingMessage, socket: Duplex, head: Buffer, siteId: string, originUrl: string, ctx: ForwardContext): Promise<UpgradeResult> {
    // Gone while the request was decided: its 'close' has been and will not come again.
    if (socket.destroyed) return Promise.resolve({ outcome: 'client_gone' });
    const url = new URL(originUrl);
    const basePath = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
    const secure = url.protocol === 'https:';
    // Upgrade and Connection are hop-by-hop: dropped with the rest by the forwarding policy and written afresh.
    const headers = [...requestHeaders(req, ctx), 'host', url.host, 'connection', 'Upgrade', 'upgrade', 'websocket'];
    const upstream: ClientRequest = (secure ? httpsRequest : httpRequest)({
      hostname: originHost(url),
      port: url.port || (secure ? 443 : 80),
      method: 'GET',
      path: basePath + (req.url ?? '/'),
      headers,
      agent: secure ? this.#agents.httpsAgent : this.#agents.httpAgent,
    });

    return new Promise<UpgradeResult>((resolve) => {
      let settled = false;
      // The client's socket is read during the handshake, so that a client leaving (even half-closing:
      // node's server sockets allow it) is noticed; bytes it sends early go to the origin after the 101.
      const early: Buffer[] = [];
      let earlyBytes = head.length;
      const settle = (result: UpgradeResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.off('data', onEarly).off('end', clientGone).off('close', clientGone);
        socket.pause();
        resolve(result);
      };
      const timer = setTimeout(() => {
        settle({ outcome: 'timeout' });
        upstream.destroy();
      }, this.#handshakeMs);
      const clientGone = () => {
        settle({ outcome: 'client_gone' });
        upstream.destroy();
        socket.destroy();
      };
      const onEarly = (chunk: Buffer) => {
        earlyBytes += chunk.length;
        if (earlyBytes > MAX_EARLY_BYTES) clientGone();
        else early.push(chunk);
      };
      socket.on('data', onEarly).once('end', clientGone).once('close', clientGone);
      upstream.on('error', () => settle({ outcome: 'unreachable' }));

      upstream.on('upgrade', (answer: IncomingMessage, originSocket: Duplex, originHead: Buffer) => {
        if (settled) {
          originSocket.destroy();
          return;
        }
        settle({ outcome: 'upgraded', status: 101 });
        socket.write(switchingHead(answer, ctx.requestId), 'latin1');
        this.options.onOpenChange?.(siteId, 1);
        let ended = false;
        let tunnel: Tunnel | undefined;
        tunnel = joinSockets(socket, originSocket, early.length > 0 ? Buffer.concat([head, ...early]) : head, originHead, {
          idleMs: this.#idleMs,
          // Possibly before joinSockets returns, when a side was already gone.
          onClosed: () => {
            ended = true;
            if (tunnel) this.#tunnels.delete(tunnel);
            this.options.onOpenChange?.(siteId, -1);
          },
        });
        if (!ended) this.#tunnels.add(tunnel);
      });

      upstream.on('response', (answer: IncomingMessage) => {
        if (settled) {
          answer.destroy();
          return;
        }
        settle({ outcome: 'refused', status: answer.statusCode ?? 502 });
        relayRefusal(req, socket, answer, ctx.requestId, this.#idleMs);
      });

      upstream.end();
    });
  }

  #reportRefusal(host: string, reason: string): void {
    const now = Date.now();
    if (now - (this.#lastRefusalLog.get(host) ?? -Infinity) < REFUSAL_LOG_INTERVAL_MS) return;
    this.#lastRefusalLog.set(host, now);
    this.options.log?.warn({ origin: host, reason }, 'shield: origin refused: not forwarding a WebSocket to a cloud metadata or link-local address');
  }

  /** Closes every WebSocket connection (both sides) and the origin connections kept alive. */
  close(): void {
    this.#closed = true;
    for (const tunnel of this.#tunnels) tunnel.destroy();
    for (const socket of this.#sockets) socket.destroy();
    this.#agents.httpAgent.destroy();
    this.#agents.httpsAgent.destroy();
  }
}

/**
 * The 101 the client receives: the origin's, its hop-by-hop headers (and those its Connection
 * lists) replaced by the Upgrade/Connection pair, with our request id when the origin sent none.
 */
function switchingHead(answer: IncomingMessage, requestId: string): string {
  const listed = connectionListed(answer.headers.connection);
  const lines = [`HTTP/1.1 101 ${answer.statusMessage || 'Switching Protocols'}`];
  const raw = answer.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(name) || listed?.has(name)) continue;
    lines.push(`${raw[i]}: ${raw[i + 1]}`);
  }
  const upgrade = answer.headers.upgrade;
  lines.push(`Upgrade: ${typeof upgrade === 'string' && upgrade !== '' ? upgrade : 'websocket'}`, 'Connection: Upgrade');
  if (answer.headers['x-request-id'] === undefined) lines.push(`X-Request-Id: ${requestId}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** An origin that did not switch protocols: its answer goes to the client as it is, then the connection closes. */
function relayRefusal(req: IncomingMessage, socket: Duplex, answer: IncomingMessage, requestId: string, idleMs: number): void {
  const res = responseOnSocket(req, socket);
  res.writeHead(answer.statusCode ?? 502, responseHeaders(answer.headers, requestId));
  answer.on('error', () => socket.destroy());
  res.on('close', () => {
    if (!answer.readableEnded) answer.destroy();
  });
  // A body that stops arriving does not hold the client's socket forever.
  const stalled = setTimeout(() => socket.destroy(), idleMs);
  stalled.unref();
  answer.on('data', () => stalled.refresh());
  res.once('close', () => clearTimeout(stalled));
  answer.pipe(res);
}
