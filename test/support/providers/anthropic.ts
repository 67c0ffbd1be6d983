// An Anthropic API on 127.0.0.1 for tests: `GET /v1/models` and `POST /v1/messages` as Anthropic
// documents them, so the official `@anthropic-ai/sdk` talks to it unchanged through `baseURL`.
// Requests need the key (`x-api-key`, or `Authorization: Bearer` as the 1.x SDK sends it) and
// `anthropic-version`; the body is checked against the Messages
// request shape (required model / integer max_tokens / messages, roles, content blocks, system,
// custom tools with an object input_schema, tool_choice naming a defined tool, no unknown
// top-level field) and refused with Anthropic's 400 `{type:'error', error:{type, message}}`,
// recorded in `rejected`. A refused key (wrong or revoked) is a 401 authentication_error, not
// recorded. A forced tool with a {json} answer comes back as a `tool_use` block, as the API does.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback } from '../loopback.ts';
import {
  contentText,
  defaultVerdict,
  estimateTokens,
  isRecord,
  readBody,
  sendJson,
  type ModelCall,
  type ModelStandIn,
  type ScriptedAnswer,
} from './openai.ts';

export type { ModelCall, ModelStandIn, ScriptedAnswer } from './openai.ts';

/** Top-level fields of the Messages request (anthropic-sdk-typescript MessageCreateParamsBase). */
const MESSAGE_FIELDS = new Set([
  'model', 'max_tokens', 'messages', 'cache_control', 'container', 'context_management', 'diagnostics', 'inference_geo',
  'mcp_servers', 'metadata', 'output_config', 'service_tier', 'speed', 'stop_sequences', 'stream', 'system',
  'temperature', 'thinking', 'tool_choice', 'tools', 'top_k', 'top_p', 'user_profile_id', 'workspace_id',
]);
// 2026-10-21 is what the installed SDK (1.x) sends.
const VERSIONS = new Set(['2023-01-01', '2023-06-01', '2026-10-21']);
const MODELS: { id: string; display_name: string }[] = [
  { id: 'claude-sonnet-5-5', display_name: 'Claude Sonnet 5.5' },
  { id: 'claude-sonnet-4-6', display_name: 'Claude Sonnet 4.6' },
  { id: 'claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5' },
  { id: 'claude-haiku-4-5', display_name: 'Claude Haiku 4.5' },
  { id: 'claude-opus-4-1', display_name: 'Claude Opus 4.1' },
];
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error';

class Invalid extends Error {}

