// Shared names for the API keys page: the key as listed, its scopes, and the list's query key.
import type { Answer, Item } from '../../api/types.ts';

export type ApiKey = Item<'/api/v1/api-keys'>;
export type IssuedKey = Answer<'/api/v1/api-keys', 'post'>;
export type Scope = ApiKey['scopes'][number];

/** The scope catalogue (spec 5.2), in the order the form offers it. */
export const SCOPES: readonly Scope[] = ['scans:read', 'scans:write', 'vulnerabilities:read', 'vulnerabilities:write', 'shield:read', 'shield:write', 'admin'];

export const apiKeysQueryKey = ['api-keys'] as const;

/** How a key is recognised without its value: prefix and last four characters. */
export function maskedKey(key: Pick<ApiKey, 'prefix' | 'last4'>): string {
  return `${key.prefix}…${key.last4}`;
}
