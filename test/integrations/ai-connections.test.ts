// AI provider connections (OpenAI-compatible, Anthropic) against their local stand-ins, which check
// every request against the documented wire shape: connecting through the API with a pasted key
// (checked by listing models, sealed at rest, never echoed), the settings each kind accepts,
// disconnecting; and the model calls of each connector: the structured request (a strict
// json_schema response format / a forced tool), the reply text and usage, and how failures map onto
// the provider errors the triage jobs act on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnthropicConnector } from '../../api/integrations/anthropic/connector.ts';
import { createOpenAiConnector } from '../../api/integrations/openai/connector.ts';
import {
  ProviderAuthError,
  ProviderRateLimitError,
  ProviderRequestError,
  ProviderUnavailableError,
} from '../../api/integrations/providers/errors.ts';
import { loadProviderSettings } from '../../api/integrations/providers/settings.ts';
import type { ModelRequest, ProviderConnector, ProviderSession } from '../../api/integrations/providers/types.ts';
import { startAnthropicStandIn } from '../support/providers/anthropic.ts';
import { startOpenAiStandIn, type ModelStandIn } from '../support/providers/openai.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let openai: ModelStandIn;
let anthropic: ModelStandIn;
let t: TestServer;

beforeAll(async () => {
  openai = await startOpenAiStandIn();
  anthropic = await startAnthropicStandIn();
  t = await startTestServer({
    providers: { ...loadProviderSettings({}), openai: openai.settings, anthropic: anthropic.settings },
    allowPrivateTargets: true,
    rateLimitPerMinute: 10_000,
  });
}, 60_000);
afterAll(async () => {
  await t?.close();
  // Every request our code sent matched the documented shape.
  expect(openai?.rejected).toEqual([]);
  expect(anthropic?.rejected).toEqual([]);
  await openai?.close();
  await anthropic?.close();
});

const integrationRows = () => t.server.database.db.selectFrom('integrations').selectAll().where('kind', '=', 'ai').execute();
const storedRow = (id: string) => t.server.database.db.selectFrom('integrations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** A triage-like answer schema, strict-mode compatible (every property required, no others). */
const VERDICT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['verdict', 'confidence', 'explanation', 'suggested_fix'],
  properties: {
    verdict: { type: 'string', enum: ['likely_true_positive', 'likely_false_positive', 'needs_review'] },
    confidence: { type: 'number' },
    explanation: { type: 'string' },
    suggested_fix: {
      type: 'object',
      additionalProperties: false,
      required: ['summary', 'patch'],
      properties: { summary: { type: 'string' }, patch: { type: ['string', 'null'] } },
    },
  },
} as const;

const modelRequest = (model: string, overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  model,
  system: 'You triage security findings. Answer with the triage_verdict structure only.',
  user: 'Finding: SQL injection (CWE-89) in src/db/users.ts line 12: query(`select * from users where id = ${id}`)',
  schemaName: 'triage_verdict',
  schema: VERDICT_SCHEMA,
  maxOutputTokens: 800,
  ...overrides,
});

const estimate = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

