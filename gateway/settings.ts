// What the gateway needs of the process's settings (api/config.ts loads them from flags and the
// environment; the server's config satisfies this shape as it is). The gateway declares its own
// needs rather than importing the API's config, so it runs as its own process (`aegis shield`,
// its cluster workers) with nothing of the API loaded. Everything here is JSON, so a cluster's
// primary hands the same settings to every worker.
import type { DestinationStream } from 'pino';
import type { BodyBudget } from './proxy/body-admission.ts';

export interface GatewaySettings {
  host: string;
  shieldPort: number;
  /** Where the sandbox's gateway listens; unset: none. */
  sandboxShieldPort: number | undefined;
  /** Where the gateway terminates TLS; unset: plain HTTP only. */
  shieldTlsPort: number | undefined;
  /** Whether a site serves before its organisation proved control of its domain (api/config.ts). */
  shieldDomainProof: 'required' | 'contested';
  dataDir: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  secretKey: string | undefined;
  trustedProxies: string[];
  logLevel: string;
  asnDbPath: string | undefined;
  shieldRefreshMs: number;
  shieldInspectBytes: number;
  shieldMultipartBytes: number;
  shieldMaxDecompressionRatio: number;
  shieldBodyBudget: BodyBudget;
  challengeDifficultyBits: number;
  upstreamTimeoutMs: number;
  shieldWsIdleMs: number;
  shieldWsMaxPerSite: number;
  shieldAllowSampleRate: number;
  shieldFlushMs: number;
  shieldAlertWindowMs: number;
  shieldTrafficRecord: boolean;
  shieldTrafficValueSampleRate: number;
  allowMetadataOrigins: boolean;
  /** AEGIS_ALLOW_PRIVATE_TARGETS: also the OCSP responders uploaded certificates name (tenant traffic). */
  allowPrivateTargets: boolean;
  shieldDnsServers: string[];
  metricsPort: number | undefined;
  metricsHost: string;
  metricsToken: string | undefined;
}

/** The keys of GatewaySettings, each once: what a cluster's primary copies for its workers. */
const KEYS: Record<keyof GatewaySettings, true> = {
  host: true,
  shieldPort: true,
  sandboxShieldPort: true,
  shieldTlsPort: true,
  shieldDomainProof: true,
  dataDir: true,
  databaseUrl: true,
  redisUrl: true,
  secretKey: true,
  trustedProxies: true,
  logLevel: true,
  asnDbPath: true,
  shieldRefreshMs: true,
  shieldInspectBytes: true,
  shieldMultipartBytes: true,
  shieldMaxDecompressionRatio: true,
  shieldBodyBudget: true,
  challengeDifficultyBits: true,
  upstreamTimeoutMs: true,
  shieldWsIdleMs: true,
  shieldWsMaxPerSite: true,
  shieldAllowSampleRate: true,
  shieldFlushMs: true,
  shieldAlertWindowMs: true,
  shieldTrafficRecord: true,
  shieldTrafficValueSampleRate: true,
  allowMetadataOrigins: true,
  allowPrivateTargets: true,
  shieldDnsServers: true,
  metricsPort: true,
  metricsHost: true,
  metricsToken: true,
};

/** Only the gateway's settings, out of a larger configuration (the server's): plain JSON. */
export function gatewaySettingsOf(config: GatewaySettings): GatewaySettings {
  return Object.fromEntries(Object.keys(KEYS).map((key) => [key, config[key as keyof GatewaySettings]])) as unknown as GatewaySettings;
}

/** In one process, the log may go somewhere else than stdout (tests capture it). */
export interface LocalGatewaySettings extends GatewaySettings {
  logStream?: DestinationStream | undefined;
}
