// Where each provider is and Aegis's OAuth client there, from the environment. Production uses the
// providers' public URLs; tests (and self-hosted GitLab / GitHub Enterprise) point them elsewhere.
// Nothing else differs between a stand-in and the real provider.
import type { ProviderName } from './types.ts';

export interface ProviderSettings {
  /** OAuth client of Aegis at the provider; unset: connections by pasted token only. */
  clientId: string | undefined;
  clientSecret: string | undefined;
  /** The provider's web origin: authorize and token endpoints (GitHub, GitLab, Linear) or Atlassian's auth server (Jira). */
  webUrl: string;
  /** The provider's API base URL. */
  apiUrl: string;
}

export type ProvidersSettings = Record<ProviderName, ProviderSettings>;

const trimSlash = (url: string): string => url.replace(/\/+$/, '');

function provider(env: NodeJS.ProcessEnv, prefix: string, webUrl: string, apiUrl: (web: string) => string): ProviderSettings {
  const web = trimSlash(env[`${prefix}_URL`] || webUrl);
  return {
    clientId: env[`${prefix}_CLIENT_ID`] || undefined,
    clientSecret: env[`${prefix}_CLIENT_SECRET`] || undefined,
    webUrl: web,
    apiUrl: trimSlash(env[`${prefix}_API_URL`] || apiUrl(web)),
  };
}

/**
 * AEGIS_<PROVIDER>_CLIENT_ID / _CLIENT_SECRET / _URL / _API_URL for GITHUB, GITLAB, JIRA, LINEAR;
 * AEGIS_OPENAI_API_URL and AEGIS_ANTHROPIC_API_URL for the AI providers' default base URLs.
 * GitLab's API defaults to <url>/api/v4 (self-managed: set AEGIS_GITLAB_URL only).
 */
export function loadProviderSettings(env: NodeJS.ProcessEnv): ProvidersSettings {
  return {
    github: provider(env, 'AEGIS_GITHUB', 'https://github.com', () => 'https://api.github.com'),
    gitlab: provider(env, 'AEGIS_GITLAB', 'https://gitlab.com', (web) => `${web}/api/v4`),
    jira: provider(env, 'AEGIS_JIRA', 'https://auth.atlassian.com', () => 'https://api.atlassian.com'),
    linear: provider(env, 'AEGIS_LINEAR', 'https://linear.app', () => 'https://api.linear.app'),
    // AI providers have no OAuth: the API URL is the default base URL a connection may override.
    openai: provider(env, 'AEGIS_OPENAI', 'https://platform.openai.com', () => 'https://api.openai.com/v1'),
    anthropic: provider(env, 'AEGIS_ANTHROPIC', 'https://console.anthropic.com', () => 'https://api.anthropic.com'),
  };
}

/**
 * The URLs of every provider's web origin and API as the operator configured them (or their public
 * defaults): the outbound policy treats connections there as `operator` traffic (net/outbound.ts),
 * whoever's request leads to them; every other provider URL (a Jira site, a self-managed GitLab, an
 * OpenAI-compatible base URL given with a connection) is held to the tenant rule.
 */
export function providerEndpoints(settings: ProvidersSettings): string[] {
  return Object.values(settings).flatMap((provider) => [provider.webUrl, provider.apiUrl]);
}
