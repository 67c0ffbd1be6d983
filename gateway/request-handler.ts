// One request through the gateway, whichever listener it arrived on: find the site by Host,
// read the body within the client's budget, decide, and either answer here or forward to the
// site's origin. Every request becomes a decision record; the recorder keeps all non-allow
// decisions and a sample of allows.
import type { IncomingMessage } from 'node:http';
import type { Duplex, Readable } from 'node:stream';
import type { Logger } from 'pino';
import { newRequestId, requestIdFor } from '../platform/http/request-id.ts';
import { newId } from '../platform/ids.ts';
import type { GatewayMetrics } from '../platform/metrics/metrics.ts';
import { CHALLENGE_PATH, type Challenges } from './challenge/challenge.ts';
import type { DecisionEvent } from './decision.ts';
import type { DecisionRecorder } from './events/recorder.ts';
import type { TrafficWriter } from './traffic/traffic-writer.ts';
import { bufferLimit, inspectBody, opaqueBody, type BodyLimits } from './inspect/body.ts';
import { headerOverrides } from './inspect/method-override.ts';
import { LazyInspectedRequest, type InspectedRequest } from './inspected-request.ts';
import { ALLOW, decide, type PipelineDeps, type Verdict } from './pipeline.ts';
import type { BodyAdmission } from './proxy/body-admission.ts';
import type { ClientAddress, ClientIpResolver } from './proxy/client-ip.ts';
import type { ForwardFailure, Upstreams } from './proxy/forward.ts';
import { parseHost } from './proxy/host.ts';
import type { GatewayRequest, GatewayResponse } from './proxy/exchange.ts';
import { ANSWERS, sendAnswer, type GatewayAnswer } from './proxy/pages.ts';
import { hasBody, mediaType, readBody, type BodyRefusal as BodyReadRefusal } from './proxy/request-body.ts';
import { isWebSocketUpgrade, responseOnSocket } from './proxy/socket-response.ts';
import { WEBSOCKETS_FULL, type WebSocketProxy } from './proxy/websocket.ts';
import type { AsnDatabase } from './rules/asn-db.ts';
import { bodyReaders, type CompiledSite } from './sites/compile.ts';
import type { SiteRegistry } from './sites/registry.ts';
import type { RateState } from './state/rate-state.ts';

export interface RequestHandlerDeps {
  log: Logger;
  registry: SiteRegistry;
  recorder: DecisionRecorder;
  traffic?: TrafficWriter | undefined;
  state: RateState;
  upstreams: Upstreams;
  clientIps: ClientIpResolver;
  challenges: Challenges;
  admission: BodyAdmission;
  bodyLimits: BodyLimits;
  asnDb?: AsnDatabase | undefined;
  metrics?: GatewayMetrics | undefined;
  websockets: WebSocketProxy;
}

export interface RequestHandler {
  /** One request, over HTTP/1.1 or HTTP/2 (an HTTP/2 request's headers already read as HTTP/1.1's: edge/h2-request.ts). */
  handle(req: GatewayRequest, res: GatewayResponse): Promise<void>;
  /** A request node:http handed over as an `upgrade` (any `Upgrade` header), with its socket and the bytes read past its head. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void>;
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
function clientRequestIdOf(req: GatewayRequest): string | undefined {
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

export function createRequestHandler(deps: RequestHandlerDeps): RequestHandler {
  let lastStateError = 0;
  const pipelineDeps: PipelineDeps = {
    state: deps.state,
    asnDb: deps.asnDb,
    onStateError: (err: unknown) => {
      // Fail open, but say so — at most once a minute, not once per request.
      if (Date.now() - lastStateError > 60_000) deps.log.error({ err }, 'shield: rate-limit state unavailable; rate limits are not enforced');
      lastStateError = Date.now();
    },
  };

  /** Answers a body the budget refused (408 too slow, 429 the client's share, 503 everyone's) and records it as an inspection block. */
  const refuseBody = (req: GatewayRequest, res: GatewayResponse, site: CompiledSite, inspected: InspectedRequest, client: ClientAddress, refusal: BodyReadRefusal, requestId: string, arrived: number): void => {
    if (refusal === 'client_gone') {
      res.destroy();
      return;
    }
    const answer = BODY_ANSWERS[refusal];
    sendAnswer(req, res, answer, requestId);
    record(site, inspected, client, { action: 'block', ruleKind: 'inspection', ruleId: refusal, would: null, status: answer.status }, answer.status, requestId, arrived);
  };

