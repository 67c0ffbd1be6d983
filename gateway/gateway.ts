// The Shield gateway: a plain node:http server (the hot path stays off Fastify's routing and
// hooks) that finds the site by Host, decides, and either answers itself or forwards the request
// to the site's origin. Every request becomes a decision record; the recorder keeps all non-allow
// decisions and a sample of allows.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Db } from '../platform/db/database.ts';
import { newRequestId, requestIdFor } from '../platform/http/request-id.ts';
import { parseHost } from './proxy/host.ts';
import { headerOverrides } from './inspect/method-override.ts';
import { newId } from '../platform/ids.ts';
import { CHALLENGE_PATH, Challenges } from './challenge/challenge.ts';
import type { DecisionEvent } from './decision.ts';
import type { DecisionRecorder } from './events/recorder.ts';
import type { GatewayMetrics } from '../platform/metrics/metrics.ts';
import { LazyInspectedRequest, type InspectedRequest } from './inspected-request.ts';
import { ALLOW, decide, type Verdict } from './pipeline.ts';
import { ClientIpResolver, type ClientAddress } from './proxy/client-ip.ts';
import { Upstreams, type ForwardFailure, type UpstreamOptions } from './proxy/forward.ts';
import { ANSWERS, sendAnswer, type GatewayAnswer } from './proxy/pages.ts';
import { bufferLimit, inspectBody, opaqueBody, type BodyLimits } from './inspect/body.ts';
import { hasBody, mediaType, readBody, type BodyRefusal as BodyReadRefusal } from './proxy/request-body.ts';
import { BodyAdmission, DEFAULT_BODY_ADMISSION, type BodyBudget } from './proxy/body-admission.ts';
import type { AsnDatabase } from './rules/asn-db.ts';
import { bodyReaders, type CompiledSite } from './sites/compile.ts';
import { SiteRegistry } from './sites/registry.ts';
import type { Environment } from '../platform/db/environments.ts';
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
}

export interface RunningGateway {
  url: string;
  port: number;
  registry: SiteRegistry;
  /** Request-body bytes held in memory right now, by every client (proxy/body-admission.ts). */
  heldBodyBytes(): number;
  close(): Promise<void>;
}

const MAX_EVENT_PATH = 1024;

/** What a body the budget refused is answered with. */
const BODY_ANSWERS: Record<Exclude<BodyReadRefusal, 'client_gone'>, GatewayAnswer> = {
  slow_body: ANSWERS.slowBody,
  client_uploads: ANSWERS.rateLimited(1),
  client_bytes: ANSWERS.rateLimited(1),
  client_streams: ANSWERS.rateLimited(1),
  total_bytes: ANSWERS.busy,
  origin_streams: ANSWERS.busy,
};

/** What a request the origin did not answer is answered with. */
const FAILURE_ANSWERS: Record<ForwardFailure, GatewayAnswer> = {
  timeout: ANSWERS.gatewayTimeout,
  unreachable: ANSWERS.badGateway,
  slow_body: ANSWERS.slowBody,
  client_share: ANSWERS.rateLimited(1),
};

