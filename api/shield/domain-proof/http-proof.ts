// The HTTP proof: whoever answers plain HTTP for the domain — its current server before DNS moves
// to Aegis — serves this organisation's token at a fixed URL. The request goes out under the tenant
// class of the outbound policy (public addresses only, unless AEGIS_ALLOW_PRIVATE_TARGETS), as a
// GET of one fixed path with a small body cap; a redirect is followed only to the same URL over
// HTTPS (servers that force HTTPS), never elsewhere: another host's answer proves nothing.
import { outboundFetch, RefusedAddressError, type OutboundPolicy } from '../../../platform/net/outbound.ts';
import type { ProofOutcome } from '../../accounts/people/domain-proof.ts';
import { proofUrl } from '../sites/view.ts';

/** Largest answer read: a token is 32 characters. */
export const HTTP_PROOF_MAX_BYTES = 4096;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export interface HttpProofTarget {
  domain: string;
  token: string;
  /** AEGIS_SHIELD_DOMAIN_PROOF_HTTP_PORT (80). */
  port: number;
}

/** The fetch proofs are read with: `policy` is the server's tenant policy; redirects come back unfollowed (checkHttpProof decides). */
export function httpProofFetch(policy: OutboundPolicy): typeof fetch {
  return outboundFetch(policy, { redirects: 'refuse', timeoutMs: 10_000, connectTimeoutMs: 5_000, maxBytes: HTTP_PROOF_MAX_BYTES });
}

/** The HTTPS form of the proof URL, the one redirect that is followed. */
const httpsForm = (url: URL): string => `https://${url.hostname}${url.pathname}`;

async function answerOf(fetcher: typeof fetch, url: string): Promise<{ status: number; body: string; location: string | null }> {
  const res = await fetcher(url, { method: 'GET', headers: { accept: 'text/plain' } });
  const body = REDIRECTS.has(res.status) ? '' : await res.text();
  return { status: res.status, body, location: res.headers.get('location') };
}

/** The policy's refusal among an error's causes, if any. */
function refusalIn(err: unknown): Error | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) if (e instanceof RefusedAddressError) return e;
  return undefined;
}

/** The innermost message of an error ("fetch failed" says nothing; its cause does). */
function innermost(err: unknown): string {
  let message = String(err);
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) message = e.message;
  return message;
}

/** Reads the token URL: verified, a definite other answer (with why), or null when it could not be reached. */
export async function checkHttpProof(fetcher: typeof fetch, target: HttpProofTarget): Promise<ProofOutcome> {
  const url = proofUrl(target.domain, target.token, target.port);
  try {
    let answer = await answerOf(fetcher, url);
    if (REDIRECTS.has(answer.status)) {
      const next = answer.location ? new URL(answer.location, url) : null;
      if (!next || next.href !== httpsForm(new URL(url))) return { verified: false, reason: `${url} redirects elsewhere than to the same path over HTTPS`, found: [] };
      answer = await answerOf(fetcher, next.href);
    }
    if (answer.status !== 200) return { verified: false, reason: `${url} answered HTTP ${answer.status}, not 200 with the token`, found: [] };
    if (answer.body.trim() !== target.token) return { verified: false, reason: `${url} answered 200 but its body is not the token`, found: [] };
    return { verified: true };
  } catch (err) {
    const refusal = refusalIn(err);
    if (refusal) return { verified: false, reason: `${target.domain}: ${refusal.message}`, found: [] };
    return { verified: null, reason: `GET ${url} failed: ${innermost(err)}` };
  }
}
