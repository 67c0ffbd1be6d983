// Where a Shield site's origin may be: not a cloud metadata or link-local address
// (metadata-address.ts), unless the operator allows it (AEGIS_ALLOW_METADATA_ORIGINS=true). Checked
// twice: when an origin_url is saved (the API; a literal address in any notation URL parsing
// accepts, or a name by every address it resolves to now) and on every new connection the gateway
// opens (guarded-lookup.ts), which is what actually protects: a name may resolve differently later.
import { isIP } from 'node:net';
import { allowEveryAddress, configuredResolver, resolveWithin, type AddressPolicy, type AddressResolver } from './guarded-lookup.ts';
import { metadataAddress } from './metadata-address.ts';
import type { AddressRule } from './outbound-rules.ts';

export const ALLOW_METADATA_ORIGINS_SETTING = 'AEGIS_ALLOW_METADATA_ORIGINS';

export interface OriginPolicy {
  /** Why an address may not be an origin's; null when the operator allows every address. */
  refuse: AddressPolicy | null;
  /** How origin names are resolved, by the API's check and the gateway alike. */
  resolve: AddressResolver;
}

export interface OriginPolicySettings {
  /** AEGIS_ALLOW_METADATA_ORIGINS. */
  allowMetadataOrigins: boolean;
  /** AEGIS_SHIELD_DNS_SERVERS; empty: the system resolver. */
  dnsServers: readonly string[];
}

export function originPolicy(settings: OriginPolicySettings): OriginPolicy {
  return { refuse: settings.allowMetadataOrigins ? null : metadataAddress, resolve: configuredResolver(settings.dnsServers, 'AEGIS_SHIELD_DNS_SERVERS') };
}

/** The URL's host as WHATWG URL parsing normalises it (2852039166 → 169.254.169.254), IPv6 without brackets. */
export function originHost(originUrl: string | URL): string {
  const url = typeof originUrl === 'string' ? new URL(originUrl) : originUrl;
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

const hint = `(the operator setting ${ALLOW_METADATA_ORIGINS_SETTING}=true allows it)`;

/** Why the gateway could not forward to `originUrl` as written (it does not parse as a URL), or null. */
export function unparseableOrigin(originUrl: string): string | null {
  if (URL.canParse(originUrl)) return null;
  if (/\[[^\]]*%/.test(originUrl)) return 'is not a URL the gateway can connect to: an IPv6 zone (%25eth0) has no meaning outside this host and URL parsing refuses it; use the address without a zone, or a name';
  return 'is not a URL the gateway can connect to (it does not parse as a URL)';
}

/**
 * Why `originUrl` may not be saved as an origin, or null. A literal address is judged as it is, a
 * name by every address it resolves to now. A name that does not resolve (or not within
 * `timeoutMs`) is accepted: origins are often names only the gateway's network resolves, and the
 * gateway judges the addresses it connects to anyway.
 */
export async function originRefusal(originUrl: string, policy: OriginPolicy, timeoutMs = 5_000): Promise<string | null> {
  // The gateway connects to what WHATWG URL parsing makes of the origin_url: one it cannot parse
  // would be saved and then fail every request (the schema's pattern is looser than the parser).
  const unusable = unparseableOrigin(originUrl);
  if (unusable) return unusable;
  const refuse = policy.refuse;
  if (!refuse) return null;
  const host = originHost(originUrl);
  if (isIP(host) !== 0) {
    const reason = refuse(host);
    return reason ? `${reason}; Shield does not forward to cloud metadata or link-local addresses ${hint}` : null;
  }
  for (const { address } of await resolveWithin(policy.resolve, host, timeoutMs)) {
    const reason = refuse(address);
    if (!reason) continue;
    const what = reason.startsWith(`${address} is `) ? `${address}, which ${reason.slice(address.length + 1)}` : `${address}: ${reason}`;
    return `${host} resolves to ${what}; Shield does not forward to cloud metadata or link-local addresses ${hint}`;
  }
  return null;
}

/** The error a gateway connection to a refused origin fails with. */
export class RefusedOriginError extends Error {
  readonly code = 'EREFUSED_ORIGIN';
}

/** The `origin` trust class's address rule (outbound-rules.ts): what the gateway's connections are held to. */
export function originRule(policy: OriginPolicy): AddressRule {
  return {
    trust: 'origin',
    refuse: policy.refuse ?? allowEveryAddress,
    resolve: policy.resolve,
    refusal: (hostname, reason) => new RefusedOriginError(`${hostname}: ${reason} ${hint}`),
  };
}

/** Why the gateway may not connect to a literal-address origin (net.connect skips `lookup` for those), or null. */
export function literalOriginRefusal(host: string, policy: OriginPolicy): string | null {
  if (!policy.refuse || isIP(host) === 0) return null;
  const reason = policy.refuse(host);
  return reason ? `${reason} ${hint}` : null;
}
