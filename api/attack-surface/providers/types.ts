// What attack-surface discovery needs from a cloud, whichever it is. AWS (../aws) implements it
// with a read-only role assumed with the connection's external id; a GCP service account would
// implement the same interface (scopes are then services × projects/regions).
//
// Discovery is split into scopes — one service in one region (`elbv2:eu-west-1`), or a global
// service (`cloudfront`) — that succeed or fail on their own: a scope the role may not read keeps
// the assets it found last time instead of marking them gone.

export type CloudProviderName = 'aws';

export const ASSET_KINDS = ['load_balancer', 'cloudfront_distribution', 'api_gateway', 'ec2_instance', 'elastic_ip', 'dns_record'] as const;
export type AssetKind = (typeof ASSET_KINDS)[number];

/** One public endpoint as the cloud describes it. */
export interface DiscoveredAsset {
  kind: AssetKind;
  /** A DNS name (lower case, no trailing dot) or an IP address: what a scan or a Shield site would point at. */
  host: string;
  /** The resource exposing it: an ARN where the cloud has one, else its id. */
  resourceId: string;
  /** A name a person recognises (load balancer name, distribution comment, API name, instance Name tag). */
  resourceName: string | null;
  /** Null for global services. */
  region: string | null;
  /** Kind-specific facts worth showing: scheme, ports, stage, record type, alias target, instance state. */
  details: Record<string, unknown>;
}

/** One scope's outcome. */
export type ScopeResult =
  | { scope: string; assets: DiscoveredAsset[] }
  | { scope: string; error: { code: string; message: string } };

/** What a cloud connection is, as stored (integration metadata and settings). */
export interface CloudAccount {
  /** The role Aegis assumes (arn:aws:iam::123456789012:role/AegisDiscovery). */
  roleArn: string;
  /** The external id Aegis generated for this connection; the role's trust policy requires it. */
  externalId: string;
  /** Regions of the regional services. */
  regions: string[];
}

export interface CloudIdentity {
  /** The cloud's account id (AWS: the 12 digits). */
  accountId: string;
  /** What the role resolved to (the assumed-role ARN). */
  arn: string;
}

export interface CloudConnector {
  name: CloudProviderName;
  /** Aegis's principal a customer's trust policy names, and that policy for `externalId`, to show at connect. */
  setup(externalId: string): {
    principal: string | null;
    trustPolicy: Record<string, unknown>;
    /** The read-only permissions the role needs: exactly the calls discovery makes. */
    permissionsPolicy: Record<string, unknown>;
  };
  /** Assumes the role and says whose it is. Throws ProviderAuthError when the role cannot be assumed (AccessDenied, wrong external id). */
  verify(account: CloudAccount, signal?: AbortSignal): Promise<CloudIdentity>;
  /**
   * Assumes the role once, then lists every scope's public endpoints. Throws ProviderAuthError when
   * the role cannot be assumed (nothing was read); a scope the role may not read is a ScopeResult
   * with an error. `onScope` is called as each scope completes (progress).
   */
  discover(account: CloudAccount, options: { signal?: AbortSignal; onScope?: (done: number, total: number) => void }): Promise<ScopeResult[]>;
}