/** A client's X-Request-Id, if it sent one that can travel in a header (printable ASCII, bounded). */
function clientRequestIdOf(req: IncomingMessage): string | undefined {
  const value = req.headers['x-request-id'];
  return typeof value === 'string' && /^[\x21-\x7e]{1,128}$/.test(value) ? value : undefined;
}

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
  const admission = new BodyAdmission({ ...DEFAULT_BODY_ADMISSION, ...options.bodyBudget });
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

  /** Answers a body the budget refused (408 too slow, 429 the client's share, 503 everyone's) and records it as an inspection block. */
  const refuseBody = (req: IncomingMessage, res: ServerResponse, site: CompiledSite, inspected: InspectedRequest, client: ClientAddress, refusal: BodyReadRefusal, requestId: string, arrived: number): void => {
    if (refusal === 'client_gone') {
      res.destroy();
      return;
    }
    const answer = BODY_ANSWERS[refusal];
    sendAnswer(req, res, answer, requestId);
    record(site, inspected, client, { action: 'block', ruleKind: 'inspection', ruleId: refusal, would: null, status: answer.status }, answer.status, requestId, arrived);
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
    const client = clientIps.resolve(req);
    // Our id, unless a trusted proxy in front named the request already: a client's own id is not
    // shown on our pages or recorded as ours (it travels on as X-Client-Request-Id).
    const requestId = client.viaTrustedProxy ? requestIdFor(req) : newRequestId();
    const host = parseHost(req.headers.host);
    if (!host) return sendAnswer(req, res, ANSWERS.badHost, requestId);
    const site = registry.lookup(host.name);
    if (!site) return sendAnswer(req, res, ANSWERS.unknownHost, requestId);
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
    let decodedBody = false;
    if (hasBody(req)) {
      // Every body is read before the origin is contacted, within the client's budget
      // (proxy/body-admission.ts): a slow or stalled upload holds a socket here, never an origin's.
      const ticket = admission.admit(client.text);
      if (typeof ticket === 'string') return refuseBody(req, res, site, inspected, client, ticket, requestId, arrived);
      res.once('close', ticket.release);
      inspected.bodyState = 'not_inspected';
      const limit = bufferLimit(inspected.contentType, bodyLimits);
      const read = await readBody(req, Math.max(limit, admission.limits.bufferBytes), { ticket, minBytesPerSecond: admission.limits.minBytesPerSecond, graceMs: admission.limits.graceMs });
      if ('refused' in read) return refuseBody(req, res, site, inspected, client, read.refused, requestId, arrived);
      if (!read.complete) {
        const refusal = ticket.stream(site.originUrl);
        if (refusal) return refuseBody(req, res, site, inspected, client, refusal, requestId, arrived);
      }
      body = read.complete ? read.buffer : read.stream;
      const readers = bodyReaders(site, method, path, headerOverrides(method, req.headers));
      if (readers.specific || readers.managed) {
        if (read.complete && read.buffer.length <= limit) {
          const wantsFile = (name: string) => site.patches?.names(name) ?? false;
          const inspection = await inspectBody(read.buffer, req, inspected.contentType, bodyLimits, inspected.collector, wantsFile);
          inspected.setBody(inspection);
          // What was inspected is what is forwarded: a body whose coding was undone goes on decoded.
          body = inspection.decoded ?? read.buffer;
          decodedBody = inspection.decoded !== undefined;
        } else {
          // Too large to inspect: refused, unless only managed rules wanted it and it is an opaque upload.
          if (readers.specific || !opaqueBody(inspected.contentType, read.complete ? read.buffer : read.head)) inspected.bodyState = 'too_large';
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
    const forwardedHost = client.viaTrustedProxy ? parseHost(req.headers['x-forwarded-host'])?.text : undefined;
    const clientRequestId = client.viaTrustedProxy ? undefined : clientRequestIdOf(req);
    const result = await upstreams.forward(req, res, site.originUrl, { clientIp: client.text, viaTrustedProxy: client.viaTrustedProxy, proto: client.proto, host: forwardedHost ?? host.text, requestId, clientRequestId, body, decodedBody });
    options.metrics?.upstream(site.id, result.ok ? 'ok' : result.failure, (performance.now() - forwarding) / 1000);
    if (result.ok) return record(site, inspected, client, verdict, result.status, requestId, arrived);
    const answer = FAILURE_ANSWERS[result.failure];
    sendAnswer(req, res, answer, requestId);
    record(site, inspected, client, verdict, answer.status, requestId, arrived);
  }

  const server: Server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      options.log.error({ err }, 'shield: request failed');
      sendAnswer(req, res, ANSWERS.badGateway, newRequestId());
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
    heldBodyBytes: () => admission.heldBytes,
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
