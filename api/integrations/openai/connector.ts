// OpenAI and OpenAI-compatible APIs (Azure OpenAI's v1 API, gateways, local servers): an API key
// pasted by an admin, optionally with another base URL. The key is checked by listing models; the
// model calls are Chat Completions with Structured Outputs (a strict JSON Schema response format),
// through the official SDK. No OAuth, no webhooks.
import OpenAI from 'openai';
import { callModelApi } from '../providers/ai-errors.ts';
import { ProviderRequestError } from '../providers/errors.ts';
import type { OutboundPolicy } from '../../../platform/net/outbound.ts';
import { providerFetch } from '../providers/http.ts';
import type { ProviderSettings } from '../providers/settings.ts';
import type { AccountInfo, AiModelClient, ModelReply, ModelRequest, ProviderConnector, ProviderSession } from '../providers/types.ts';
import { hostOf, keyAccountId, keySession, LISTED_MODELS, NO_WEBHOOKS } from './key-session.ts';

const PROVIDER = 'openai';
export const OPENAI_DEFAULT_MODEL = 'gpt-4.1-mini';
/** Listing models is quick; a model answer of a couple of thousand tokens can take a minute or more. */
const IDENTIFY_TIMEOUT_MS = 20_000;
const COMPLETE_TIMEOUT_MS = 120_000;

/**
 * An SDK client for one session. Retries are the job queue's (it honours Retry-After), not the
 * SDK's. Organisation, project and admin key are set to null so the server's OPENAI_* environment
 * never rides along on a customer's key.
 */
export function openAiClient(session: ProviderSession, timeout: number): OpenAI {
  return new OpenAI({
    apiKey: session.authorization,
    baseURL: session.apiBaseUrl,
    organization: null,
    project: null,
    adminAPIKey: null,
    webhookSecret: null,
    maxRetries: 0,
    timeout,
    // The outbound policy's fetch (net/outbound.ts), not the SDK's global one: a base URL an admin
    // gave is held to the tenant rule on every hop.
    fetch: session.fetch,
  });
}

async function identify(session: ProviderSession): Promise<AccountInfo> {
  const client = openAiClient(session, IDENTIFY_TIMEOUT_MS);
  const page = await callModelApi(PROVIDER, session.authorization, () => client.models.list());
  const models = page.data.slice(0, LISTED_MODELS).map((model) => model.id);
  return {
    id: keyAccountId(session.apiBaseUrl, session.authorization),
    name: `OpenAI-compatible at ${hostOf(session.apiBaseUrl)}`,
    metadata: { base_url: session.apiBaseUrl, models },
  };
}

async function complete(session: ProviderSession, request: ModelRequest): Promise<ModelReply> {
  const client = openAiClient(session, COMPLETE_TIMEOUT_MS);
  const response = await callModelApi(PROVIDER, session.authorization, () =>
    client.chat.completions.create(
      {
        model: request.model,
        messages: [
          { role: 'system', content: request.system },
          { role: 'user', content: request.user },
        ],
        response_format: { type: 'json_schema', json_schema: { name: request.schemaName, schema: request.schema, strict: true } },
        max_completion_tokens: request.maxOutputTokens,
      },
      request.signal ? { signal: request.signal } : undefined,
    ),
  );
  const message = response.choices[0]?.message;
  if (!message) throw new ProviderRequestError(PROVIDER, `${PROVIDER} answered without a choice`);
  // A refusal is the model declining this input: asking again would get the same answer.
  if (message.refusal) throw new ProviderRequestError(PROVIDER, `${PROVIDER} declined to answer: ${message.refusal.slice(0, 300)}`);
  return {
    text: message.content ?? '',
    model: response.model,
    usage: { input_tokens: response.usage?.prompt_tokens ?? 0, output_tokens: response.usage?.completion_tokens ?? 0 },
  };
}

/** `outbound`: the server's tenant policy (api/outbound-policy.ts); see providerFetch for the default. */
export function createOpenAiConnector(settings: ProviderSettings, outbound?: OutboundPolicy): ProviderConnector {
  const http = providerFetch(settings, outbound);
  const ai: AiModelClient = { defaultModel: OPENAI_DEFAULT_MODEL, complete };
  return {
    name: PROVIDER,
    kind: 'ai',
    oauth: null,
    tokenSession: (input) => keySession(input, settings.apiUrl, http),
    oauthSession: () => {
      throw new Error('OpenAI connections use an API key, not OAuth');
    },
    identify,
    ai,
    webhooks: NO_WEBHOOKS,
  };
}
