// The server's outbound policy for tenant traffic, from its configuration: the tenant rule
// (AEGIS_ALLOW_PRIVATE_TARGETS, names resolved by AEGIS_DNS_SERVERS or the system resolver), with the
// provider endpoints the operator configured (AEGIS_<PROVIDER>_URL / _API_URL and their defaults) as
// `operator` destinations. Built where the process is put together (app.ts, process-jobs.ts) and
// handed to git clones, provider connectors and the routes that check repository URLs.
import type { ServerConfig } from './config.ts';
import { providerEndpoints } from './integrations/providers/settings.ts';
import { configuredResolver } from '../platform/net/guarded-lookup.ts';
import { DNS_SERVERS_SETTING, tenantPolicy, type OutboundPolicy } from '../platform/net/outbound.ts';
import type { UrlPolicy } from '../platform/net/url-refusal.ts';

export function serverTenantPolicy(config: Pick<ServerConfig, 'allowPrivateTargets' | 'dnsServers' | 'providers'>): OutboundPolicy {
  return tenantPolicy({ allowPrivateTargets: config.allowPrivateTargets, dnsServers: config.dnsServers, operatorEndpoints: providerEndpoints(config.providers) });
}

/** The save-time check of provider URLs an admin gives (a Jira site, a self-managed GitLab): the same rule and resolver. */
export function serverTenantUrlPolicy(config: Pick<ServerConfig, 'allowPrivateTargets' | 'dnsServers'>): UrlPolicy {
  return { allowPrivate: config.allowPrivateTargets, resolve: configuredResolver(config.dnsServers, DNS_SERVERS_SETTING) };
}
