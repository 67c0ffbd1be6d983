// fetch for documents Aegis reads from addresses its users give it (an identity provider's
// metadata, discovery document and keys): the same private-address guard as URL scans
// (AEGIS_ALLOW_PRIVATE_TARGETS), checked on the address actually connected to, no redirects, a
// timeout and a size cap.
import { isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { refusedAddress } from './address-policy.ts';
import { allowEveryAddress, guardedLookup } from './guarded-lookup.ts';

export class RefusedAddressError extends Error {
  override name = 'RefusedAddressError';
}

export interface GuardedFetchOptions {
  allowPrivate: boolean;
  timeoutMs?: number;
  maxBytes?: number;
}

/** A fetch-compatible function that refuses private addresses (unless allowed) and caps responses. */
export function guardedFetch({ allowPrivate, timeoutMs = 10_000, maxBytes = 1024 * 1024 }: GuardedFetchOptions): typeof fetch {
  const refuse = allowPrivate ? allowEveryAddress : refusedAddress;
  const agent = new Agent({
    connect: { lookup: guardedLookup({ refuse, refusal: (host, reason) => new RefusedAddressError(`${host}: ${reason} (set AEGIS_ALLOW_PRIVATE_TARGETS=true to allow)`) }) },
  });
  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input.toString());
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // net.connect skips `lookup` for literal addresses: check those here.
    const literalRefusal = isIP(host) !== 0 ? refuse(host) : null;
    if (literalRefusal) throw new RefusedAddressError(`${host}: ${literalRefusal} (set AEGIS_ALLOW_PRIVATE_TARGETS=true to allow)`);
    const response = await undiciFetch(input as Parameters<typeof undiciFetch>[0], {
      ...(init as Parameters<typeof undiciFetch>[1]),
      dispatcher: agent,
      redirect: 'manual',
      signal: init?.signal ?? AbortSignal.timeout(timeoutMs),
    });
    const length = Number(response.headers.get('content-length') ?? 0);
    if (length > maxBytes) throw new Error(`${url.origin} answered with ${length} bytes; at most ${maxBytes} are read`);
    const body = await response.arrayBuffer();
    if (body.byteLength > maxBytes) throw new Error(`${url.origin} answered with more than ${maxBytes} bytes`);
    const nullBody = [101, 204, 205, 304].includes(response.status);
    return new Response(nullBody ? null : body, { status: response.status, statusText: response.statusText, headers: Object.fromEntries(response.headers) });
  };
  return guarded as typeof fetch;
}