function errorTypeFor(status: number): ErrorType {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

function checkBlocks(blocks: unknown[], where: string): void {
  blocks.forEach((block, j) => {
    if (!isRecord(block) || typeof block.type !== 'string') throw new Invalid(`${where}.${j}.type: Field required`);
    if (block.type === 'text' && typeof block.text !== 'string') throw new Invalid(`${where}.${j}.text: Field required`);
  });
}

/** The tool a request forces (tool_choice `tool`, or `any` with tools: the first), else null. */
function forcedTool(body: Record<string, unknown>): string | null {
  const choice = body.tool_choice;
  const tools = Array.isArray(body.tools) ? (body.tools as Record<string, unknown>[]) : [];
  if (!isRecord(choice)) return null;
  if (choice.type === 'tool') return choice.name as string;
  if (choice.type === 'any' && tools.length > 0) return tools[0]!.name as string;
  return null;
}

function validateMessages(body: Record<string, unknown>): void {
  const unknown = Object.keys(body).find((key) => !MESSAGE_FIELDS.has(key));
  if (unknown) throw new Invalid(`${unknown}: Extra inputs are not permitted`);
  if (typeof body.model !== 'string' || body.model === '') throw new Invalid('model: Field required');
  if (body.max_tokens === undefined) throw new Invalid('max_tokens: Field required');
  if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1) {
    throw new Invalid('max_tokens: Input should be a valid integer greater than or equal to 1');
  }
  const messages = body.messages;
  if (!Array.isArray(messages)) throw new Invalid('messages: Field required');
  if (messages.length === 0) throw new Invalid('messages: at least one message is required');
  messages.forEach((message, i) => {
    if (!isRecord(message)) throw new Invalid(`messages.${i}: Input should be a valid dictionary`);
    if (message.role !== 'user' && message.role !== 'assistant') {
      throw new Invalid(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    }
    if (typeof message.content === 'string') return;
    if (!Array.isArray(message.content)) throw new Invalid(`messages.${i}.content: Input should be a valid string or list`);
    checkBlocks(message.content, `messages.${i}.content`);
  });
  if (body.system !== undefined) {
    if (Array.isArray(body.system)) {
      checkBlocks(body.system, 'system');
      if (body.system.some((block) => isRecord(block) && block.type !== 'text')) throw new Invalid('system: blocks must be of type text');
    } else if (typeof body.system !== 'string') {
      throw new Invalid('system: Input should be a valid string or list');
    }
  }
  const toolNames = new Set<string>();
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) throw new Invalid('tools: Input should be a valid list');
    body.tools.forEach((tool, i) => {
      if (!isRecord(tool)) throw new Invalid(`tools.${i}: Input should be a valid dictionary`);
      const extra = Object.keys(tool).find((key) => !['name', 'description', 'input_schema', 'type', 'cache_control', 'strict'].includes(key));
      if (extra) throw new Invalid(`tools.${i}.custom.${extra}: Extra inputs are not permitted`);
      if (tool.type !== undefined && tool.type !== 'custom') throw new Invalid(`tools.${i}.type: only custom tools are supported by the stand-in`);
      if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) {
        throw new Invalid(`tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`);
      }
      if (tool.description !== undefined && typeof tool.description !== 'string') {
        throw new Invalid(`tools.${i}.custom.description: Input should be a valid string`);
      }
      if (!isRecord(tool.input_schema)) throw new Invalid(`tools.${i}.custom.input_schema: Field required`);
      if (tool.input_schema.type !== 'object') throw new Invalid(`tools.${i}.custom.input_schema.type: Input should be 'object'`);
      if (toolNames.has(tool.name)) throw new Invalid(`tools: Tool names must be unique.`);
      toolNames.add(tool.name);
    });
  }
  if (body.tool_choice !== undefined) {
    const choice = body.tool_choice;
    if (!isRecord(choice)) throw new Invalid('tool_choice: Input should be a valid dictionary');
    const allowed = choice.type === 'tool' ? ['type', 'name', 'disable_parallel_tool_use'] : ['type', 'disable_parallel_tool_use'];
    if (!['auto', 'any', 'tool', 'none'].includes(String(choice.type))) {
      throw new Invalid("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'");
    }
    const extra = Object.keys(choice).find((key) => !allowed.includes(key));
    if (extra) throw new Invalid(`tool_choice.${String(choice.type)}.${extra}: Extra inputs are not permitted`);
    if (choice.type === 'tool') {
      if (typeof choice.name !== 'string') throw new Invalid('tool_choice.tool.name: Field required');
      if (!toolNames.has(choice.name)) throw new Invalid(`tool_choice: tool '${choice.name}' is not defined in tools`);
    }
    if (choice.type === 'any' && toolNames.size === 0) throw new Invalid('tool_choice: any requires tools to be defined');
  }
  if (body.stream === true) throw new Invalid('stream: the stand-in does not stream; send stream: false');
}

