// GitHub App user authorization (web application flow) with PKCE: {web}/login/oauth/authorize and
// {web}/login/oauth/access_token. With expiring user tokens enabled, the answer carries expires_in
// (8 hours) and a refresh_token (6 months) that is single use: each refresh returns a new pair.
// GitHub answers a refused code or refresh token with 200 and an `error` field rather than a 4xx.
// Revocation deletes this connection's token only: DELETE {api}/applications/{client_id}/token with
// `{"access_token": …}`, Basic auth with the client id and secret ("Delete an app token"). Not the
// grant (DELETE …/grant): that is the app's whole authorization by the GitHub user, and deleting it
// would revoke every token of that user — other connections made by the same person, in this
// organisation or another, would stop working.
import { errorForStatus, ProviderAuthError, ProviderRequestError, ProviderUnavailableError } from '../providers/errors.ts';
import type { ProviderSettings } from '../providers/settings.ts';
import type { OAuthFlow, TokenSet } from '../providers/types.ts';
import { PROVIDER } from './client.ts';

const TIMEOUT_MS = 30_000;

/** Errors GitHub gives for a code or refresh token that is spent, expired, revoked or not ours. */
const GRANT_ERRORS = new Set(['bad_verification_code', 'bad_refresh_token', 'unauthorized_client', 'incorrect_client_credentials']);

interface TokenAnswer {
  access_token?: unknown;
  refresh_token?: unknown;
  expires_in?: unknown;
  scope?: unknown;
  error?: unknown;
  error_description?: unknown;
}

async function send(fetcher: typeof fetch, url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetcher(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    const reason = err instanceof Error ? (err.name === 'TimeoutError' ? 'timed out' : err.message) : 'request failed';
    throw new ProviderUnavailableError(PROVIDER, `github is unreachable: ${reason}`);
  }
}

function tokenSetOf(answer: TokenAnswer): TokenSet {
  if (typeof answer.access_token !== 'string' || answer.access_token === '') throw new ProviderUnavailableError(PROVIDER, 'github answered the token request without an access_token');
  const lifetime = typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in : Number(answer.expires_in) > 0 ? Number(answer.expires_in) : null;
  return {
    accessToken: answer.access_token,
    refreshToken: typeof answer.refresh_token === 'string' && answer.refresh_token !== '' ? answer.refresh_token : null,
    expiresAt: lifetime === null ? null : new Date(Date.now() + lifetime * 1000),
    // GitHub App user tokens carry the app's permissions, not scopes: `scope` is usually empty.
    scopes: typeof answer.scope === 'string' ? answer.scope.split(/[\s,]+/).filter(Boolean) : [],
  };
}

/** `fetcher`: the connector's outbound fetch (../providers/http.ts). */
export function createGithubOAuth(settings: ProviderSettings, fetcher: typeof fetch): OAuthFlow | null {
  const { clientId, clientSecret } = settings;
  if (!clientId || !clientSecret) return null;

  async function token(params: Record<string, string>, grant: 'code' | 'refresh'): Promise<TokenSet> {
    const response = await send(fetcher, `${settings.webUrl}/login/oauth/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ ...params, client_id: clientId!, client_secret: clientSecret! }).toString(),
    });
    const text = await response.text();
    let answer: TokenAnswer = {};
    try {
      answer = text === '' ? {} : (JSON.parse(text) as TokenAnswer);
    } catch {
      if (response.ok) throw new ProviderUnavailableError(PROVIDER, 'github answered the token request with a body that is not JSON', response.status);
    }
    const description = typeof answer.error_description === 'string' ? answer.error_description : '';
    if (!response.ok) throw errorForStatus(PROVIDER, response.status, response.headers, description);
    if (typeof answer.error === 'string') {
      const message = `github refused the ${grant === 'code' ? 'authorization code' : 'refresh token'}: ${answer.error}${description ? ` (${description})` : ''}`;
      // A refused refresh means only a new consent helps; a refused code is this attempt's problem.
      if (grant === 'refresh' && GRANT_ERRORS.has(answer.error)) throw new ProviderAuthError(PROVIDER, message, response.status);
      throw new ProviderRequestError(PROVIDER, message, response.status);
    }
    return tokenSetOf(answer);
  }

  return {
    pkce: true,
    authorizeUrl({ state, redirectUri, codeChallenge }) {
      const query = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, state });
      if (codeChallenge) {
        query.set('code_challenge', codeChallenge);
        query.set('code_challenge_method', 'S256');
      }
      return `${settings.webUrl}/login/oauth/authorize?${query.toString()}`;
    },
    exchangeCode({ code, redirectUri, codeVerifier }) {
      return token({ code, redirect_uri: redirectUri, ...(codeVerifier ? { code_verifier: codeVerifier } : {}) }, 'code');
    },
    refresh(refreshToken) {
      return token({ grant_type: 'refresh_token', refresh_token: refreshToken }, 'refresh');
    },
    async revoke({ accessToken }) {
      const response = await send(fetcher, `${settings.apiUrl}/applications/${encodeURIComponent(clientId)}/token`, {
        method: 'DELETE',
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
          accept: 'application/vnd.github+json',
          'content-type': 'application/json',
          'x-github-api-version': '2022-11-28',
        },
        body: JSON.stringify({ access_token: accessToken }),
      });
      const text = await response.text();
      // 404: the token is already gone (revoked, expired, the user removed the app), which is what revocation wants.
      if (response.status === 204 || response.status === 404) return;
      if (!response.ok) {
        let detail = text.slice(0, 300);
        try {
          const body = JSON.parse(text) as { message?: unknown };
          if (typeof body.message === 'string') detail = body.message;
        } catch {
          // plain text
        }
        throw errorForStatus(PROVIDER, response.status, response.headers, detail);
      }
    },
  };
}
