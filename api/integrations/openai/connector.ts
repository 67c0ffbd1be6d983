// PLACEHOLDER (foundation): replaced by the real connector.
import type { ProviderSettings } from '../providers/settings.ts';
import type { ProviderConnector } from '../providers/types.ts';

export function createOpenAiConnector(settings: ProviderSettings): ProviderConnector {
  const notYet = (): never => {
    throw new Error('not built yet');
  };
  return {
    name: 'openai',
    kind: 'ai',
    oauth: null,
    tokenSession: (input) => ({ session: { apiBaseUrl: input.url ?? settings.apiUrl, authorization: input.token, metadata: {} }, metadata: {} }),
    oauthSession: notYet,
    identify: notYet,
    webhooks: { verify: () => false, deliveryId: () => null, read: () => null },
  };
}