export async function startAnthropicStandIn(): Promise<ModelStandIn> {
  const apiKey = `sk-ant-api03-standin${randomBytes(16).toString('hex')}`;
  let revoked = false;
  const calls: ModelCall[] = [];
  const rejected: { path: string; reason: string }[] = [];
  const answers: ScriptedAnswer[] = [];
  let sequence = 0;

  const fail = (res: ServerResponse, status: number, type: ErrorType, message: string, headers: Record<string, string> = {}): void => {
    sequence += 1;
    const requestId = `req_standin${String(sequence).padStart(8, '0')}`;
    sendJson(res, status, { type: 'error', error: { type, message }, request_id: requestId }, { 'request-id': requestId, ...headers });
  };
  const refuse = (res: ServerResponse, path: string, status: number, type: ErrorType, message: string): void => {
    rejected.push({ path, reason: message });
    fail(res, status, type, message);
  };

  /** True when the request carries the live key and a version; answers the API's error otherwise. */
  const authorised = (req: IncomingMessage, res: ServerResponse, path: string): boolean => {
    // Anthropic documents `x-api-key`; the installed @anthropic-ai/sdk (1.x) sends an API key as
    // `Authorization: Bearer`, so either carries it (and they must agree when both are sent).
    const header = req.headers['x-api-key'];
    const bearer = typeof req.headers.authorization === 'string' && req.headers.authorization.startsWith('Bearer ')
      ? req.headers.authorization.slice('Bearer '.length)
      : undefined;
    const key = typeof header === 'string' && header !== '' ? header : bearer;
    if (key === undefined || key === '') {
      refuse(res, path, 401, 'authentication_error', 'x-api-key header is required');
      return false;
    }
    if (bearer !== undefined && typeof header === 'string' && header !== bearer) {
      refuse(res, path, 401, 'authentication_error', 'x-api-key and Authorization carry different credentials');
      return false;
    }
    if (key !== apiKey || revoked) {
      fail(res, 401, 'authentication_error', 'invalid x-api-key');
      return false;
    }
    const version = req.headers['anthropic-version'];
    if (typeof version !== 'string') {
      refuse(res, path, 400, 'invalid_request_error', 'anthropic-version: header is required');
      return false;
    }
    if (!VERSIONS.has(version)) {
      refuse(res, path, 400, 'invalid_request_error', `anthropic-version: invalid version '${version}'`);
      return false;
    }
    return true;
  };

  const answer = (res: ServerResponse, path: string, body: Record<string, unknown>, raw: string): void => {
    const messages = body.messages as Record<string, unknown>[];
    const systemText = contentText(body.system);
    const messageText = messages.map((m) => contentText(m.content));
    const prompt = [systemText, ...messageText].filter((text) => text !== '').join('\n');
    const userText = messages.filter((m) => m.role === 'user').map((m) => contentText(m.content)).join('\n');
    const model = body.model as string;
    calls.push({ path, model, prompt, body, raw });

    const scripted = answers.shift() ?? { json: defaultVerdict(userText || prompt) };
    if ('status' in scripted) {
      const headers: Record<string, string> = {};
      if (scripted.retryAfterSeconds !== undefined) headers['retry-after'] = String(scripted.retryAfterSeconds);
      if (scripted.body !== undefined) {
        sendJson(res, scripted.status, scripted.body, headers);
        return;
      }
      const type = errorTypeFor(scripted.status);
      const message = type === 'rate_limit_error' ? 'Number of requests has exceeded your rate limit.' : type === 'overloaded_error' ? 'Overloaded' : `Request failed (${scripted.status}).`;
      fail(res, scripted.status, type, message, headers);
      return;
    }
    const tool = forcedTool(body);
    sequence += 1;
    const id = `msg_standin${String(sequence).padStart(8, '0')}`;
    let content: Record<string, unknown>[];
    let stopReason: string;
    let outputText: string;
    if ('refusal' in scripted) {
      content = [{ type: 'text', text: scripted.refusal }];
      stopReason = 'refusal';
      outputText = scripted.refusal;
    } else if ('json' in scripted && tool) {
      content = [{ type: 'tool_use', id: `toolu_standin${String(sequence).padStart(8, '0')}`, name: tool, input: scripted.json }];
      stopReason = 'tool_use';
      outputText = JSON.stringify(scripted.json);
    } else {
      outputText = 'json' in scripted ? JSON.stringify(scripted.json) : scripted.text;
      content = [{ type: 'text', text: outputText }];
      stopReason = 'end_turn';
    }
    sendJson(res, 200, {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: {
        input_tokens: estimateTokens(prompt),
        output_tokens: estimateTokens(outputText),
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        service_tier: 'standard',
      },
    }, { 'request-id': `req_${id}` });
  };

  const server = createServer((req, res) => {
    void (async () => {
      const path = new URL(req.url ?? '/', 'http://stand-in').pathname;
      const raw = await readBody(req);
      if (req.method === 'GET' && path === '/v1/models') {
        if (!authorised(req, res, path)) return;
        const data = MODELS.map((m, i) => ({ type: 'model', id: m.id, display_name: m.display_name, created_at: new Date(Date.UTC(2025, 8, 29 - i)).toISOString() }));
        sendJson(res, 200, { data, has_more: false, first_id: data[0]!.id, last_id: data[data.length - 1]!.id });
        return;
      }
      if (req.method === 'POST' && path === '/v1/messages') {
        if (!authorised(req, res, path)) return;
        if (!String(req.headers['content-type'] ?? '').includes('application/json')) {
          refuse(res, path, 400, 'invalid_request_error', 'content-type must be application/json');
          return;
        }
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          refuse(res, path, 400, 'invalid_request_error', 'The request body is not valid JSON.');
          return;
        }
        if (!isRecord(body)) {
          refuse(res, path, 400, 'invalid_request_error', 'The request body must be a JSON object.');
          return;
        }
        try {
          validateMessages(body);
        } catch (err) {
          if (!(err instanceof Invalid)) throw err;
          refuse(res, path, 400, 'invalid_request_error', err.message);
          return;
        }
        answer(res, path, body, raw);
        return;
      }
      refuse(res, path, 404, 'not_found_error', `Not found: ${req.method} ${path}`);
    })().catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { type: 'error', error: { type: 'api_error', message: String(err) } });
    });
  });

  const listening = await listenOnLoopback(server);
  return {
    url: listening.url,
    apiKey,
    settings: { clientId: undefined, clientSecret: undefined, webUrl: listening.url, apiUrl: listening.url },
    calls,
    rejected,
    answers,
    revokeKey: () => {
      revoked = true;
    },
    close: () => listening.close(),
  };
}
