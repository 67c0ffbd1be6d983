// Starts the gateway from server settings; `aegis serve` and `aegis shield` both come through here.
import type { Logger } from 'pino';
import type { GatewaySettings } from './settings.ts';
import type { Db } from '../platform/db/database.ts';
import type { DecisionRecorder } from './events/recorder.ts';
import type { TrafficWriter } from './traffic/traffic-writer.ts';
import type { GatewayMetrics } from '../platform/metrics/metrics.ts';
import { startGateway, type RunningGateway } from './gateway.ts';
import type { RateState } from './state/rate-state.ts';
import { AsnDatabase } from './rules/asn-db.ts';
import { originPolicy } from '../platform/net/origin-policy.ts';
import { outboundFetch, tenantPolicy } from '../platform/net/outbound.ts';
import type { Environment } from '../platform/db/environments.ts';

export interface LaunchDeps {
  db: Db;
  log: Logger;
  recorder: DecisionRecorder;
  /** The traffic record (traffic/), when kept. */
  traffic?: TrafficWriter | undefined;
  serverKey: Buffer;
  metrics?: GatewayMetrics | undefined;
  rateState?: RateState | undefined;
}

/** OCSP responses are small; a responder that is slow or large is not worth waiting for. */
const OCSP_FETCH = { redirects: 'refuse', timeoutMs: 10_000, connectTimeoutMs: 5_000, maxBytes: 64 * 1024 } as const;

/**
 * The production gateway on `shieldPort` (and `shieldTlsPort` when set), or with `environment:
 * 'test'` the sandbox's on `sandboxShieldPort` (plain HTTP only).
 */
export async function launchGateway(config: GatewaySettings, deps: LaunchDeps, environment: Environment = 'live'): Promise<RunningGateway> {
  const asnDb = config.asnDbPath ? await AsnDatabase.load(config.asnDbPath) : undefined;
  if (!asnDb) deps.log.warn('shield: no ASN database (--asn-db); ASN and country rules will not match');
  // The decision-write backlog is exported with the gateway's metrics (alerted on in ops/prometheus/).
  deps.metrics?.decisionRecorder?.(deps.recorder);
  if (deps.traffic) deps.metrics?.trafficRecord?.(deps.traffic);
  return startGateway({
    ...deps,
    host: config.host,
    port: environment === 'test' ? (config.sandboxShieldPort ?? 0) : config.shieldPort,
    environment,
    domainProof: config.shieldDomainProof,
    trustedProxies: config.trustedProxies,
    redisUrl: config.redisUrl,
    asnDb,
    refreshMs: config.shieldRefreshMs,
    bodyLimits: { inspectBytes: config.shieldInspectBytes, multipartBytes: config.shieldMultipartBytes, maxRatio: config.shieldMaxDecompressionRatio },
    bodyBudget: config.shieldBodyBudget,
    challengeDifficultyBits: config.challengeDifficultyBits,
    websocket: { idleMs: config.shieldWsIdleMs, maxPerSite: config.shieldWsMaxPerSite },
    tlsPort: environment === 'live' ? config.shieldTlsPort : undefined,
    // Responders are named by the certificates, uploaded ones included: tenant traffic.
    ocspFetch: outboundFetch(tenantPolicy({ allowPrivateTargets: config.allowPrivateTargets, dnsServers: config.shieldDnsServers }), OCSP_FETCH),
    upstream: {
      headersTimeoutMs: config.upstreamTimeoutMs,
      bodyTimeoutMs: config.upstreamTimeoutMs,
      originPolicy: originPolicy({ allowMetadataOrigins: config.allowMetadataOrigins, dnsServers: config.shieldDnsServers }),
    },
  });
}
