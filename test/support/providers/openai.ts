// An OpenAI-compatible API on 127.0.0.1 for tests: `GET /v1/models` and `POST /v1/chat/completions`
// as OpenAI documents them, so the official `openai` SDK talks to it unchanged through `baseURL`.
// Requests need `Authorization: Bearer <key>`; the body is checked against the Chat Completions
// request shape (an unknown top-level field, a bad message role, a malformed or non-strict
// `response_format`, a non-numeric token limit) and refused with OpenAI's 400
// `{error:{message,type,param,code}}`, recorded in `rejected`. A refused key (wrong or revoked) is a
// 401 `invalid_api_key`, not recorded: that is the provider working as documented.
// Answers come from the FIFO `answers` script; when it is empty a deterministic triage verdict is
// derived from the prompt (see `defaultVerdict`), so a pipeline can run end to end unscripted.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { ProviderSettings } from '../../../api/integrations/providers/settings.ts';
import { listenOnLoopback } from '../loopback.ts';

export type ScriptedAnswer =
  | { json: unknown }
  | { text: string }
  /** The model declines (OpenAI `message.refusal`; Anthropic `stop_reason: 'refusal'`). */
  | { refusal: string }
  | { status: number; retryAfterSeconds?: number; body?: unknown };

export interface ModelCall {
  path: string;
  model: string;
  /** system + user message text joined with "\n" */
  prompt: string;
  /** the request body exactly as received (parsed JSON) */
  body: Record<string, unknown>;
  /** raw request body text */
  raw: string;
}

