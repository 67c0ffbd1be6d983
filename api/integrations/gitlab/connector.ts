// GitLab (gitlab.com or a self-managed instance) as a source-control provider: OAuth with PKCE or a
// pasted personal/project/group access token, commit statuses and a merge request note as the
// merge request checks (./checks.ts), Merge Request Hook deliveries (./webhooks.ts). Disconnecting
// revokes a pasted personal access token with itself (revokeToken below).
import { ProviderError, ProviderRequestError } from '../providers/errors.ts';
import type { OutboundPolicy } from '../../../platform/net/outbound.ts';
import { providerFetch } from '../providers/http.ts';
import type { ProviderSettings } from '../providers/settings.ts';
import type { AccountInfo, ProviderConnector, ProviderSession, TokenRevocation } from '../providers/types.ts';
import { api, detailOf, failure, PROVIDER, send } from './api.ts';
import { gitlabSourceControl } from './checks.ts';
import { createGitlabOAuth } from './oauth.ts';
import { gitlabWebhooks } from './webhooks.ts';

interface GitlabUser {
  id: number;
  username: string;
}

/** A self-managed instance's web URL as given (http(s), no query); its API is <url>/api/v4. */
function instanceUrl(url: string): string {
  const trimmed = url.trim().replace(/\/+$/, '');
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    throw new ProviderRequestError(PROVIDER, 'the GitLab URL is not a URL');
  }
  if ((parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || parsed.username || parsed.password || parsed.search || parsed.hash) {
    throw new ProviderRequestError(PROVIDER, 'the GitLab URL must be an http(s) URL without credentials, query or fragment');
  }
  return trimmed.replace(/\/api\/v4$/, '');
}

/**
 * The token's scopes. GET /personal_access_tokens/self answers for personal, project and group
 * tokens (GitLab 15.5+); OAuth tokens and older instances get an error there, and then the scopes
 * are not known from this call (the OAuth grant's own scopes apply).
 */
async function tokenScopes(session: ProviderSession): Promise<string[] | undefined> {
  try {
    const self = await api<{ scopes?: unknown }>(session, 'GET', '/personal_access_tokens/self');
    return Array.isArray(self.scopes) ? self.scopes.filter((s): s is string => typeof s === 'string') : undefined;
  } catch (err) {
    if (err instanceof ProviderError && err.status !== null && err.status >= 400 && err.status < 500 && err.status !== 429) return undefined;
    throw err;
  }
}

/**
 * Revokes a pasted token with itself: DELETE /personal_access_tokens/self (GitLab 15.0+; 204 when
 * revoked, 400 when not). Project and group access tokens may be refused (403), and an instance
 * before 15.0 has no such endpoint (404): the token is then not revoked, which does not stop the
 * disconnect — it is recorded, and the token can be revoked in GitLab's settings. 401: the token no
 * longer works (already revoked or expired). Rate limits and outages throw.
 */
async function revokeToken(session: ProviderSession): Promise<TokenRevocation> {
  const response = await send(session.fetch, `${session.apiBaseUrl}/personal_access_tokens/self`, { method: 'DELETE', headers: { authorization: session.authorization, accept: 'application/json' } });
  const text = await response.text();
  if (response.status === 204 || response.status === 200) return { revoked: true };
  const detail = detailOf(text);
  const answered = `gitlab answered ${response.status}${detail ? `: ${detail.slice(0, 200)}` : ''}`;
  if (response.status === 401) return { revoked: false, reason: `${answered}; the token no longer works (already revoked or expired)` };
  if (response.status === 400 || response.status === 403 || response.status === 404) {
    return { revoked: false, reason: `${answered}; this token cannot revoke itself (a project or group access token, or GitLab before 15.0): revoke it in GitLab` };
  }
  throw failure(response, text);
}

/** `outbound`: the server's tenant policy (api/outbound-policy.ts); see providerFetch for the default. */
export function createGitlabConnector(settings: ProviderSettings, outbound?: OutboundPolicy): ProviderConnector {
  const http = providerFetch(settings, outbound);
  return {
    name: 'gitlab',
    kind: 'source_control',
    oauth: createGitlabOAuth(settings, http),

    tokenSession(input) {
      const url = input.url ? instanceUrl(input.url) : null;
      const metadata: Record<string, unknown> = url ? { url } : {};
      // Pasted tokens often come with a trailing newline.
      return { session: { apiBaseUrl: url ? `${url}/api/v4` : settings.apiUrl, authorization: `Bearer ${input.token.trim()}`, metadata, fetch: http }, metadata };
    },

    oauthSession(accessToken, stored) {
      return { apiBaseUrl: stored.apiBaseUrl ?? settings.apiUrl, authorization: `Bearer ${accessToken}`, metadata: stored.metadata, fetch: http };
    },

    async identify(session): Promise<AccountInfo> {
      const user = await api<GitlabUser>(session, 'GET', '/user');
      if (typeof user.id !== 'number' || typeof user.username !== 'string') throw new ProviderRequestError(PROVIDER, 'gitlab answered GET /user without an id and username');
      const scopes = await tokenScopes(session);
      return { id: String(user.id), name: user.username, ...(scopes ? { scopes } : {}) };
    },

    revokeToken,
    sourceControl: gitlabSourceControl,
    webhooks: gitlabWebhooks,
  };
}
