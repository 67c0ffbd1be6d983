// fetch for documents Aegis reads from addresses its users give it (an identity provider's
// metadata, discovery document and keys): the outbound policy's fetch (outbound.ts) under the
// tenant rule (AEGIS_ALLOW_PRIVATE_TARGETS), checked on the address actually connected to, no
// redirects (a 3xx comes back as it is; openid-client and the SAML reader treat it as a failure),
// a timeout and a size cap.
import { outboundFetch, tenantPolicy } from './outbound.ts';

export { RefusedAddressError } from './outbound-rules.ts';

export interface GuardedFetchOptions {
  allowPrivate: boolean;
  timeoutMs?: number;
  maxBytes?: number;
}

/** A fetch-compatible function that refuses private addresses (unless allowed) and caps responses. */
export function guardedFetch({ allowPrivate, timeoutMs = 10_000, maxBytes = 1024 * 1024 }: GuardedFetchOptions): typeof fetch {
  return outboundFetch(tenantPolicy({ allowPrivateTargets: allowPrivate }), { redirects: 'refuse', timeoutMs, maxBytes });
}