export interface ModelStandIn {
  /** The base URL to connect with (OpenAI: http://127.0.0.1:PORT/v1 ; Anthropic: http://127.0.0.1:PORT). */
  url: string;
  /** The one key it accepts. */
  apiKey: string;
  /** ProviderSettings with apiUrl = url (for ServerConfig.providers.openai / .anthropic). */
  settings: ProviderSettings;
  /** Every accepted model call (valid request shape and key), including those answered by a scripted error status. */
  calls: ModelCall[];
  /** Requests refused for not matching the documented shape. */
  rejected: { path: string; reason: string }[];
  /** FIFO script for the next model calls; when empty a default answer is produced. */
  answers: ScriptedAnswer[];
  /** From now on the key is refused with the provider's 401 error body. */
  revokeKey(): void;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Shared with ./anthropic.ts

export interface DefaultVerdict {
  verdict: 'likely_true_positive' | 'likely_false_positive' | 'needs_review';
  confidence: number;
  explanation: string;
  suggested_fix: { summary: string; patch: null };
}

// A path segment naming test code or fixtures (test/, tests/, __tests__/, spec/, fixture(s)/).
const TEST_PATH = /(?:^|[\s"'`(=:,/\\])((?:tests?|__tests__|specs?|fixtures?)\/[^\s"'`,)]*)/i;
const SQL_INJECTION = /\bCWE-89\b|sql injection/i;

/**
 * The verdict a stand-in gives when nothing is scripted, read from the user message (the finding):
 * a file under test/ or fixtures → likely_false_positive 0.8 (checked first: test code is not
 * shipped, whatever it contains); CWE-89 / SQL injection → likely_true_positive 0.85; anything else
 * → needs_review 0.5. The explanation names what decided it.
 */
export function defaultVerdict(findingText: string): DefaultVerdict {
  const testPath = TEST_PATH.exec(findingText);
  if (testPath) {
    return {
      verdict: 'likely_false_positive',
      confidence: 0.8,
      explanation: `The finding is in ${testPath[1]}, which is test code or a fixture, not shipped code.`,
      suggested_fix: { summary: 'No change needed in production code; mark the finding as accepted or exclude the test path.', patch: null },
    };
  }
  if (SQL_INJECTION.test(findingText)) {
    return {
      verdict: 'likely_true_positive',
      confidence: 0.85,
      explanation: 'The finding describes SQL injection (CWE-89): user input reaches a SQL query without parameterisation.',
      suggested_fix: { summary: 'Use a parameterised query or the query builder instead of concatenating input into SQL.', patch: null },
    };
  }
  return {
    verdict: 'needs_review',
    confidence: 0.5,
    explanation: 'The finding does not show enough context to decide whether it is exploitable.',
    suggested_fix: { summary: 'Review the flagged code by hand.', patch: null },
  };
}

/** Deterministic token estimate (about four characters a token). */
export const estimateTokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Text of a message content: a string, or the `text` of its text parts. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .filter(isRecord)
      .map((part) => (typeof part.text === 'string' ? part.text : ''))
      .filter((text) => text !== '')
      .join('\n');
  }
  return '';
}

/**
 * Where a JSON Schema breaks OpenAI's strict structured-output rules (every object lists all its
 * properties in `required` and sets `additionalProperties: false`); null when it keeps them.
 */
export function strictSchemaViolation(schema: unknown, context = '()'): string | null {
  if (!isRecord(schema)) return null;
  const type = schema.type;
  const isObject = type === 'object' || (Array.isArray(type) && type.includes('object'));
  if (isObject) {
    if (schema.additionalProperties !== false) {
      return `In context=${context}, 'additionalProperties' is required to be supplied and to be false.`;
    }
    const properties = isRecord(schema.properties) ? schema.properties : {};
    const required = Array.isArray(schema.required) ? schema.required : [];
    const missing = Object.keys(properties).filter((key) => !required.includes(key));
    if (missing.length > 0) {
      return `In context=${context}, 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing[0]}'.`;
    }
    for (const [key, sub] of Object.entries(properties)) {
      const found = strictSchemaViolation(sub, `('properties', '${key}')`);
      if (found) return found;
    }
  }
  if (schema.items !== undefined) {
    const found = strictSchemaViolation(schema.items, `${context}, 'items'`);
    if (found) return found;
  }
  for (const keyword of ['anyOf', 'oneOf', 'allOf'] as const) {
    const branches = schema[keyword];
    if (Array.isArray(branches)) {
      for (const branch of branches) {
        const found = strictSchemaViolation(branch, `${context}, '${keyword}'`);
        if (found) return found;
      }
    }
  }
  for (const defsKey of ['$defs', 'definitions'] as const) {
    const defs = schema[defsKey];
    if (isRecord(defs)) {
      for (const [name, sub] of Object.entries(defs)) {
        const found = strictSchemaViolation(sub, `('${defsKey}', '${name}')`);
        if (found) return found;
      }
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// OpenAI

/** Top-level fields of the Chat Completions request (openai-node ChatCompletionCreateParamsBase). */
const CHAT_FIELDS = new Set([
  'messages', 'model', 'audio', 'frequency_penalty', 'function_call', 'functions', 'logit_bias', 'logprobs',
  'max_completion_tokens', 'max_tokens', 'metadata', 'modalities', 'moderation', 'n', 'parallel_tool_calls',
  'prediction', 'presence_penalty', 'prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention',
  'reasoning_effort', 'response_format', 'safety_identifier', 'seed', 'service_tier', 'stop', 'store', 'stream',
  'stream_options', 'temperature', 'tool_choice', 'tools', 'top_logprobs', 'top_p', 'user', 'verbosity',
  'web_search_options',
]);
const ROLES = new Set(['system', 'developer', 'user', 'assistant']);
const MODELS = ['gpt-4.1-mini', 'gpt-4.1', 'gpt-4o-mini', 'o4-mini'];
const SCHEMA_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

interface OpenAiError {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

class Invalid extends Error {
  constructor(message: string, readonly param: string | null = null) {
    super(message);
  }
}

function checkTokens(body: Record<string, unknown>, field: string): void {
  const value = body[field];
  if (value === undefined || value === null) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new Invalid(`Invalid type for '${field}': expected an integer greater than 0, but got ${JSON.stringify(value)} instead.`, field);
  }
}

function checkResponseFormat(format: unknown): void {
  if (format === undefined) return;
  if (!isRecord(format)) throw new Invalid("Invalid type for 'response_format': expected an object.", 'response_format');
  if (format.type === 'json_object' || format.type === 'text') {
    const extra = Object.keys(format).filter((key) => key !== 'type');
    if (extra.length > 0) throw new Invalid(`Unrecognized request argument supplied: response_format.${extra[0]}`, 'response_format');
    return;
  }
  if (format.type !== 'json_schema') {
    throw new Invalid(
      `Invalid value: '${String(format.type)}'. Supported values are: 'json_object', 'json_schema', and 'text'.`,
      'response_format.type',
    );
  }
  const extra = Object.keys(format).filter((key) => key !== 'type' && key !== 'json_schema');
  if (extra.length > 0) throw new Invalid(`Unrecognized request argument supplied: response_format.${extra[0]}`, 'response_format');
  const spec = format.json_schema;
  if (!isRecord(spec)) throw new Invalid("Missing required parameter: 'response_format.json_schema'.", 'response_format.json_schema');
  const unknown = Object.keys(spec).filter((key) => !['name', 'schema', 'strict', 'description'].includes(key));
  if (unknown.length > 0) {
    throw new Invalid(`Unrecognized request argument supplied: response_format.json_schema.${unknown[0]}`, 'response_format.json_schema');
  }
  if (typeof spec.name !== 'string' || !SCHEMA_NAME.test(spec.name)) {
    throw new Invalid(
      "Invalid 'response_format.json_schema.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$' of at most 64 characters.",
      'response_format.json_schema.name',
    );
  }
  if (spec.schema !== undefined && !isRecord(spec.schema)) {
    throw new Invalid("Invalid type for 'response_format.json_schema.schema': expected an object.", 'response_format.json_schema.schema');
  }
  if (spec.strict !== undefined && spec.strict !== null && typeof spec.strict !== 'boolean') {
    throw new Invalid("Invalid type for 'response_format.json_schema.strict': expected a boolean.", 'response_format.json_schema.strict');
  }
  if (spec.strict === true) {
    const violation = strictSchemaViolation(spec.schema);
    if (violation) throw new Invalid(`Invalid schema for response_format '${spec.name}': ${violation}`, 'response_format');
  }
}

function checkMessages(messages: unknown): void {
  if (!Array.isArray(messages)) throw new Invalid("Missing required parameter: 'messages'.", 'messages');
  if (messages.length === 0) throw new Invalid("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages');
  messages.forEach((message, i) => {
    if (!isRecord(message)) throw new Invalid(`Invalid type for 'messages[${i}]': expected an object.`, `messages[${i}]`);
    if (typeof message.role !== 'string' || !ROLES.has(message.role)) {
      throw new Invalid(
        `Invalid value: '${String(message.role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
        `messages[${i}].role`,
      );
    }
    const content = message.content;
    if (typeof content === 'string') return;
    if (content === null && message.role === 'assistant') return;
    if (!Array.isArray(content)) {
      throw new Invalid(`Invalid type for 'messages[${i}].content': expected one of a string or array of objects.`, `messages[${i}].content`);
    }
    content.forEach((part, j) => {
      if (!isRecord(part) || typeof part.type !== 'string') {
        throw new Invalid(`Missing required parameter: 'messages[${i}].content[${j}].type'.`, `messages[${i}].content[${j}].type`);
      }
      if (part.type === 'text' && typeof part.text !== 'string') {
        throw new Invalid(`Missing required parameter: 'messages[${i}].content[${j}].text'.`, `messages[${i}].content[${j}].text`);
      }
    });
  });
}

function validateChat(body: Record<string, unknown>): void {
  const unknown = Object.keys(body).find((key) => !CHAT_FIELDS.has(key));
  if (unknown) throw new Invalid(`Unrecognized request argument supplied: ${unknown}`, null);
  if (typeof body.model !== 'string' || body.model === '') throw new Invalid('you must provide a model parameter', null);
  checkMessages(body.messages);
  checkResponseFormat(body.response_format);
  checkTokens(body, 'max_tokens');
  checkTokens(body, 'max_completion_tokens');
  // The SDK's create() without `stream` expects one JSON body; this stand-in does not stream.
  if (body.stream === true) throw new Invalid('The stand-in does not stream; send stream: false.', 'stream');
}

function defaultErrorBody(status: number): OpenAiError {
  if (status === 429) {
    return { message: 'Rate limit reached for requests. Please try again later.', type: 'requests', param: null, code: 'rate_limit_exceeded' };
  }
  if (status === 401) {
    return { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' };
  }
  if (status >= 500) {
    return { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null };
  }
  return { message: `The request was refused (${status}).`, type: 'invalid_request_error', param: null, code: null };
}

const maskKey = (key: string): string => `${key.slice(0, 3)}${'*'.repeat(8)}${key.slice(-4)}`;

export async function startOpenAiStandIn(): Promise<ModelStandIn> {
  const apiKey = `sk-standin-${randomBytes(16).toString('hex')}`;
  let revoked = false;
  const calls: ModelCall[] = [];
  const rejected: { path: string; reason: string }[] = [];
  const answers: ScriptedAnswer[] = [];
  let sequence = 0;

  const fail = (res: ServerResponse, status: number, error: OpenAiError, headers: Record<string, string> = {}): void =>
    sendJson(res, status, { error }, headers);
  const refuse = (res: ServerResponse, path: string, status: number, error: OpenAiError): void => {
    rejected.push({ path, reason: error.message });
    fail(res, status, error);
  };

  /** True when the request carries the live key; answers 401 otherwise. */
  const authorised = (req: IncomingMessage, res: ServerResponse, path: string): boolean => {
    const header = req.headers.authorization;
    if (typeof header !== 'string' || !header.startsWith('Bearer ')) {
      // No credential at all is our client's mistake, not the provider refusing a key.
      refuse(res, path, 401, {
        message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        type: 'invalid_request_error',
        param: null,
        code: null,
      });
      return false;
    }
    const key = header.slice('Bearer '.length);
    if (key !== apiKey || revoked) {
      fail(res, 401, {
        message: `Incorrect API key provided: ${maskKey(key)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_api_key',
      });
      return false;
    }
    return true;
  };

  const complete = (res: ServerResponse, path: string, body: Record<string, unknown>, raw: string): void => {
    const messages = body.messages as Record<string, unknown>[];
    const prompt = messages.map((m) => contentText(m.content)).join('\n');
    const userText = messages.filter((m) => m.role === 'user').map((m) => contentText(m.content)).join('\n');
    const model = body.model as string;
    calls.push({ path, model, prompt, body, raw });

    const scripted = answers.shift() ?? { json: defaultVerdict(userText || prompt) };
    if ('status' in scripted) {
      const headers: Record<string, string> = {};
      if (scripted.retryAfterSeconds !== undefined) headers['retry-after'] = String(scripted.retryAfterSeconds);
      sendJson(res, scripted.status, scripted.body ?? { error: defaultErrorBody(scripted.status) }, headers);
      return;
    }
    const content = 'json' in scripted ? JSON.stringify(scripted.json) : 'text' in scripted ? scripted.text : null;
    const refusal = 'refusal' in scripted ? scripted.refusal : null;
    const promptTokens = estimateTokens(prompt);
    const completionTokens = estimateTokens(content ?? refusal ?? '');
    sequence += 1;
    sendJson(res, 200, {
      id: `chatcmpl-standin${String(sequence).padStart(6, '0')}`,
      object: 'chat.completion',
      created: 1_767_225_600 + sequence,
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, refusal, annotations: [] },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
        prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      },
      service_tier: 'default',
      system_fingerprint: 'fp_standin',
    }, { 'x-request-id': `req_${createHash('sha256').update(String(sequence)).digest('hex').slice(0, 24)}` });
  };

  const server = createServer((req, res) => {
    void (async () => {
      const path = new URL(req.url ?? '/', 'http://stand-in').pathname;
      const raw = await readBody(req);
      if (req.method === 'GET' && path === '/v1/models') {
        if (!authorised(req, res, path)) return;
        sendJson(res, 200, {
          object: 'list',
          data: MODELS.map((id, i) => ({ id, object: 'model', created: 1_744_000_000 + i, owned_by: 'system' })),
        });
        return;
      }
      if (req.method === 'POST' && path === '/v1/chat/completions') {
        if (!authorised(req, res, path)) return;
        if (!String(req.headers['content-type'] ?? '').includes('application/json')) {
          refuse(res, path, 400, { message: 'Content-Type must be application/json.', type: 'invalid_request_error', param: null, code: null });
          return;
        }
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          refuse(res, path, 400, {
            message: "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)",
            type: 'invalid_request_error',
            param: null,
            code: null,
          });
          return;
        }
        if (!isRecord(body)) {
          refuse(res, path, 400, { message: 'The request body must be a JSON object.', type: 'invalid_request_error', param: null, code: null });
          return;
        }
        try {
          validateChat(body);
        } catch (err) {
          if (!(err instanceof Invalid)) throw err;
          refuse(res, path, 400, { message: err.message, type: 'invalid_request_error', param: err.param, code: null });
          return;
        }
        complete(res, path, body, raw);
        return;
      }
      refuse(res, path, 404, { message: `Invalid URL (${req.method} ${path})`, type: 'invalid_request_error', param: null, code: null });
    })().catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(err), type: 'server_error', param: null, code: null } });
    });
  });

  const listening = await listenOnLoopback(server);
  const url = `${listening.url}/v1`;
  return {
    url,
    apiKey,
    settings: { clientId: undefined, clientSecret: undefined, webUrl: listening.url, apiUrl: url },
    calls,
    rejected,
    answers,
    revokeKey: () => {
      revoked = true;
    },
    close: () => listening.close(),
  };
}
