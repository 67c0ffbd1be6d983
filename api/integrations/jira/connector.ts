// Jira Cloud: OAuth 2.0 (3LO) through Atlassian's auth server, or an API token pasted with the
// account's e-mail and the site URL (HTTP Basic against the site itself). With OAuth every REST call
// goes through api.atlassian.com/ex/jira/<cloud id>, so identify finds the site's cloud id
// (accessible-resources) and hands back the API base to keep with the connection.
import { errorForStatus, ProviderAuthError, ProviderRequestError } from '../providers/errors.ts';
import type { OutboundPolicy } from '../../../platform/net/outbound.ts';
import { providerFetch } from '../providers/http.ts';
import type { ProviderSettings } from '../providers/settings.ts';
import type { AccountInfo, OAuthFlow, ProviderConnector, ProviderSession, TokenSet } from '../providers/types.ts';
import { call, errorDetail, PROVIDER, send } from './http.ts';
import { createJiraTickets } from './tickets.ts';
import { jiraWebhooks } from './webhooks.ts';

const SCOPES = ['read:jira-work', 'write:jira-work', 'read:jira-user', 'offline_access'];

interface TokenAnswer {
  access_token: string;
  refresh_token?: string;
  expires_in?: number;
  scope?: string;
}

interface AccessibleResource {
  id: string;
  url: string;
  name: string;
}

interface Myself {
  accountId: string;
  displayName?: string;
  emailAddress?: string;
}

const trimSlash = (url: string): string => url.replace(/\/+$/, '');

function oauthFlow(settings: ProviderSettings, clientId: string, clientSecret: string, fetcher: typeof fetch): OAuthFlow {
  const requestTokens = async (body: Record<string, string>): Promise<TokenSet> => {
    const answer = await send(fetcher, `${settings.webUrl}/oauth/token`, {
      method: 'POST',
      json: { client_id: clientId, client_secret: clientSecret, ...body },
    });
    // A bad code or a spent/revoked refresh token (invalid_grant, 400/403): the grant is gone, an
    // auth failure rather than one a retry could fix.
    if (answer.status >= 400 && answer.status < 500 && answer.status !== 429) {
      throw new ProviderAuthError(PROVIDER, `jira token request refused (${answer.status}): ${errorDetail(answer.text)}`, answer.status);
    }
    if (answer.status < 200 || answer.status > 299) {
      throw errorForStatus(PROVIDER, answer.status, answer.headers, errorDetail(answer.text));
    }
    const tokens = JSON.parse(answer.text) as TokenAnswer;
    return {
      accessToken: tokens.access_token,
      // Without a new refresh token in a refresh answer, the one sent stays good.
      refreshToken: tokens.refresh_token ?? body.refresh_token ?? null,
      expiresAt: typeof tokens.expires_in === 'number' ? new Date(Date.now() + tokens.expires_in * 1000) : null,
      scopes: (tokens.scope ?? '').split(/\s+/).filter(Boolean),
    };
  };

  return {
    // Atlassian's 3LO takes no code challenge.
    pkce: false,
    authorizeUrl({ state, redirectUri }) {
      const params = new URLSearchParams({
        audience: 'api.atlassian.com',
        client_id: clientId,
        scope: SCOPES.join(' '),
        redirect_uri: redirectUri,
        state,
        response_type: 'code',
        prompt: 'consent',
      });
      return `${settings.webUrl}/authorize?${params.toString()}`;
    },
    exchangeCode: ({ code, redirectUri }) => requestTokens({ grant_type: 'authorization_code', code, redirect_uri: redirectUri }),
    // Refresh tokens rotate: the answer's refresh token replaces the one sent.
    refresh: (refreshToken) => requestTokens({ grant_type: 'refresh_token', refresh_token: refreshToken }),
    // Atlassian has no revoke endpoint: the admin removes the app from their account.
  };
}

