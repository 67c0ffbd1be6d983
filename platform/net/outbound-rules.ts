// The trust classes of server-initiated connections and the address rule each is held to. A rule
// says which addresses a connection may not reach (judged on the address actually connected to,
// after DNS), how names are resolved, and what error a refused connection fails with. A policy
// picks the rule per destination: everything a tenant names is `tenant`, except the endpoints the
// operator configured in the environment (provider URLs, AEGIS_<PROVIDER>_URL / _API_URL), which
// are `operator` wherever they are reached from — a tenant's Jira site that redirects to the
// operator's configured Jira is still the operator's endpoint, and a configured endpoint that
// redirects elsewhere is judged as tenant traffic there.
//
//   tenant    URLs a customer gives (scan targets, git repositories, webhooks, provider base URLs,
//             identity-provider issuers and metadata): private, loopback, link-local and reserved
//             addresses refused (address-policy.ts) unless AEGIS_ALLOW_PRIVATE_TARGETS=true.
//   origin    Shield origins: private allowed, cloud metadata and link-local refused
//             (metadata-address.ts) unless AEGIS_ALLOW_METADATA_ORIGINS=true (origin-policy.ts).
//   operator  Endpoints from the operator's environment (Google issuer, provider OAuth endpoints,
//             SMTP, OTLP, AWS, the database, Redis, this API's own URL): no address restriction.
import { isIP } from 'node:net';
import { refusedAddress } from './address-policy.ts';
import { allowEveryAddress, systemResolver, type AddressPolicy, type AddressResolver } from './guarded-lookup.ts';

export type TrustClass = 'tenant' | 'origin' | 'operator';

export const ALLOW_PRIVATE_TARGETS_SETTING = 'AEGIS_ALLOW_PRIVATE_TARGETS';

/** A refused tenant connection (the address, why, and the switch that would allow it). */
export class RefusedAddressError extends Error {
  override name = 'RefusedAddressError';
  readonly code = 'EREFUSED_ADDRESS';
}

export interface AddressRule {
  readonly trust: TrustClass;
  /** Why an address may not be connected to (a sentence naming it), or null when it may. */
  readonly refuse: AddressPolicy;
  /** How names are resolved before their addresses are judged. */
  readonly resolve: AddressResolver;
  /** The error a refused connection to `host` fails with. */
  refusal(host: string, reason: string): Error;
}

/** Chooses the rule a connection to `host` (a name or an address without brackets) and `port` is held to. */
export interface OutboundPolicy {
  ruleFor(host: string, port: number): AddressRule;
}

export const tenantRefusal = (host: string, reason: string): RefusedAddressError => new RefusedAddressError(`${host}: ${reason} (set ${ALLOW_PRIVATE_TARGETS_SETTING}=true to allow)`);

export interface TenantRuleOptions {
  /** AEGIS_ALLOW_PRIVATE_TARGETS: every address is allowed (names still resolve through `resolve`). */
  allowPrivateTargets: boolean;
  /** AEGIS_DNS_SERVERS (configuredResolver); default the system resolver. */
  resolve?: AddressResolver;
  /** The error a refused connection fails with; default RefusedAddressError naming the setting. */
  refusal?: (host: string, reason: string) => Error;
}

export function tenantRule({ allowPrivateTargets, resolve = systemResolver, refusal = tenantRefusal }: TenantRuleOptions): AddressRule {
  return { trust: 'tenant', refuse: allowPrivateTargets ? allowEveryAddress : refusedAddress, resolve, refusal };
}

/** Endpoints the operator configured: resolved by the system resolver, every address allowed. */
export const operatorRule: AddressRule = {
  trust: 'operator',
  refuse: allowEveryAddress,
  resolve: systemResolver,
  refusal: (host, reason) => new Error(`${host}: ${reason}`),
};

/** One rule for every destination. */
export const everywhere = (rule: AddressRule): OutboundPolicy => ({ ruleFor: () => rule });

/** `host:port` of a URL as connections name it: lower case, no brackets, the scheme's default port. */
export function endpointKey(host: string, port: number): string {
  return `${host.replace(/^\[(.*)\]$/, '$1').toLowerCase()}:${port}`;
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443, 'ssh:': 22, 'git:': 9418 };

/** The endpoint key of a URL, or null when it is not one with a host and a known port. */
export function urlEndpoint(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const port = parsed.port ? Number(parsed.port) : DEFAULT_PORTS[parsed.protocol];
  return parsed.hostname && port ? endpointKey(parsed.hostname, port) : null;
}

/**
 * `rule` everywhere except at `endpoints` (URLs the operator configured), which are `operator`.
 * Matching is by host name (or address) and port, as a connection names its destination.
 */
export function exceptOperatorEndpoints(rule: AddressRule, endpoints: readonly string[]): OutboundPolicy {
  const keys = new Set(endpoints.map(urlEndpoint).filter((key): key is string => key !== null));
  if (keys.size === 0) return everywhere(rule);
  return { ruleFor: (host, port) => (keys.has(endpointKey(host, port)) ? operatorRule : rule) };
}

/**
 * Why a connection to `host` is refused before it is opened, or null. net.connect does not call
 * `lookup` for a literal address, so literals are judged here; names are judged by the lookup.
 */
export function literalRefusal(rule: AddressRule, host: string): string | null {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return isIP(bare) === 0 ? null : rule.refuse(bare);
}
