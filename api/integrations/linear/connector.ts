// Linear: OAuth 2.0 with PKCE (S256) and refresh tokens, or a pasted personal API key. Linear's API
// is GraphQL at <api>/graphql; a personal key goes in the Authorization header as is, an OAuth
// access token as `Bearer …` (Linear documents both so).
import { errorForStatus, ProviderAuthError, ProviderUnavailableError } from '../providers/errors.ts';
import type { OutboundPolicy } from '../../../platform/net/outbound.ts';
import { providerFetch } from '../providers/http.ts';
import type { ProviderSettings } from '../providers/settings.ts';
import type { AccountInfo, OAuthFlow, ProviderConnector, TokenSet } from '../providers/types.ts';
import { graphql, PROVIDER } from './graphql.ts';
import { createLinearTickets } from './tickets.ts';
import { linearWebhooks } from './webhooks.ts';

const SCOPES = ['read', 'write'];

interface TokenAnswer {
  access_token: string;
  refresh_token?: string;
  expires_in?: number;
  scope?: string | string[];
}

const trimSlash = (url: string): string => url.replace(/\/+$/, '');

/** One OAuth call through `fetcher`, the connector's outbound fetch (../providers/http.ts). */
async function post(fetcher: typeof fetch, url: string, form: Record<string, string> | null, authorization?: string): Promise<{ status: number; headers: Headers; text: string }> {
  try {
    const response = await fetcher(url, {
      method: 'POST',
      headers: {
        accept: 'application/json',
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...(authorization ? { authorization } : {}),
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
      signal: AbortSignal.timeout(30_000),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  } catch (err) {
    throw new ProviderUnavailableError(PROVIDER, `linear could not be reached: ${(err as Error).message}`);
  }
}

function oauthError(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown; error_description?: unknown };
    return [body.error, body.error_description].filter((p): p is string => typeof p === 'string').join(': ');
  } catch {
    return text.slice(0, 200);
  }
}

function oauthFlow(webUrl: string, apiUrl: string, clientId: string, clientSecret: string, fetcher: typeof fetch): OAuthFlow {
  const requestTokens = async (form: Record<string, string>): Promise<TokenSet> => {
    const answer = await post(fetcher, `${apiUrl}/oauth/token`, { ...form, client_id: clientId, client_secret: clientSecret });
    // invalid_grant (a bad code or verifier, a spent or revoked refresh token) or invalid_client.
    if (answer.status >= 400 && answer.status < 500 && answer.status !== 429) {
      throw new ProviderAuthError(PROVIDER, `linear token request refused (${answer.status}): ${oauthError(answer.text)}`, answer.status);
    }
    if (answer.status < 200 || answer.status > 299) throw errorForStatus(PROVIDER, answer.status, answer.headers, oauthError(answer.text));
    const tokens = JSON.parse(answer.text) as TokenAnswer;
    const scopes = Array.isArray(tokens.scope) ? tokens.scope : (tokens.scope ?? '').split(/[\s,]+/);
    return {
      accessToken: tokens.access_token,
      // Apps without refresh tokens get a long-lived access token and no refresh token; a refresh
      // answer without a new one leaves the one sent in use.
      refreshToken: tokens.refresh_token ?? form.refresh_token ?? null,
      expiresAt: typeof tokens.expires_in === 'number' ? new Date(Date.now() + tokens.expires_in * 1000) : null,
      scopes: scopes.filter(Boolean),
    };
  };

  return {
    pkce: true,
    authorizeUrl({ state, redirectUri, codeChallenge }) {
      const params = new URLSearchParams({
        client_id: clientId,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: SCOPES.join(','),
        state,
        prompt: 'consent',
      });
      if (codeChallenge) {
        params.set('code_challenge', codeChallenge);
        params.set('code_challenge_method', 'S256');
      }
      return `${webUrl}/oauth/authorize?${params.toString()}`;
    },
    exchangeCode: ({ code, redirectUri, codeVerifier }) =>
      requestTokens({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        ...(codeVerifier ? { code_verifier: codeVerifier } : {}),
      }),
    refresh: (refreshToken) => requestTokens({ grant_type: 'refresh_token', refresh_token: refreshToken }),
    async revoke({ accessToken }) {
      const answer = await post(fetcher, `${apiUrl}/oauth/revoke`, null, `Bearer ${accessToken}`);
      // 400/401: the token is already invalid, which is what revoking wants.
      if (answer.status >= 500 || answer.status === 429) throw errorForStatus(PROVIDER, answer.status, answer.headers, oauthError(answer.text));
    },
  };
}

const IDENTIFY = `query AegisIdentify {
  viewer { id name email }
  organization { id name urlKey }
}`;

/** `outbound`: the server's tenant policy (api/outbound-policy.ts); see providerFetch for the default. */
export function createLinearConnector(settings: ProviderSettings, outbound?: OutboundPolicy): ProviderConnector {
  const http = providerFetch(settings, outbound);
  const webUrl = trimSlash(settings.webUrl);
  const apiUrl = trimSlash(settings.apiUrl);
  return {
    name: 'linear',
    kind: 'ticket_tracker',
    oauth: settings.clientId && settings.clientSecret ? oauthFlow(webUrl, apiUrl, settings.clientId, settings.clientSecret, http) : null,
    tokenSession({ token }) {
      return { session: { apiBaseUrl: apiUrl, authorization: token.trim(), metadata: {}, fetch: http }, metadata: {} };
    },
    oauthSession(accessToken, stored) {
      return { apiBaseUrl: stored.apiBaseUrl ?? apiUrl, authorization: `Bearer ${accessToken}`, metadata: stored.metadata, fetch: http };
    },
    async identify(session): Promise<AccountInfo> {
      const data = await graphql<{ viewer: { id: string; name: string; email: string }; organization: { id: string; name: string; urlKey: string } }>(
        session,
        IDENTIFY,
      );
      return {
        id: data.organization.id,
        name: data.organization.name,
        metadata: { url_key: data.organization.urlKey, user: data.viewer.name },
      };
    },
    tickets: createLinearTickets(),
    webhooks: linearWebhooks,
  };
}