  const record = (site: CompiledSite, inspected: InspectedRequest, client: ClientAddress, verdict: Verdict, status: number, requestId: string, arrived: number) => {
    deps.metrics?.decision(site.id, verdict.action, verdict.ruleKind);
    const keep = deps.recorder.keeps(verdict.action);
    const origin = keep || deps.traffic ? (deps.asnDb?.lookup(client.parsed) ?? null) : null;
    deps.traffic?.capture({ siteId: site.id, request: inspected, clientIp: client.text, parsedIp: client.parsed, asn: origin?.asn ?? null, country: origin?.country ?? null, verdict, managedLevels: site.managedLevels, status, arrived, latencyMs: Date.now() - arrived });
    if (!keep) return deps.recorder.countOnly({ site_id: site.id, at: arrived, action: verdict.action, rule_kind: verdict.ruleKind });
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
      ...(verdict.anomaly ? { anomaly: verdict.anomaly } : {}),
    };
    deps.recorder.record(event, keep);
  };

  async function handle(req: GatewayRequest, res: GatewayResponse): Promise<void> {
    const arrived = Date.now();
    const client = deps.clientIps.resolve(req);
    // Our id, unless a trusted proxy in front named the request already: a client's own id is not
    // shown on our pages or recorded as ours (it travels on as X-Client-Request-Id).
    const requestId = client.viaTrustedProxy ? requestIdFor(req) : newRequestId();
    const host = parseHost(req.headers.host);
    if (!host) return sendAnswer(req, res, ANSWERS.badHost, requestId);
    const site = deps.registry.lookup(host.name);
    if (!site) return sendAnswer(req, res, ANSWERS.unknownHost, requestId);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const method = req.method ?? 'GET';

    if (path === CHALLENGE_PATH && method === 'POST') {
      await deps.challenges.handleSubmit(req, res, { siteId: site.id, clientIp: client.text, secure: client.proto === 'https', requestId });
      return;
    }

    const inspected = new LazyInspectedRequest(method, path, q === -1 ? '' : url.slice(q + 1), req.headers, mediaType(req.headers['content-type']));
    let body: Buffer | Readable | undefined;
    let decodedBody = false;
    if (hasBody(req)) {
      // Every body is read before the origin is contacted, within the client's budget
      // (proxy/body-admission.ts): a slow or stalled upload holds a socket here, never an origin's.
      const ticket = deps.admission.admit(client.text);
      if (typeof ticket === 'string') return refuseBody(req, res, site, inspected, client, ticket, requestId, arrived);
      res.once('close', ticket.release);
      inspected.bodyState = 'not_inspected';
      const limit = bufferLimit(inspected.contentType, deps.bodyLimits);
      const read = await readBody(req, Math.max(limit, deps.admission.limits.bufferBytes), { ticket, minBytesPerSecond: deps.admission.limits.minBytesPerSecond, graceMs: deps.admission.limits.graceMs });
      if ('refused' in read) return refuseBody(req, res, site, inspected, client, read.refused, requestId, arrived);
      if (read.complete) ticket.arrived();
      else {
        const refusal = ticket.stream(site.originUrl);
        if (refusal) return refuseBody(req, res, site, inspected, client, refusal, requestId, arrived);
      }
      body = read.complete ? read.buffer : read.stream;
      const readers = bodyReaders(site, method, path, headerOverrides(method, req.headers));
      if (readers.specific || readers.managed) {
        if (read.complete && read.buffer.length <= limit) {
          const wantsFile = (name: string) => site.patches?.names(name) ?? false;
          const inspection = await inspectBody(read.buffer, req, inspected.contentType, deps.bodyLimits, inspected.collector, wantsFile);
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

    const verdict = !site.hasRules ? ALLOW : await decide(site, { request: inspected, clientIp: client.text, parsedIp: client.parsed, hasClearance: () => deps.challenges.hasClearance(req.headers.cookie, site.id, client.text) }, pipelineDeps);

    if (verdict.action === 'block') {
      sendAnswer(req, res, blockAnswer(verdict), requestId);
      return record(site, inspected, client, verdict, verdict.status, requestId, arrived);
    }
    if (verdict.action === 'challenge') {
      deps.challenges.sendChallenge(res, { siteId: site.id, clientIp: client.text, returnTo: url, requestId });
      return record(site, inspected, client, verdict, 403, requestId, arrived);
    }
    const forwarding = performance.now();
    const forwardedHost = client.viaTrustedProxy ? parseHost(req.headers['x-forwarded-host'])?.text : undefined;
    const clientRequestId = client.viaTrustedProxy ? undefined : clientRequestIdOf(req);
    const result = await deps.upstreams.forward(req, res, site.originUrl, { clientIp: client.text, viaTrustedProxy: client.viaTrustedProxy, proto: client.proto, host: forwardedHost ?? host.text, requestId, clientRequestId, body, decodedBody });
    deps.metrics?.upstream(site.id, result.ok ? 'ok' : result.failure, (performance.now() - forwarding) / 1000);
    if (result.ok) return record(site, inspected, client, verdict, result.status, requestId, arrived);
    const answer = FAILURE_ANSWERS[result.failure];
    sendAnswer(req, res, answer, requestId);
    record(site, inspected, client, verdict, answer.status, requestId, arrived);
  }

  /**
   * A request that asks to change protocols. A WebSocket handshake is decided like any request and,
   * allowed, proxied to the origin (proxy/websocket.ts, docs/shield-edge.md "WebSockets"). Any other
   * upgrade (h2c, TLS) is served as an ordinary request with its Upgrade ignored (RFC 9110 §7.8).
   * Either way the answer ends the connection: node has detached the socket's HTTP parser.
   */
  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    // node removed its own error listener when it handed the socket over: a reset must not crash the process.
    socket.on('error', () => socket.destroy());
    const answer = (what: GatewayAnswer, requestId: string) => sendAnswer(req, responseOnSocket(req, socket), what, requestId);
    // The parser stopped at the head, so a body cannot be read: a handshake has none, other upgrades are refused with one.
    if (!isWebSocketUpgrade(req) || hasBody(req)) return hasBody(req) ? answer(ANSWERS.badRequest, newRequestId()) : handle(req, responseOnSocket(req, socket));
    const arrived = Date.now();
    const client = deps.clientIps.resolve(req);
    const requestId = client.viaTrustedProxy ? requestIdFor(req) : newRequestId();
    const host = parseHost(req.headers.host);
    if (!host) return answer(ANSWERS.badHost, requestId);
    const site = deps.registry.lookup(host.name);
    if (!site) return answer(ANSWERS.unknownHost, requestId);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const inspected = new LazyInspectedRequest('GET', q === -1 ? url : url.slice(0, q), q === -1 ? '' : url.slice(q + 1), req.headers, '');
    const verdict = !site.hasRules ? ALLOW : await decide(site, { request: inspected, clientIp: client.text, parsedIp: client.parsed, hasClearance: () => deps.challenges.hasClearance(req.headers.cookie, site.id, client.text) }, pipelineDeps);

    if (verdict.action === 'block' || verdict.action === 'challenge') {
      // A challenge page is no use to a WebSocket client: refused with 403, recorded as the challenge it was.
      const refusal = verdict.action === 'block' ? blockAnswer(verdict) : ANSWERS.blocked;
      answer(refusal, requestId);
      deps.metrics?.websocketUpgrade(site.id, verdict.action === 'block' ? 'blocked' : 'challenged');
      return record(site, inspected, client, verdict, refusal.status, requestId, arrived);
    }
    if (!deps.websockets.admit(site.id, socket)) {
      answer(WEBSOCKETS_FULL, requestId);
      deps.metrics?.websocketUpgrade(site.id, 'over_capacity');
      return record(site, inspected, client, verdict, WEBSOCKETS_FULL.status, requestId, arrived);
    }
    const forwarding = performance.now();
    const forwardedHost = client.viaTrustedProxy ? parseHost(req.headers['x-forwarded-host'])?.text : undefined;
    const clientRequestId = client.viaTrustedProxy ? undefined : clientRequestIdOf(req);
    const result = await deps.websockets.proxy(req, socket, head, site.id, site.originUrl, { clientIp: client.text, viaTrustedProxy: client.viaTrustedProxy, proto: client.proto, host: forwardedHost ?? host.text, requestId, clientRequestId, body: undefined });
    deps.metrics?.websocketUpgrade(site.id, result.outcome);
    deps.metrics?.upstream(site.id, 'status' in result ? 'ok' : result.outcome, (performance.now() - forwarding) / 1000);
    if ('status' in result) return record(site, inspected, client, verdict, result.status, requestId, arrived);
    // 499: the client closed before the origin answered (nginx's convention); nobody is left to answer.
    if (result.outcome === 'client_gone') return record(site, inspected, client, verdict, 499, requestId, arrived);
    const failure = result.outcome === 'timeout' ? ANSWERS.gatewayTimeout : ANSWERS.badGateway;
    answer(failure, requestId);
    record(site, inspected, client, verdict, failure.status, requestId, arrived);
  }

  return { handle, upgrade };
}
