// Why a URL the server will call on a tenant's behalf (a webhook endpoint, a provider's site) is
// refused, or null. Unless private targets are allowed (AEGIS_ALLOW_PRIVATE_TARGETS): https only,
// and no private, loopback, link-local or reserved address — a literal address as it is, a name by
// every address it resolves to now. Credentials in the URL are always refused. A name that does
// not resolve (or not within `timeoutMs`) is accepted: the connection checks again.
import { isIP } from 'node:net';
import { refusedAddress } from './address-policy.ts';
import { resolveWithin, type AddressResolver } from './guarded-lookup.ts';

export interface UrlPolicy {
  allowPrivate: boolean;
  resolve: AddressResolver;
}

/** How a caller words its refusals (what the URL is for). */
export interface RefusalWording {
  credentials: string;
  https: string;
  /** Builds the message for a refused address; `host` may read "name resolves to address, which". */
  address(host: string, reason: string): string;
}

export async function urlRefusal(url: string, policy: UrlPolicy, wording: RefusalWording, timeoutMs = 2_000): Promise<string | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a valid URL';
  }
  if (parsed.username || parsed.password) return wording.credentials;
  if (policy.allowPrivate) return null;
  if (parsed.protocol !== 'https:') return wording.https;
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) !== 0) {
    const reason = refusedAddress(host);
    return reason ? wording.address(host, reason) : null;
  }
  for (const { address } of await resolveWithin(policy.resolve, host, timeoutMs)) {
    const reason = refusedAddress(address);
    if (reason) return wording.address(`${host} resolves to ${address}, which`, reason.slice(address.length + 1));
  }
  return null;
}
