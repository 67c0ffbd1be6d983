// The Shield resources as the dashboard reads them: their types (from the served OpenAPI
// document), the query keys that group them (a site's key prefixes its rules', so one
// invalidation refreshes both), and the site query every site page shares.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../../../api/client.ts';
import type { BodyOf, Item } from '../../../api/types.ts';

export type Site = Item<'/api/v1/shield/sites'>;
export type SiteMode = Site['mode'];
export type SiteCreate = BodyOf<'/api/v1/shield/sites', 'post'>;
export type SiteUpdate = BodyOf<'/api/v1/shield/sites/{id}', 'patch'>;
export type VirtualPatch = Item<'/api/v1/shield/sites/{id}/virtual-patches'>;
export type IpRule = Item<'/api/v1/shield/sites/{id}/ip-access'>;
export type RateLimit = Item<'/api/v1/shield/sites/{id}/rate-limits'>;

export const sitesKey = ['shield', 'sites'] as const;
export const siteKey = (id: string) => ['shield', 'site', id] as const;
export const rulesKey = (id: string, kind: 'virtual-patches' | 'ip-access' | 'rate-limits' | 'schema' | 'schema-config') => [...siteKey(id), kind] as const;

export function useSite(id: string) {
  return useQuery({ queryKey: siteKey(id), queryFn: () => ok(api.GET('/api/v1/shield/sites/{id}', { params: { path: { id } } })) });
}

/** Paths inside the Shield section, absolute (SubNav and `~` links take these). */
export const sitePath = (id: string, tab = 'settings') => `/shield/sites/${encodeURIComponent(id)}/${tab}`;
