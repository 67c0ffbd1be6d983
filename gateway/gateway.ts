// The Shield gateway: a plain node:http server (the hot path stays off Fastify's routing and
// hooks) and, with a TLS port, the TLS listener (HTTPS and HTTP/2 by SNI, edge/), in front of the
// request handler (request-handler.ts), with the state every request shares: the site registry,
// rate-limit state, upstream pools, the challenge keys and the body budget.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Db } from '../platform/db/database.ts';
import type { Environment } from '../platform/db/environments.ts';
import type { GatewayMetrics } from '../platform/metrics/metrics.ts';
import { Challenges } from './challenge/challenge.ts';
import type { CertificateCache } from './edge/certificates.ts';
import { createHttp1Server } from './edge/http1.ts';
import type { Http2Limits } from './edge/http2.ts';
import { startEdge } from './edge/index.ts';
import type { DecisionRecorder } from './events/recorder.ts';
import type { TrafficWriter } from './traffic/traffic-writer.ts';
import type { BodyLimits } from './inspect/body.ts';
import { BodyAdmission, DEFAULT_BODY_ADMISSION, type BodyBudget } from './proxy/body-admission.ts';
import { ClientIpResolver } from './proxy/client-ip.ts';
import { Upstreams, type UpstreamOptions } from './proxy/forward.ts';
import { createRequestHandler } from './request-handler.ts';
import { WebSocketProxy, type WebSocketOptions } from './proxy/websocket.ts';
import type { AsnDatabase } from './rules/asn-db.ts';
import { SiteRegistry } from './sites/registry.ts';
import { MemoryRateState } from './state/memory-rate-state.ts';
import type { RateState } from './state/rate-state.ts';
import { RedisRateState } from './state/redis-rate-state.ts';

export interface GatewayOptions {
  db: Db;
  log: Logger;
  recorder: DecisionRecorder;
  /** Where each answered request is recorded for impact previews (traffic/); nothing when absent. */
  traffic?: TrafficWriter | undefined;
  host: string;
  port: number;
  serverKey: Buffer;
  trustedProxies: readonly string[];
  redisUrl?: string | undefined;
  asnDb?: AsnDatabase | undefined;
  /** How often site configuration is re-read (ms). */
  refreshMs?: number;
  /** How much of a request body is buffered and inspected (inspect/body.ts). */
  bodyLimits?: Partial<BodyLimits>;
  /** What request bodies may hold while they arrive (proxy/body-admission.ts). */
  bodyBudget?: Partial<BodyBudget>;
  challengeDifficultyBits?: number;
  upstream?: UpstreamOptions;
  /** Where decisions and upstream latency are counted (platform/metrics); nothing when absent. */
  metrics?: GatewayMetrics | undefined;
  /** Rate-limit state to use instead of Redis (redisUrl) or this process's memory: a cluster worker's IPC state. Closed with the gateway. */
  rateState?: RateState | undefined;
  /** `test`: the sandbox listener, serving only sandbox sites (default `live`: only live ones). */
  environment?: Environment | undefined;
  /** Whether a site serves before its domain is proved (sites/registry.ts); default `contested`. */
  domainProof?: 'required' | 'contested' | undefined;
  /** WebSocket idle timeout and per-site cap (proxy/websocket.ts); origins and timeouts as `upstream`'s. */
  websocket?: Pick<WebSocketOptions, 'idleMs' | 'maxPerSite'> | undefined;
  /** Where TLS is terminated (HTTPS and HTTP/2 by SNI, edge/tls-listener.ts; 0: any free port); unset: plain HTTP only. */
  tlsPort?: number | undefined;
  /** HTTP/2 limits on the TLS port (edge/http2.ts). */
  http2?: Partial<Http2Limits> | undefined;
  /** The fetch OCSP responders are asked through (the outbound policy); unset: no OCSP stapling. */
  ocspFetch?: typeof fetch | undefined;
}

export interface RunningGateway {
  url: string;
  port: number;
  /** The TLS listener's port and base URL, when it runs. */
  tlsPort: number | undefined;
  tlsUrl: string | undefined;
  registry: SiteRegistry;
  /** The certificates the TLS listener serves (edge/certificates.ts), when it runs. */
  certificates: CertificateCache | undefined;
  /** Request-body bytes held in memory right now, by every client (proxy/body-admission.ts). */
  heldBodyBytes(): number;
  close(): Promise<void>;
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const registry = new SiteRegistry(options.db, { refreshMs: options.refreshMs, log: options.log, environment: options.environment, domainProof: options.domainProof, everyManagedLevel: options.traffic !== undefined });
  await registry.start();
  const state: RateState = options.rateState ?? (options.redisUrl ? new RedisRateState(options.redisUrl) : new MemoryRateState());
  const upstreams = new Upstreams({ log: options.log, ...options.upstream });
  const clientIps = new ClientIpResolver(options.trustedProxies);
  const challenges = new Challenges({ serverKey: options.serverKey, difficultyBits: options.challengeDifficultyBits });
  const bodyLimits: BodyLimits = { inspectBytes: 128 * 1024, multipartBytes: 8 * 1024 * 1024, maxRatio: 100, ...options.bodyLimits };
  const admission = new BodyAdmission({ ...DEFAULT_BODY_ADMISSION, ...options.bodyBudget });
  const websockets = new WebSocketProxy({ ...options.websocket, originPolicy: options.upstream?.originPolicy, handshakeTimeoutMs: options.upstream?.headersTimeoutMs, log: options.log, onOpenChange: options.metrics ? (site, delta) => options.metrics?.websockets(site, delta) : undefined });
  const handler = createRequestHandler({ log: options.log, registry, recorder: options.recorder, traffic: options.traffic, state, upstreams, clientIps, challenges, admission, bodyLimits, asnDb: options.asnDb, metrics: options.metrics, websockets });

  const edge = await startEdge({ ...options, tlsPort: options.tlsPort, registry, handler, clientIps });
  const server: Server = createHttp1Server(edge.plainListener, (req, socket, head) => handler.upgrade(req, socket, head), options.log);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  }).catch(async (err: unknown) => {
    await edge.close();
    throw err;
  });
  const port = (server.address() as AddressInfo).port;
  const tlsPort = edge.tls?.port;

  return {
    url: `http://localhost:${port}`,
    port,
    tlsPort,
    tlsUrl: tlsPort === undefined ? undefined : `https://localhost:${tlsPort}`,
    registry,
    certificates: edge.tls?.certificates,
    heldBodyBytes: () => admission.heldBytes,
    async close() {
      await new Promise<void>((resolve) => {
        // Upgraded sockets are the server's until they close: WebSockets would hold close() open.
        websockets.close();
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await edge.close();
      await registry.close();
      await upstreams.close();
      await state.close();
    },
  };
}
