// The providers Aegis connects to, built from their settings. Callers look a connector up by the
// integration's provider name and use only the interfaces of ./types.ts.
import { createGithubConnector } from '../github/connector.ts';
import { createGitlabConnector } from '../gitlab/connector.ts';
import { createJiraConnector } from '../jira/connector.ts';
import { createLinearConnector } from '../linear/connector.ts';
import { createOpenAiConnector } from '../openai/connector.ts';
import { createAnthropicConnector } from '../anthropic/connector.ts';
import type { ProvidersSettings } from './settings.ts';
import type { ProviderConnector, ProviderName } from './types.ts';

export type Connectors = Record<ProviderName, ProviderConnector>;

export const PROVIDER_NAMES: readonly ProviderName[] = ['github', 'gitlab', 'jira', 'linear', 'openai', 'anthropic'];

export function createConnectors(settings: ProvidersSettings): Connectors {
  return {
    github: createGithubConnector(settings.github),
    gitlab: createGitlabConnector(settings.gitlab),
    jira: createJiraConnector(settings.jira),
    linear: createLinearConnector(settings.linear),
    openai: createOpenAiConnector(settings.openai),
    anthropic: createAnthropicConnector(settings.anthropic),
  };
}
