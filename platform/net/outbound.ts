// The outbound policy: every connection the server initiates — git clones, config repositories,
// provider and AI APIs, OpenID Connect and SAML metadata, cloud APIs, webhooks, URL scans, Shield
// origins — obtains its fetch, undici dispatcher, node agents, lookup or (for programs it runs) its
// egress proxy here, built from a policy that names its trust class. test/security/
// outbound-inventory.test.ts lists every outbound call site of the code base with its class and
// fails on one that is not listed; docs/security.md ("Outbound requests") describes the whole.
//
// The pieces, one job each:
//   outbound-rules.ts    trust classes (tenant, origin, operator), their address rules, policies
//   address-policy.ts    the tenant rule's refused ranges; metadata-address.ts the origin rule's
//   ipv4-in-ipv6.ts      the one decoder of IPv4 addresses inside IPv6 ones, both rules use it
//   guarded-lookup.ts    DNS lookup that drops refused addresses (the check on the address connected to)
//   outbound-connect.ts  connections under a policy: undici connector/agent, node agents, TCP
//   outbound-fetch.ts    fetch under a policy, with per-use redirect handling and caps
//   egress-proxy.ts      a local proxy that holds programs (git, curl, ssh) to a policy
//   origin-policy.ts     the origin rule's settings and the save-time check of origin_url
import { configuredResolver, type AddressResolver } from './guarded-lookup.ts';
import { everywhere, exceptOperatorEndpoints, operatorRule, tenantRule, type OutboundPolicy } from './outbound-rules.ts';

export { startEgressProxy, type EgressProxy } from './egress-proxy.ts';
export { outboundAgent, outboundConnector, outboundNodeAgents, outboundSocket, ruleLookup, type ConnectOptions } from './outbound-connect.ts';
export { outboundFetch, RefusedRedirectError, type OutboundFetchOptions, type RedirectHandling } from './outbound-fetch.ts';
export {
  ALLOW_PRIVATE_TARGETS_SETTING,
  everywhere,
  exceptOperatorEndpoints,
  literalRefusal,
  operatorRule,
  RefusedAddressError,
  tenantRefusal,
  tenantRule,
  type AddressRule,
  type OutboundPolicy,
  type TrustClass,
} from './outbound-rules.ts';
export { originRule, type OriginPolicy } from './origin-policy.ts';
export type { AddressResolver } from './guarded-lookup.ts';

export const DNS_SERVERS_SETTING = 'AEGIS_DNS_SERVERS';

/** The settings the tenant policy is built from. */
export interface TenantPolicySettings {
  /** AEGIS_ALLOW_PRIVATE_TARGETS. */
  allowPrivateTargets: boolean;
  /** AEGIS_DNS_SERVERS (`ip`, `ip:port`); empty or absent: the system resolver. */
  dnsServers?: readonly string[];
  /** How names resolve, when given instead of dnsServers (tests of the policy itself). */
  resolve?: AddressResolver;
  /** URLs the operator configured (provider endpoints): `operator` wherever they are reached from. */
  operatorEndpoints?: readonly string[];
}

/** Traffic to URLs tenants give: the tenant rule, except at the operator's configured endpoints. */
export function tenantPolicy(settings: TenantPolicySettings): OutboundPolicy {
  const resolve = settings.resolve ?? configuredResolver(settings.dnsServers ?? [], DNS_SERVERS_SETTING);
  return exceptOperatorEndpoints(tenantRule({ allowPrivateTargets: settings.allowPrivateTargets, resolve }), settings.operatorEndpoints ?? []);
}

/** Traffic to endpoints from the operator's environment: listed and opened here, no address restriction. */
export const operatorPolicy: OutboundPolicy = everywhere(operatorRule);
