// What the two AI connectors (OpenAI-compatible, Anthropic) share: a session made of an API key and
// a base URL, the connection's non-secret identity, and no webhooks (models never call Aegis).
import { createHash } from 'node:crypto';
import type { InboundWebhooks, ProviderSession, TokenInput } from '../providers/types.ts';

const trimSlash = (url: string): string => url.replace(/\/+$/, '');

/**
 * The session of a pasted API key (`fetcher`: the connector's outbound fetch, which the SDK is given): `url` (an OpenAI-compatible gateway, Azure, a local server)
 * or the provider's default base URL. The admin's `url` is kept in metadata so sessions rebuilt
 * from the stored connection (../sessions.ts reads `metadata.url`) call the same place.
 */
export function keySession(input: TokenInput, defaultBaseUrl: string, fetcher: typeof fetch): { session: ProviderSession; metadata: Record<string, unknown> } {
  const baseUrl = trimSlash(input.url?.trim() || defaultBaseUrl);
  const metadata: Record<string, unknown> = { base_url: baseUrl, ...(input.url ? { url: baseUrl } : {}) };
  return { session: { apiBaseUrl: baseUrl, authorization: input.token.trim(), metadata, fetch: fetcher }, metadata };
}

/** A stable id for a key at a base URL that reveals nothing usable: a hash of the URL and the key's last four characters. */
export function keyAccountId(baseUrl: string, key: string): string {
  return createHash('sha256').update(`${baseUrl}\n${key.slice(-4)}`).digest('hex').slice(0, 32);
}

/** The host a person recognises in the account name. */
export function hostOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).host;
  } catch {
    return baseUrl;
  }
}

export const NO_WEBHOOKS: InboundWebhooks = { verify: () => false, deliveryId: () => null, read: () => null };

/** How many model ids identify keeps with the connection. */
export const LISTED_MODELS = 20;
