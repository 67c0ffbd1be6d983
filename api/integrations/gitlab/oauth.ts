// GitLab's OAuth 2.0 authorization code flow with PKCE (S256), as documented for gitlab.com and
// self-managed instances: /oauth/authorize, /oauth/token (code and refresh_token grants) and
// /oauth/revoke on the web origin. Access tokens live 2 hours (expires_in 7200); each refresh
// returns a new refresh token and retires the old one, so the new pair must be stored at once.
import { ProviderAuthError, ProviderUnavailableError } from '../providers/errors.ts';
import type { ProviderSettings } from '../providers/settings.ts';
import type { OAuthFlow, TokenSet } from '../providers/types.ts';
import { failure, PROVIDER, send } from './api.ts';

/** `api` for statuses and merge request notes; `read_user` for GET /user. */
export const OAUTH_SCOPES = ['api', 'read_user'];

interface TokenAnswer {
  access_token?: unknown;
  refresh_token?: unknown;
  expires_in?: unknown;
  scope?: unknown;
}

function tokenSetOf(answer: TokenAnswer, requestedScopes: string[]): TokenSet {
  if (typeof answer.access_token !== 'string' || answer.access_token === '') throw new ProviderUnavailableError(PROVIDER, 'gitlab answered the token request without an access_token');
  const lifetime = typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in : null;
  return {
    accessToken: answer.access_token,
    refreshToken: typeof answer.refresh_token === 'string' && answer.refresh_token !== '' ? answer.refresh_token : null,
    // From our clock rather than GitLab's created_at: a skewed server clock must not make a fresh token look expired.
    expiresAt: lifetime === null ? null : new Date(Date.now() + lifetime * 1000),
    scopes: typeof answer.scope === 'string' ? answer.scope.split(/\s+/).filter(Boolean) : requestedScopes,
  };
}

/** `fetcher`: the connector's outbound fetch (../providers/http.ts). */
export function createGitlabOAuth(settings: ProviderSettings, fetcher: typeof fetch): OAuthFlow | null {
  const { clientId, clientSecret } = settings;
  if (!clientId || !clientSecret) return null;

  async function post(path: string, params: Record<string, string>): Promise<unknown> {
    const response = await send(fetcher, `${settings.webUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ ...params, client_id: clientId!, client_secret: clientSecret! }).toString(),
    });
    const text = await response.text();
    if (!response.ok) {
      const error = failure(response, text);
      // invalid_grant: the code or refresh token is spent, revoked or not ours; only a new consent helps.
      if (response.status === 400 && /invalid_grant/.test(text)) throw new ProviderAuthError(PROVIDER, error.message, 400);
      throw error;
    }
    try {
      return text === '' ? {} : (JSON.parse(text) as unknown);
    } catch {
      throw new ProviderUnavailableError(PROVIDER, `gitlab answered ${path} with a body that is not JSON`, response.status);
    }
  }

  return {
    pkce: true,
    authorizeUrl({ state, redirectUri, codeChallenge }) {
      const query = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', state, scope: OAUTH_SCOPES.join(' ') });
      if (codeChallenge) {
        query.set('code_challenge', codeChallenge);
        query.set('code_challenge_method', 'S256');
      }
      return `${settings.webUrl}/oauth/authorize?${query.toString()}`;
    },
    async exchangeCode({ code, redirectUri, codeVerifier }) {
      const params: Record<string, string> = { grant_type: 'authorization_code', code, redirect_uri: redirectUri };
      if (codeVerifier) params.code_verifier = codeVerifier;
      return tokenSetOf((await post('/oauth/token', params)) as TokenAnswer, OAUTH_SCOPES);
    },
    async refresh(refreshToken) {
      return tokenSetOf((await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken })) as TokenAnswer, OAUTH_SCOPES);
    },
    async revoke({ accessToken, refreshToken }) {
      // Either token names the grant; the refresh token still does after the access token expired.
      await post('/oauth/revoke', { token: refreshToken ?? accessToken });
    },
  };
}
