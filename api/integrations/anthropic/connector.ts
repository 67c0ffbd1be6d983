// Anthropic's Messages API: an API key pasted by an admin, optionally with another base URL (a
// gateway in front of the API). The key is checked by listing models; a model call forces one tool
// whose input schema is the requested JSON Schema, so the answer arrives as that tool's input,
// through the official SDK. No OAuth, no webhooks.
import Anthropic from '@anthropic-ai/sdk';
import { callModelApi } from '../providers/ai-errors.ts';
import { hostOf, keyAccountId, keySession, LISTED_MODELS, NO_WEBHOOKS } from '../openai/key-session.ts';
import { ProviderRequestError } from '../providers/errors.ts';
import type { OutboundPolicy } from '../../../platform/net/outbound.ts';
import { providerFetch } from '../providers/http.ts';
import type { ProviderSettings } from '../providers/settings.ts';
import type { AccountInfo, AiModelClient, ModelReply, ModelRequest, ProviderConnector, ProviderSession } from '../providers/types.ts';

const PROVIDER = 'anthropic';
/** claude-sonnet-4-5 reaches end of life on 2026-11-30 (the SDK's deprecation list); its successor. */
export const ANTHROPIC_DEFAULT_MODEL = 'claude-sonnet-4-6';
const IDENTIFY_TIMEOUT_MS = 20_000;
const COMPLETE_TIMEOUT_MS = 120_000;

/**
 * An SDK client for one session. Retries are the job queue's, not the SDK's. The key also goes in
 * `x-api-key`, the header Anthropic documents (the 1.x SDK sends it as a Bearer token), so gateways
 * that only know the older header accept it too.
 */
export function anthropicClient(session: ProviderSession, timeout: number): Anthropic {
  return new Anthropic({
    apiKey: session.authorization,
    baseURL: session.apiBaseUrl,
    webhookKey: null,
    maxRetries: 0,
    timeout,
    // The outbound policy's fetch (net/outbound.ts), not the SDK's global one: a base URL an admin
    // gave is held to the tenant rule on every hop.
    fetch: session.fetch,
    defaultHeaders: { 'x-api-key': session.authorization },
  });
}

async function identify(session: ProviderSession): Promise<AccountInfo> {
  const client = anthropicClient(session, IDENTIFY_TIMEOUT_MS);
  const page = await callModelApi(PROVIDER, session.authorization, () => client.models.list());
  const models = page.data.slice(0, LISTED_MODELS).map((model) => model.id);
  return {
    id: keyAccountId(session.apiBaseUrl, session.authorization),
    name: `Anthropic at ${hostOf(session.apiBaseUrl)}`,
    metadata: { base_url: session.apiBaseUrl, models },
  };
}

/** The answer as text: the forced tool's input serialised, else whatever text came (the caller's validator calls it malformed). */
function replyText(message: Anthropic.Message, toolName: string): string {
  const tool = message.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use' && block.name === toolName);
  if (tool) return JSON.stringify(tool.input);
  return message.content
    .filter((block): block is Anthropic.TextBlock => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

async function complete(session: ProviderSession, request: ModelRequest): Promise<ModelReply> {
  const client = anthropicClient(session, COMPLETE_TIMEOUT_MS);
  const message = await callModelApi(PROVIDER, session.authorization, () =>
    client.messages.create(
      {
        model: request.model,
        max_tokens: request.maxOutputTokens,
        system: request.system,
        messages: [{ role: 'user', content: request.user }],
        tools: [
          {
            name: request.schemaName,
            description: 'Record your answer. Call this tool exactly once with the complete answer as its input.',
            // ModelRequest schemas are JSON Schema objects (type: 'object'); the API checks the rest.
            input_schema: request.schema as Anthropic.Tool.InputSchema,
          },
        ],
        tool_choice: { type: 'tool', name: request.schemaName },
      },
      request.signal ? { signal: request.signal } : undefined,
    ),
  );
  // A refusal is the model declining this input: asking again would get the same answer.
  if (message.stop_reason === 'refusal') throw new ProviderRequestError(PROVIDER, `${PROVIDER} declined to answer`);
  return {
    text: replyText(message, request.schemaName),
    model: message.model,
    usage: { input_tokens: message.usage.input_tokens, output_tokens: message.usage.output_tokens },
  };
}

/** `outbound`: the server's tenant policy (api/outbound-policy.ts); see providerFetch for the default. */
export function createAnthropicConnector(settings: ProviderSettings, outbound?: OutboundPolicy): ProviderConnector {
  const http = providerFetch(settings, outbound);
  const ai: AiModelClient = { defaultModel: ANTHROPIC_DEFAULT_MODEL, complete };
  return {
    name: PROVIDER,
    kind: 'ai',
    oauth: null,
    tokenSession: (input) => keySession(input, settings.apiUrl, http),
    oauthSession: () => {
      throw new Error('Anthropic connections use an API key, not OAuth');
    },
    identify,
    ai,
    webhooks: NO_WEBHOOKS,
  };
}