describe('connecting AI providers through the API', () => {
  it('connects an OpenAI-compatible endpoint with a pasted key and base URL; the key is checked, sealed and never shown', async () => {
    const res = await t.call('POST', '/api/v1/integrations/openai/connect', {
      body: { token: openai.apiKey, url: `${openai.url}/`, settings: { ai: { model: 'gpt-4.1', monthly_token_budget: 50_000, auto_triage: true } } },
    });
    expect(res.status).toBe(201);
    const host = new URL(openai.url).host;
    expect(res.body).toMatchObject({
      object: 'integration',
      provider: 'openai',
      kind: 'ai',
      auth_type: 'token',
      status: 'active',
      error: null,
      account: `OpenAI-compatible at ${host}`,
      api_base_url: openai.url,
      settings: { ai: { model: 'gpt-4.1', monthly_token_budget: 50_000, auto_triage: true } },
      webhook_url: null,
    });
    expect(res.body.metadata).toMatchObject({ base_url: openai.url, url: openai.url, models: ['gpt-4.1-mini', 'gpt-4.1', 'gpt-4o-mini', 'o4-mini'] });
    expect(res.body.webhook).toBeUndefined();
    expect(res.body.account_id).toMatch(/^[0-9a-f]{32}$/);
    expect(res.text).not.toContain(openai.apiKey);
    expect(res.text).not.toContain(openai.apiKey.slice(8));

    const row = await storedRow(res.body.id);
    expect(JSON.stringify(row)).not.toContain(openai.apiKey);
    expect(JSON.stringify(row)).not.toContain(openai.apiKey.slice(8));
    expect(row.api_base_url).toBe(openai.url);

    const fetched = await t.call('GET', `/api/v1/integrations/${res.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.text).not.toContain(openai.apiKey);

    // Settings of another kind of connection are refused; the AI section is taken.
    const wrongKind = await t.call('PATCH', `/api/v1/integrations/${res.body.id}`, { body: { settings: { pull_requests: { enabled: true } } } });
    expect(wrongKind.status).toBe(422);
    const patched = await t.call('PATCH', `/api/v1/integrations/${res.body.id}`, { body: { settings: { ai: { model: 'o4-mini' } } } });
    expect(patched.status).toBe(200);
    expect(patched.body.settings.ai).toEqual({ model: 'o4-mini' });

    const deleted = await t.call('DELETE', `/api/v1/integrations/${res.body.id}`);
    expect(deleted.status).toBe(204);
    expect((await t.call('GET', `/api/v1/integrations/${res.body.id}`)).status).toBe(404);
    expect((await integrationRows()).find((r) => r.id === res.body.id)).toBeUndefined();
  });

  it('refuses a wrong key with 422 and stores nothing', async () => {
    const before = (await integrationRows()).length;
    const wrongKey = `sk-standin-${'0'.repeat(32)}`;
    const res = await t.call('POST', '/api/v1/integrations/openai/connect', { body: { token: wrongKey, url: openai.url } });
    expect(res.status).toBe(422);
    expect(res.text).toContain('refused');
    expect(res.text).not.toContain(wrongKey);
    expect((await integrationRows()).length).toBe(before);

    const anthropicRes = await t.call('POST', '/api/v1/integrations/anthropic/connect', { body: { token: 'sk-ant-api03-wrong-key-000000' } });
    expect(anthropicRes.status).toBe(422);
    expect((await integrationRows()).length).toBe(before);
  });

  it('needs the key: no token is 422 (AI providers have no OAuth)', async () => {
    const before = (await integrationRows()).length;
    const res = await t.call('POST', '/api/v1/integrations/openai/connect', { body: {} });
    expect(res.status).toBe(422);
    const anthropicRes = await t.call('POST', '/api/v1/integrations/anthropic/connect', { body: { settings: { ai: { auto_triage: true } } } });
    expect(anthropicRes.status).toBe(422);
    expect((await integrationRows()).length).toBe(before);
  });

  it('refuses source-control settings on an AI connection at connect time and stores nothing', async () => {
    const before = (await integrationRows()).length;
    const res = await t.call('POST', '/api/v1/integrations/openai/connect', { body: { token: openai.apiKey, url: openai.url, settings: { pull_requests: { enabled: true } } } });
    expect(res.status).toBe(422);
    expect((await integrationRows()).length).toBe(before);
  });

  it('connects Anthropic at the default base URL', async () => {
    const res = await t.call('POST', '/api/v1/integrations/anthropic/connect', { body: { token: anthropic.apiKey, settings: { ai: { model: 'claude-haiku-4-5' } } } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      provider: 'anthropic',
      kind: 'ai',
      status: 'active',
      account: `Anthropic at ${new URL(anthropic.url).host}`,
      api_base_url: anthropic.url,
      settings: { ai: { model: 'claude-haiku-4-5' } },
    });
    // No admin-given URL: sessions rebuilt later use the server's default.
    expect(res.body.metadata.url).toBeUndefined();
    expect(res.body.metadata.models).toContain('claude-haiku-4-5');
    expect(res.text).not.toContain(anthropic.apiKey);
    expect(JSON.stringify(await storedRow(res.body.id))).not.toContain(anthropic.apiKey);

    expect((await t.call('DELETE', `/api/v1/integrations/${res.body.id}`)).status).toBe(204);
  });
});

describe('OpenAI-compatible model calls', () => {
  let connector: ProviderConnector;
  let session: ProviderSession;
  beforeAll(() => {
    connector = createOpenAiConnector(openai.settings);
    session = connector.tokenSession({ token: openai.apiKey }).session;
  });

  it('builds the session from the key and the (trimmed) base URL', () => {
    expect(connector.kind).toBe('ai');
    expect(connector.oauth).toBeNull();
    // `fetch`: the connector's outbound fetch (platform/net/outbound.ts), which the SDK is given.
    expect(session).toEqual({ apiBaseUrl: openai.url, authorization: openai.apiKey, metadata: { base_url: openai.url }, fetch: expect.any(Function) });
    const other = connector.tokenSession({ token: 'k', url: 'https://gateway.example/openai/v1//' });
    expect(other.session.apiBaseUrl).toBe('https://gateway.example/openai/v1');
    expect(other.metadata).toEqual({ base_url: 'https://gateway.example/openai/v1', url: 'https://gateway.example/openai/v1' });
    expect(connector.webhooks.verify({}, Buffer.from('{}'), 'secret')).toBe(false);
    expect(connector.webhooks.read({}, {})).toBeNull();
  });

  it('asks for a strict json_schema answer and returns its text, model and usage', async () => {
    const request = modelRequest('gpt-4.1-mini');
    const reply = await connector.ai!.complete(session, request);
    const call = openai.calls.at(-1)!;
    expect(call.path).toBe('/v1/chat/completions');
    expect(call.body).toEqual({
      model: 'gpt-4.1-mini',
      messages: [
        { role: 'system', content: request.system },
        { role: 'user', content: request.user },
      ],
      response_format: { type: 'json_schema', json_schema: { name: 'triage_verdict', schema: VERDICT_SCHEMA, strict: true } },
      max_completion_tokens: 800,
    });
    expect(reply.model).toBe('gpt-4.1-mini');
    const answer = JSON.parse(reply.text);
    expect(answer).toMatchObject({ verdict: 'likely_true_positive', confidence: 0.85, suggested_fix: { patch: null } });
    expect(answer.explanation).toContain('CWE-89');
    expect(reply.usage).toEqual({ input_tokens: estimate(`${request.system}\n${request.user}`), output_tokens: estimate(reply.text) });
  });

  it('returns scripted answers as the model gave them, malformed or not', async () => {
    openai.answers.push({ json: { verdict: 'needs_review', confidence: 0.4, explanation: 'x', suggested_fix: { summary: 's', patch: null } } }, { text: 'I think it is fine' });
    const first = await connector.ai!.complete(session, modelRequest('gpt-4.1'));
    expect(first.text).toBe(JSON.stringify({ verdict: 'needs_review', confidence: 0.4, explanation: 'x', suggested_fix: { summary: 's', patch: null } }));
    const second = await connector.ai!.complete(session, modelRequest('gpt-4.1'));
    expect(second.text).toBe('I think it is fine');
  });

  it('maps failures: 429 with Retry-After, 5xx, 400, a refusal, an unreachable server', async () => {
    openai.answers.push({ status: 429, retryAfterSeconds: 7 });
    const limited = await connector.ai!.complete(session, modelRequest('gpt-4.1-mini')).catch((err: unknown) => err);
    expect(limited).toBeInstanceOf(ProviderRateLimitError);
    expect((limited as ProviderRateLimitError).retryAfterMs).toBe(7000);
    expect((limited as ProviderRateLimitError).status).toBe(429);

    openai.answers.push({ status: 503 });
    await expect(connector.ai!.complete(session, modelRequest('gpt-4.1-mini'))).rejects.toBeInstanceOf(ProviderUnavailableError);

    openai.answers.push({ status: 404, body: { error: { message: 'The model `gpt-9` does not exist', type: 'invalid_request_error', param: null, code: 'model_not_found' } } });
    const unknownModel = await connector.ai!.complete(session, modelRequest('gpt-9')).catch((err: unknown) => err);
    expect(unknownModel).toBeInstanceOf(ProviderRequestError);
    expect((unknownModel as Error).message).toContain('does not exist');

    openai.answers.push({ refusal: "I'm sorry, I can't help with that." });
    const refused = await connector.ai!.complete(session, modelRequest('gpt-4.1-mini')).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ProviderRequestError);
    expect((refused as Error).message).toContain('declined');

    const unreachable = connector.tokenSession({ token: openai.apiKey, url: 'http://127.0.0.1:9/v1' }).session;
    await expect(connector.ai!.complete(unreachable, modelRequest('gpt-4.1-mini'))).rejects.toBeInstanceOf(ProviderUnavailableError);
  });

  it('sends a schema that breaks strict mode as is, and maps the provider’s 400 to a request error', async () => {
    const loose = { type: 'object', properties: { verdict: { type: 'string' } } };
    const err = await connector.ai!.complete(session, modelRequest('gpt-4.1-mini', { schema: loose })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderRequestError);
    expect((err as Error).message).toContain('additionalProperties');
    // The stand-in recorded the refusal; it was provoked on purpose.
    expect(openai.rejected.splice(0)).toEqual([{ path: '/v1/chat/completions', reason: expect.stringContaining('additionalProperties') }]);
  });

  it('identifies the key by listing models, and a revoked key is an auth error without the key in it', async () => {
    const own = await startOpenAiStandIn();
    try {
      const ownConnector = createOpenAiConnector(own.settings);
      const ownSession = ownConnector.tokenSession({ token: own.apiKey }).session;
      const account = await ownConnector.identify(ownSession);
      expect(account).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{32}$/),
        name: `OpenAI-compatible at ${new URL(own.url).host}`,
        metadata: { base_url: own.url, models: ['gpt-4.1-mini', 'gpt-4.1', 'gpt-4o-mini', 'o4-mini'] },
      });
      expect((await ownConnector.identify(ownSession)).id).toBe(account.id);

      own.revokeKey();
      const identifyErr = await ownConnector.identify(ownSession).catch((e: unknown) => e);
      expect(identifyErr).toBeInstanceOf(ProviderAuthError);
      const completeErr = await ownConnector.ai!.complete(ownSession, modelRequest('gpt-4.1-mini')).catch((e: unknown) => e);
      expect(completeErr).toBeInstanceOf(ProviderAuthError);
      expect((completeErr as Error).message).toContain('401');
      expect((completeErr as Error).message).not.toContain(own.apiKey.slice(-4));
      expect(own.rejected).toEqual([]);
    } finally {
      await own.close();
    }
  });
});

describe('Anthropic model calls', () => {
  let connector: ProviderConnector;
  let session: ProviderSession;
  beforeAll(() => {
    connector = createAnthropicConnector(anthropic.settings);
    session = connector.tokenSession({ token: anthropic.apiKey }).session;
  });

  it('forces one tool with the schema as its input and returns the tool input as the text', async () => {
    const request = modelRequest('claude-sonnet-4-6', { user: 'Finding: hard-coded password in test/fixtures/login.spec.ts line 3' });
    const reply = await connector.ai!.complete(session, request);
    const call = anthropic.calls.at(-1)!;
    expect(call.path).toBe('/v1/messages');
    expect(call.body).toEqual({
      model: 'claude-sonnet-4-6',
      max_tokens: 800,
      system: request.system,
      messages: [{ role: 'user', content: request.user }],
      tools: [{ name: 'triage_verdict', description: expect.any(String), input_schema: VERDICT_SCHEMA }],
      tool_choice: { type: 'tool', name: 'triage_verdict' },
    });
    expect(reply.model).toBe('claude-sonnet-4-6');
    const answer = JSON.parse(reply.text);
    expect(answer).toMatchObject({ verdict: 'likely_false_positive', confidence: 0.8 });
    expect(answer.explanation).toContain('test/fixtures/login.spec.ts');
    expect(reply.usage).toEqual({ input_tokens: estimate(`${request.system}\n${request.user}`), output_tokens: estimate(reply.text) });
    expect(connector.ai!.defaultModel).toBe('claude-sonnet-4-6');
  });

  it('returns plain text when the model answers without the tool, for the caller to call malformed', async () => {
    anthropic.answers.push({ text: 'Looks like a false positive to me.' });
    const reply = await connector.ai!.complete(session, modelRequest('claude-haiku-4-5'));
    expect(reply.text).toBe('Looks like a false positive to me.');
  });

  it('maps failures: 429 with Retry-After, 529 overloaded, 400, a refusal', async () => {
    anthropic.answers.push({ status: 429, retryAfterSeconds: 3 });
    const limited = await connector.ai!.complete(session, modelRequest('claude-haiku-4-5')).catch((err: unknown) => err);
    expect(limited).toBeInstanceOf(ProviderRateLimitError);
    expect((limited as ProviderRateLimitError).retryAfterMs).toBe(3000);

    anthropic.answers.push({ status: 529 });
    await expect(connector.ai!.complete(session, modelRequest('claude-haiku-4-5'))).rejects.toBeInstanceOf(ProviderUnavailableError);

    anthropic.answers.push({ status: 400 });
    await expect(connector.ai!.complete(session, modelRequest('claude-haiku-4-5'))).rejects.toBeInstanceOf(ProviderRequestError);

    anthropic.answers.push({ refusal: 'I cannot help with that.' });
    await expect(connector.ai!.complete(session, modelRequest('claude-haiku-4-5'))).rejects.toBeInstanceOf(ProviderRequestError);
  });

  it('identifies the key, and a revoked key is an auth error without the key in it', async () => {
    const own = await startAnthropicStandIn();
    try {
      const ownConnector = createAnthropicConnector(own.settings);
      const ownSession = ownConnector.tokenSession({ token: own.apiKey }).session;
      const account = await ownConnector.identify(ownSession);
      expect(account.name).toBe(`Anthropic at ${new URL(own.url).host}`);
      expect(account.metadata).toEqual({ base_url: own.url, models: expect.arrayContaining(['claude-sonnet-4-6', 'claude-haiku-4-5']) });
      expect(account.id).not.toContain(own.apiKey);

      own.revokeKey();
      await expect(ownConnector.identify(ownSession)).rejects.toBeInstanceOf(ProviderAuthError);
      const completeErr = await ownConnector.ai!.complete(ownSession, modelRequest('claude-haiku-4-5')).catch((e: unknown) => e);
      expect(completeErr).toBeInstanceOf(ProviderAuthError);
      expect((completeErr as Error).message).not.toContain(own.apiKey);
      expect(own.rejected).toEqual([]);
    } finally {
      await own.close();
    }
  });
});
