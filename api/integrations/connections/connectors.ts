// The providers Aegis connects to, built from their settings. Callers look a connector up by the
// integration's provider name and use only the interfaces of ./types.ts.
import { createGithubConnector } from '../github/connector.ts';
import { createGitlabConnector } from '../gitlab/connector.ts';
import { createJiraConnector } from '../jira/connector.ts';
import { createLinearConnector } from '../linear/connector.ts';
import { createOpenAiConnector } from '../openai/connector.ts';
import { createAnthropicConnector } from '../anthropic/connector.ts';
import type { OutboundPolicy } from '../../../platform/net/outbound.ts';
import type { ProvidersSettings } from '../providers/settings.ts';
import type { ProviderConnector, ProviderName } from '../providers/types.ts';

export type Connectors = Record<ProviderName, ProviderConnector>;

export const PROVIDER_NAMES: readonly ProviderName[] = ['github', 'gitlab', 'jira', 'linear', 'openai', 'anthropic'];

/**
 * Every connector, each calling its provider through the outbound fetch of `outbound` (the server's
 * tenant policy, api/outbound-policy.ts: provider base URLs admins give are tenant traffic, the
 * configured endpoints operator traffic).
 */
export function createConnectors(settings: ProvidersSettings, outbound: OutboundPolicy): Connectors {
  return {
    github: createGithubConnector(settings.github, outbound),
    gitlab: createGitlabConnector(settings.gitlab, outbound),
    jira: createJiraConnector(settings.jira, outbound),
    linear: createLinearConnector(settings.linear, outbound),
    openai: createOpenAiConnector(settings.openai, outbound),
    anthropic: createAnthropicConnector(settings.anthropic, outbound),
  };
}
