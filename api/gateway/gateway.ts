// The Shield gateway: a plain node:http server (the hot path stays off Fastify's routing and
// hooks) that finds the site by Host, decides, and either answers itself or forwards the request
// to the site's origin. Every request becomes a decision record; the recorder keeps all non-allow
// decisions and a sample of allows.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { requestIdFor } from '../http/request-id.ts';
import { newId } from '../ids.ts';
import { CHALLENGE_PATH, Challenges } from './challenge/challenge.ts';
import type { DecisionEvent } from './decision.ts';
import type { DecisionRecorder } from './events/recorder.ts';
import type { GatewayMetrics } from '../metrics/metrics.ts';
import { LazyInspectedRequest, type InspectedRequest } from './inspected-request.ts';
import { ALLOW, decide, type Verdict } from './pipeline.ts';
import { ClientIpResolver, type ClientAddress } from './proxy/client-ip.ts';
import { Upstreams, type UpstreamOptions } from './proxy/forward.ts';
import { ANSWERS, sendAnswer, type GatewayAnswer } from './proxy/pages.ts';
import { bufferLimit, inspectBody, opaqueBody, type BodyLimits } from './inspect/body.ts';
import { hasBody, mediaType, readBody } from './proxy/request-body.ts';
import type { AsnDatabase } from './rules/asn-db.ts';
import { bodyReaders, type CompiledSite } from './sites/compile.ts';
import { SiteRegistry } from './sites/registry.ts';
import type { Environment } from '../orgs/environments.ts';
import { MemoryRateState } from './state/memory-rate-state.ts';
import type { RateState } from './state/rate-state.ts';
import { RedisRateState } from './state/redis-rate-state.ts';

export interface GatewayOptions {
  db: Db;
  log: Logger;
  recorder: DecisionRecorder;
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
  challengeDifficultyBits?: number;
  upstream?: UpstreamOptions;
  /** Where decisions and upstream latency are counted (api/metrics); nothing when absent. */
  metrics?: GatewayMetrics | undefined;
  /** Rate-limit state to use instead of Redis (redisUrl) or this process's memory: a cluster worker's IPC state. Closed with the gateway. */
  rateState?: RateState | undefined;
  /** `test`: the sandbox listener, serving only sandbox sites (default `live`: only live ones). */
  environment?: Environment | undefined;
}

export interface RunningGateway {
  url: string;
  port: number;
  registry: SiteRegistry;
  close(): Promise<void>;
}

const MAX_EVENT_PATH = 1024;

