// Where a webhook may deliver. Deliveries carry findings and Shield traffic, and are an SSRF vector
// (the server POSTs wherever it is told), so unless the operator allows private targets
// (AEGIS_ALLOW_PRIVATE_TARGETS, as for URL scans): https only, and no private, loopback, link-local
// or reserved address. Checked when a URL is saved — a literal address as it is, a name by every
// address it resolves to now — and again on every delivery, on the address actually connected to
// (a name may resolve differently later: DNS rebinding).
import { configuredResolver } from '../../platform/net/guarded-lookup.ts';
import { urlRefusal, type RefusalWording, type UrlPolicy } from '../../platform/net/url-refusal.ts';

/** `resolve`: how endpoint names are resolved, at save and at delivery alike. */
export type WebhookUrlPolicy = UrlPolicy;

const HINT = '(set AEGIS_ALLOW_PRIVATE_TARGETS=true to allow it)';

export function webhookUrlPolicy(settings: { allowPrivateTargets: boolean; dnsServers: readonly string[] }): WebhookUrlPolicy {
  return { allowPrivate: settings.allowPrivateTargets, resolve: configuredResolver(settings.dnsServers, 'AEGIS_WEBHOOK_DNS_SERVERS') };
}

/** The refusal a delivery to a refused address fails with, naming the address and the setting. */
export const refusalMessage = (host: string, reason: string): string => `${host}: ${reason}; webhooks are not delivered to private addresses ${HINT}`;

const WEBHOOK_WORDING: RefusalWording = {
  credentials: 'must not contain credentials (user:password@); authenticate deliveries with the signing secret',
  https: `must use https:// — deliveries carry findings and request samples ${HINT}`,
  address: (host, reason) => refusalMessage(host, reason),
};

/** Why `url` may not be a webhook endpoint, or null (../net/url-refusal.ts). */
export const webhookUrlRefusal = (url: string, policy: WebhookUrlPolicy, timeoutMs = 2_000): Promise<string | null> => urlRefusal(url, policy, WEBHOOK_WORDING, timeoutMs);
