// GitHub: source control (check runs, pull-request comments, authenticated clones) and GitHub
// Issues as a ticket tracker, over the REST API (api.github.com, or {host}/api/v3 on Enterprise).
// Connections are a GitHub App's user authorization (OAuth web flow with PKCE) or a pasted
// personal access token; both are sent as `Authorization: Bearer`. GitHub refuses check runs to
// personal access tokens, so a pasted token's session says it is one (./checks.ts reports a commit
// status for it instead).
import type { OutboundPolicy } from '../../../platform/net/outbound.ts';
import { providerFetch } from '../providers/http.ts';
import type { ProviderSettings } from '../providers/settings.ts';
import type { ProviderConnector } from '../providers/types.ts';
import { createGithubSourceControl, PASTED_TOKEN } from './checks.ts';
import { call, octokitFor } from './client.ts';
import { githubTickets } from './issues.ts';
import { createGithubOAuth } from './oauth.ts';
import { githubWebhooks } from './webhooks.ts';

const trimSlash = (url: string): string => url.replace(/\/+$/, '');

/** `outbound`: the server's tenant policy (api/outbound-policy.ts); see providerFetch for the default. */
export function createGithubConnector(settings: ProviderSettings, outbound?: OutboundPolicy): ProviderConnector {
  const http = providerFetch(settings, outbound);
  return {
    name: 'github',
    kind: 'source_control',
    oauth: createGithubOAuth(settings, http),

    tokenSession({ token }) {
      // The marker lives in the session only (rebuilt from the row on every use), not in the stored metadata.
      return { session: { apiBaseUrl: settings.apiUrl, authorization: `Bearer ${token.trim()}`, metadata: { [PASTED_TOKEN]: true }, fetch: http }, metadata: {} };
    },

    oauthSession(accessToken, stored) {
      return { apiBaseUrl: trimSlash(stored.apiBaseUrl ?? settings.apiUrl), authorization: `Bearer ${accessToken}`, metadata: stored.metadata, fetch: http };
    },

    async identify(session) {
      const { data, headers } = await call(() => octokitFor(session).rest.users.getAuthenticated());
      // Classic tokens list their scopes; fine-grained and GitHub App tokens send an empty header or none.
      const scopeHeader = headers['x-oauth-scopes'];
      const scopes = typeof scopeHeader === 'string' && scopeHeader.trim() !== '' ? scopeHeader.split(',').map((s) => s.trim()).filter(Boolean) : undefined;
      return { id: String(data.id), name: data.login, ...(scopes ? { scopes } : {}), metadata: { login: data.login } };
    },

    sourceControl: createGithubSourceControl(settings),
    tickets: githubTickets,
    webhooks: githubWebhooks,
  };
}