/** `outbound`: the server's tenant policy (api/outbound-policy.ts); see providerFetch for the default. */
export function createJiraConnector(settings: ProviderSettings, outbound?: OutboundPolicy): ProviderConnector {
  const http = providerFetch(settings, outbound);
  const apiUrl = trimSlash(settings.apiUrl);
  const cloudBase = (cloudId: string): string => `${apiUrl}/ex/jira/${encodeURIComponent(cloudId)}`;

  async function identifyOAuth(session: ProviderSession): Promise<AccountInfo> {
    // Works on a fresh session (apiBaseUrl not yet moved to the cloud id): the resources call goes to
    // api.atlassian.com whatever the session's base is.
    const resources = await call<AccessibleResource[]>(session.fetch, `${apiUrl}/oauth/token/accessible-resources`, { authorization: session.authorization });
    const wanted = typeof session.metadata.cloud_id === 'string' ? session.metadata.cloud_id : null;
    const site = (wanted && resources.find((r) => r.id === wanted)) || resources[0];
    if (!site) throw new ProviderRequestError(PROVIDER, 'the Jira grant gives access to no site');
    const base = cloudBase(site.id);
    const me = await call<Myself>(session.fetch, `${base}/rest/api/3/myself`, { authorization: session.authorization });
    return {
      id: site.id,
      name: site.name || site.url,
      metadata: { cloud_id: site.id, site_url: trimSlash(site.url), user: me.displayName ?? me.accountId, account_id: me.accountId },
      apiBaseUrl: base,
    };
  }

  async function identifyToken(session: ProviderSession): Promise<AccountInfo> {
    const me = await call<Myself>(session.fetch, `${session.apiBaseUrl}/rest/api/3/myself`, { authorization: session.authorization });
    const info = await call<{ serverTitle?: string; baseUrl?: string }>(session.fetch, `${session.apiBaseUrl}/rest/api/3/serverInfo`, {
      authorization: session.authorization,
    });
    const site = trimSlash(info.baseUrl || session.apiBaseUrl);
    return {
      // Without OAuth there is no cloud id to hand: the site URL is as stable and unique.
      id: site,
      name: info.serverTitle || new URL(site).host,
      metadata: { site_url: site, user: me.displayName ?? me.accountId, account_id: me.accountId },
    };
  }

  return {
    name: 'jira',
    kind: 'ticket_tracker',
    oauth: settings.clientId && settings.clientSecret ? oauthFlow({ ...settings, webUrl: trimSlash(settings.webUrl) }, settings.clientId, settings.clientSecret, http) : null,
    tokenSession({ token, email, url }) {
      if (!email) throw new ProviderRequestError(PROVIDER, 'a Jira API token needs the e-mail address of its Atlassian account');
      if (!url) throw new ProviderRequestError(PROVIDER, 'a Jira API token needs the site URL (https://<name>.atlassian.net)');
      let site: string;
      try {
        const parsed = new URL(url);
        if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new Error('not http(s)');
        site = trimSlash(`${parsed.origin}${parsed.pathname}`);
      } catch {
        throw new ProviderRequestError(PROVIDER, `not a Jira site URL: ${url}`);
      }
      const metadata = { email, url: site, site_url: site };
      return {
        session: { apiBaseUrl: site, authorization: `Basic ${Buffer.from(`${email}:${token}`).toString('base64')}`, metadata, fetch: http },
        metadata,
      };
    },
    oauthSession(accessToken, stored) {
      const cloudId = typeof stored.metadata.cloud_id === 'string' ? stored.metadata.cloud_id : null;
      return {
        apiBaseUrl: stored.apiBaseUrl ?? (cloudId ? cloudBase(cloudId) : apiUrl),
        authorization: `Bearer ${accessToken}`,
        metadata: stored.metadata,
        fetch: http,
      };
    },
    identify: (session) => (session.authorization.startsWith('Bearer ') ? identifyOAuth(session) : identifyToken(session)),
    tickets: createJiraTickets(),
    webhooks: jiraWebhooks,
  };
}
