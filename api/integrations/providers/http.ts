// The fetch every provider connector (GitHub, GitLab, Jira, Linear, OpenAI-compatible, Anthropic)
// makes its calls with, its SDKs included: the outbound policy's fetch (net/outbound.ts). The base
// URL of a connection may be an admin's (a Jira site, a self-managed GitLab, an AI gateway): tenant
// traffic, refused at private addresses unless AEGIS_ALLOW_PRIVATE_TARGETS; the endpoints the
// operator configured stay reachable wherever they are. Redirects are followed (providers answer
// renamed repositories and moved resources so) at most MAX_REDIRECTS times, each hop judged again,
// credentials dropped on a hop to another origin.
import { outboundFetch, tenantPolicy, type OutboundPolicy } from '../../../platform/net/outbound.ts';
import type { ProviderSettings } from './settings.ts';
import type { ProviderSession } from './types.ts';

export const MAX_REDIRECTS = 5;
/** Provider answers are JSON documents; nothing Aegis reads from one comes near this. */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/**
 * The connector's fetch. Without a policy (a connector made on its own, outside a server): the
 * tenant rule with private targets refused, this provider's configured endpoints excepted.
 */
export function providerFetch(settings: ProviderSettings, outbound?: OutboundPolicy): typeof fetch {
  const policy = outbound ?? tenantPolicy({ allowPrivateTargets: false, operatorEndpoints: [settings.webUrl, settings.apiUrl] });
  return outboundFetch(policy, { redirects: { follow: MAX_REDIRECTS }, timeoutMs: 30_000, maxBytes: MAX_RESPONSE_BYTES });
}

/** The session's outbound fetch, with a deadline for calls that bring no signal of their own (Octokit's). */
export function sessionFetch(session: ProviderSession, timeoutMs: number): typeof fetch {
  return ((input: string | URL | Request, init: RequestInit = {}) => session.fetch(input, { ...init, signal: init.signal ?? AbortSignal.timeout(timeoutMs) })) as typeof fetch;
}
