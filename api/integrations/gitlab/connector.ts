// GitLab (gitlab.com or a self-managed instance) as a source-control provider: OAuth with PKCE or a
// pasted personal/project/group access token, commit statuses and a merge request note as the
// merge request checks (./checks.ts), Merge Request Hook deliveries (./webhooks.ts).
import { ProviderError, ProviderRequestError } from '../providers/errors.ts';
import type { ProviderSettings } from '../providers/settings.ts';
import type { AccountInfo, ProviderConnector, ProviderSession } from '../providers/types.ts';
import { api, PROVIDER } from './api.ts';
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

export function createGitlabConnector(settings: ProviderSettings): ProviderConnector {
  return {
    name: 'gitlab',
    kind: 'source_control',
    oauth: createGitlabOAuth(settings),

    tokenSession(input) {
      const url = input.url ? instanceUrl(input.url) : null;
      const metadata: Record<string, unknown> = url ? { url } : {};
      // Pasted tokens often come with a trailing newline.
      return { session: { apiBaseUrl: url ? `${url}/api/v4` : settings.apiUrl, authorization: `Bearer ${input.token.trim()}`, metadata }, metadata };
    },

    oauthSession(accessToken, stored) {
      return { apiBaseUrl: stored.apiBaseUrl ?? settings.apiUrl, authorization: `Bearer ${accessToken}`, metadata: stored.metadata };
    },

    async identify(session): Promise<AccountInfo> {
      const user = await api<GitlabUser>(session, 'GET', '/user');
      if (typeof user.id !== 'number' || typeof user.username !== 'string') throw new ProviderRequestError(PROVIDER, 'gitlab answered GET /user without an id and username');
      const scopes = await tokenScopes(session);
      return { id: String(user.id), name: user.username, ...(scopes ? { scopes } : {}) };
    },

    sourceControl: gitlabSourceControl,
    webhooks: gitlabWebhooks,
  };
}
