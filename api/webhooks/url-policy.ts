// Where a webhook may deliver. Deliveries carry findings and Shield traffic, and are an SSRF vector
// (the server POSTs wherever it is told), so unless the operator allows private targets
// (AEGIS_ALLOW_PRIVATE_TARGETS, as for URL scans): https only, and no private, loopback, link-local
// or reserved address. Checked when a URL is saved — a literal address as it is, a name by every
// address it resolves to now — and again on every delivery, on the address actually connected to
// (a name may resolve differently later: DNS rebinding).
import { isIP } from 'node:net';
import { refusedAddress } from '../net/address-policy.ts';
import { configuredResolver, resolveWithin, type AddressResolver } from '../net/guarded-lookup.ts';

export interface WebhookUrlPolicy {
  allowPrivate: boolean;
  /** How endpoint names are resolved, at save and at delivery alike. */
  resolve: AddressResolver;
}

const HINT = '(set AEGIS_ALLOW_PRIVATE_TARGETS=true to allow it)';

export function webhookUrlPolicy(settings: { allowPrivateTargets: boolean; dnsServers: readonly string[] }): WebhookUrlPolicy {
  return { allowPrivate: settings.allowPrivateTargets, resolve: configuredResolver(settings.dnsServers, 'AEGIS_WEBHOOK_DNS_SERVERS') };
}

/** The refusal a delivery to a refused address fails with, naming the address and the setting. */
export const refusalMessage = (host: string, reason: string): string => `${host}: ${reason}; webhooks are not delivered to private addresses ${HINT}`;

/**
 * Why `url` may not be a webhook endpoint, or null. Credentials in the URL are always refused: they
 * would travel with every delivery and show in clear to every admin. A name that does not resolve
 * (or not within `timeoutMs`) is accepted; the delivery checks again.
 */
export async function webhookUrlRefusal(url: string, policy: WebhookUrlPolicy, timeoutMs = 2_000): Promise<string | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a valid URL';
  }
  if (parsed.username || parsed.password) return 'must not contain credentials (user:password@); authenticate deliveries with the signing secret';
  if (policy.allowPrivate) return null;
  if (parsed.protocol !== 'https:') return `must use https:// — deliveries carry findings and request samples ${HINT}`;
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) !== 0) {
    const reason = refusedAddress(host);
    return reason ? refusalMessage(host, reason) : null;
  }
  for (const { address } of await resolveWithin(policy.resolve, host, timeoutMs)) {
    const reason = refusedAddress(address);
    if (reason) return refusalMessage(`${host} resolves to ${address}, which`, reason.slice(address.length + 1));
  }
  return null;
}
