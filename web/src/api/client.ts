// One client for the whole dashboard: openapi-fetch typed by the served OpenAPI document, with the
// session cookie (same origin), and every refusal turned into an ApiError carrying the
// specification's envelope (code, message, details) and the request id to quote to support.
import createClient from 'openapi-fetch';
import type { paths } from './types.ts';

export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly requestId: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

interface Envelope {
  error?: { code?: string; message?: string; details?: Record<string, unknown>; request_id?: string };
}

/** The ApiError for a refused answer (the envelope when there is one, the status text otherwise). */
export function errorFrom(response: Response, body: unknown): ApiError {
  const envelope = (body ?? {}) as Envelope;
  const requestId = envelope.error?.request_id ?? response.headers.get('x-request-id');
  return new ApiError(
    response.status,
    envelope.error?.code ?? `http_${response.status}`,
    envelope.error?.message ?? (response.statusText || `the server answered ${response.status}`),
    envelope.error?.details ?? {},
    requestId,
  );
}

/**
 * The data of an openapi-fetch answer, or a thrown ApiError: `await ok(api.GET('/api/v1/scans'))`.
 * Query functions and mutations throw, so React Query shows the error where it belongs.
 */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw errorFrom(response, error);
  return data as T;
}

/**
 * For bodies openapi-fetch does not make (CSV, files, text): a same-origin fetch whose refusals
 * become ApiErrors, and whose JSON answer is parsed.
 */
export async function send<T = unknown>(path: string, init: RequestInit & { json?: unknown } = {}): Promise<T> {
  const headers = new Headers(init.headers);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(init.json);
  }
  const response = await fetch(path, { ...init, headers, body, credentials: 'same-origin' });
  const text = await response.text();
  const parsed: unknown = text && (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text;
  if (!response.ok) throw errorFrom(response, parsed);
  return parsed as T;
}