/** What a blocked client is told: 429 for rate limits, the refusal's status for an uninspectable request, else 403. */
function blockAnswer(verdict: Verdict): GatewayAnswer {
  switch (verdict.status) {
    case 429:
      return ANSWERS.rateLimited(verdict.retryAfter ?? 1);
    case 413:
      return ANSWERS.payloadTooLarge;
    case 415:
      return ANSWERS.unsupportedMediaType;
    case 400:
      return ANSWERS.badRequest;
    default:
      return ANSWERS.blocked;
  }
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const registry = new SiteRegistry(options.db, { refreshMs: options.refreshMs, log: options.log, environment: options.environment });
  await registry.start();
  const state: RateState = options.rateState ?? (options.redisUrl ? new RedisRateState(options.redisUrl) : new MemoryRateState());
  const upstreams = new Upstreams({ log: options.log, ...options.upstream });
  const clientIps = new ClientIpResolver(options.trustedProxies);
  const challenges = new Challenges({ serverKey: options.serverKey, difficultyBits: options.challengeDifficultyBits });
  const bodyLimits: BodyLimits = { inspectBytes: 128 * 1024, multipartBytes: 8 * 1024 * 1024, maxRatio: 100, ...options.bodyLimits };
  let lastStateError = 0;
  const pipelineDeps = {
    state,
    asnDb: options.asnDb,
    onStateError: (err: unknown) => {
      // Fail open, but say so — at most once a minute, not once per request.
      if (Date.now() - lastStateError > 60_000) options.log.error({ err }, 'shield: rate-limit state unavailable; rate limits are not enforced');
      lastStateError = Date.now();
    },
  };

  const record = (site: CompiledSite, inspected: InspectedRequest, client: ClientAddress, verdict: Verdict, status: number, requestId: string, arrived: number) => {
    options.metrics?.decision(site.id, verdict.action, verdict.ruleKind);
    const keep = options.recorder.keeps(verdict.action);
    if (!keep) return options.recorder.countOnly({ site_id: site.id, at: arrived, action: verdict.action, rule_kind: verdict.ruleKind });
    const origin = options.asnDb?.lookup(client.parsed) ?? null;
    const event: DecisionEvent = {
      id: newId('dec'),
      time: new Date(arrived).toISOString(),
      site_id: site.id,
      org_id: site.orgId,
      action: verdict.action,
      rule_kind: verdict.ruleKind,
      rule_id: verdict.ruleId,
      would: verdict.would,
      client_ip: client.text,
      asn: origin?.asn ?? null,
      country: origin?.country ?? null,
      method: inspected.method,
      host: site.domain,
      path: inspected.path.length > MAX_EVENT_PATH ? inspected.path.slice(0, MAX_EVENT_PATH) : inspected.path,
      status,
      request_id: requestId,
    };
    options.recorder.record(event, keep);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrived = Date.now();
    const requestId = requestIdFor(req);
    const site = registry.lookup(req.headers.host);
    if (!site) return sendAnswer(req, res, ANSWERS.unknownHost, requestId);
    const client = clientIps.resolve(req);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const method = req.method ?? 'GET';

    if (path === CHALLENGE_PATH && method === 'POST') {
      await challenges.handleSubmit(req, res, { siteId: site.id, clientIp: client.text, secure: client.proto === 'https', requestId });
      return;
    }

    const inspected = new LazyInspectedRequest(method, path, q === -1 ? '' : url.slice(q + 1), req.headers, mediaType(req.headers['content-type']));
    let body: Buffer | Readable | undefined;
    if (hasBody(req)) {
      inspected.bodyState = 'not_inspected';
      const readers = bodyReaders(site, method, path);
      if (readers.specific || readers.managed) {
        const read = await readBody(req, bufferLimit(inspected.contentType, bodyLimits));
        if (read.complete) {
          body = read.buffer;
          const wantsFile = (name: string) => site.patches?.names(name) ?? false;
          inspected.setBody(await inspectBody(read.buffer, req, inspected.contentType, bodyLimits, inspected.collector, wantsFile));
        } else {
          body = read.stream;
          // Too large: refused, unless only managed rules wanted it and it is an opaque upload.
          if (readers.specific || !opaqueBody(inspected.contentType, read.head)) inspected.bodyState = 'too_large';
        }
      }
    }

    const verdict = !site.hasRules ? ALLOW : await decide(site, { request: inspected, clientIp: client.text, parsedIp: client.parsed, hasClearance: () => challenges.hasClearance(req.headers.cookie, site.id, client.text) }, pipelineDeps);

    if (verdict.action === 'block') {
      sendAnswer(req, res, blockAnswer(verdict), requestId);
      return record(site, inspected, client, verdict, verdict.status, requestId, arrived);
    }
    if (verdict.action === 'challenge') {
      challenges.sendChallenge(res, { siteId: site.id, clientIp: client.text, returnTo: url, requestId });
      return record(site, inspected, client, verdict, 403, requestId, arrived);
    }
    const forwarding = performance.now();
    const result = await upstreams.forward(req, res, site.originUrl, { clientIp: client.text, viaTrustedProxy: client.viaTrustedProxy, proto: client.proto, requestId, body });
    options.metrics?.upstream(site.id, result.ok ? 'ok' : result.failure, (performance.now() - forwarding) / 1000);
    if (result.ok) return record(site, inspected, client, verdict, result.status, requestId, arrived);
    const answer = result.failure === 'timeout' ? ANSWERS.gatewayTimeout : ANSWERS.badGateway;
    sendAnswer(req, res, answer, requestId);
    record(site, inspected, client, verdict, answer.status, requestId, arrived);
  }

  const server: Server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      options.log.error({ err }, 'shield: request failed');
      sendAnswer(req, res, ANSWERS.badGateway, requestIdFor(req));
    });
  });
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://localhost:${port}`,
    port,
    registry,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await registry.close();
      await upstreams.close();
      await state.close();
    },
  };
}
