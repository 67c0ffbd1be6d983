// The hand-written transport under the generated resources: one `request` with auth, idempotency
// keys, retries with backoff, timeouts and typed errors. Lists (pagination.ts) and the event stream
// (stream.ts) are built on it. Web-platform globals only (fetch, AbortController, crypto,
// TextEncoder), so it runs on edge runtimes.
import { APIConnectionError, APITimeoutError, AegisError, errorFromResponse } from './errors.ts';

export const SDK_VERSION = '0.1.0';
const DEFAULT_BASE_URL = 'http://localhost:3000';
const RETRY_STATUSES = new Set([429, 502, 503, 504]);
export const MAX_RETRY_WAIT_MS = 8_000;

export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** API key; defaults to `AEGIS_API_KEY`. */
  apiKey?: string | undefined;
  /** Base URL of the API; defaults to `AEGIS_API_URL`, else `http://localhost:3000`. */
  baseUrl?: string | undefined;
  /** Retries of a failed request (429, 502, 503, 504, connection errors, timeouts). Default 2; 0 disables. */
  maxRetries?: number | undefined;
  /** Per-attempt timeout in milliseconds. Default 60 000. */
  timeoutMs?: number | undefined;
  /** Headers sent with every request. */
  headers?: Record<string, string> | undefined;
  /** A fetch implementation (default: the global one). */
  fetch?: Fetch | undefined;
}

export interface RequestOptions {
  /** The Idempotency-Key of a mutation; one is generated when left out (and reused on retries). */
  idempotencyKey?: string | undefined;
  /** Sent as `X-Request-Id`; the server echoes it in its logs and answer. */
  requestId?: string | undefined;
  /** This request's per-attempt timeout. */
  timeoutMs?: number | undefined;
  /** This request's retries. */
  maxRetries?: number | undefined;
  /** Extra headers for this request. */
  headers?: Record<string, string> | undefined;
  /** Aborts the request (no retry after an abort). */
  signal?: AbortSignal | undefined;
}

/** Options of an upload: the content type of a raw body given as text or bytes. */
export interface UploadOptions extends RequestOptions {
  contentType?: string | undefined;
}

export type UploadContent = string | Uint8Array | ArrayBuffer | Blob;
/** A raw upload with its content type. */
export interface Upload {
  content: UploadContent;
  contentType?: string | undefined;
}
/** What an operation with a raw body accepts: the content itself or `{ content, contentType }`. */
export type UploadBody = UploadContent | Upload;

export interface BodyForm {
  json: boolean;
  /** Content types of the raw forms, the first being the default. */
  raw: readonly string[];
  /** A text body that looks like JSON is sent as application/json (an OpenAPI document). */
  textMayBeJson?: boolean;
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, unknown> | undefined;
  headers?: Record<string, unknown> | undefined;
  body?: unknown;
  bodyForm?: BodyForm;
  mutating: boolean;
  response?: 'json' | 'empty' | 'document';
}

/** Path segments are percent-encoded, so an id can never change the route. */
export const encodePath = (value: string | number): string => encodeURIComponent(String(value));

/** The entries of `source` named in `keys` (undefined when none is set). */
export function pick(source: object | undefined, keys: readonly string[]): Record<string, unknown> | undefined {
  if (!source) return undefined;
  const out: Record<string, unknown> = {};
  let any = false;
  for (const key of keys) {
    const value = (source as Record<string, unknown>)[key];
    if (value !== undefined) {
      out[key] = value;
      any = true;
    }
  }
  return any ? out : undefined;
}

function env(name: string): string | undefined {
  // `process` exists on Node, not on every edge runtime: read it without importing node modules.
  const p = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return p?.env?.[name] || undefined;
}

const isContent = (value: unknown): value is UploadContent =>
  typeof value === 'string' || value instanceof Uint8Array || value instanceof ArrayBuffer || (typeof Blob !== 'undefined' && value instanceof Blob);

function isUpload(value: unknown): value is Upload {
  return !!value && typeof value === 'object' && !isContent(value) && 'content' in value && isContent((value as Upload).content) && Object.keys(value).every((k) => k === 'content' || k === 'contentType');
}

/** `Retry-After` in milliseconds (seconds or an HTTP date), if present and sane. */
function retryAfterMs(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** 0.5 s × 2^attempt, with up to 25% jitter taken off, capped. */
const backoffMs = (attempt: number): number => Math.min(MAX_RETRY_WAIT_MS, 500 * 2 ** attempt) * (1 - Math.random() * 0.25);

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function randomKey(): string {
  return globalThis.crypto.randomUUID();
}

/** One attempt's abort: the caller's signal or this attempt's timeout. */
function attemptSignal(timeoutMs: number, outer?: AbortSignal): { signal: AbortSignal; timedOut: () => boolean; done: () => void } {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new APITimeoutError(`Request timed out after ${timeoutMs} ms`));
  }, timeoutMs);
  const onAbort = () => controller.abort(outer!.reason);
  if (outer) {
    if (outer.aborted) controller.abort(outer.reason);
    else outer.addEventListener('abort', onAbort, { once: true });
  }
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    done: () => {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    },
  };
}

export class APIClient {
  readonly apiKey: string | undefined;
  readonly baseUrl: string;
  readonly maxRetries: number;
  readonly timeoutMs: number;
  protected readonly defaultHeaders: Record<string, string>;
  private readonly fetchImpl: Fetch;

  constructor(options: ClientOptions = {}) {
    this.apiKey = options.apiKey ?? env('AEGIS_API_KEY');
    this.baseUrl = (options.baseUrl ?? env('AEGIS_API_URL') ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.maxRetries = options.maxRetries ?? 2;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.defaultHeaders = { ...(options.headers ?? {}) };
    const f = options.fetch ?? (globalThis.fetch as Fetch | undefined);
    if (!f) throw new AegisError('No fetch implementation: pass `fetch` in the client options');
    this.fetchImpl = f;
  }

  /** The absolute URL of `path` with `query` (undefined/null values left out, arrays comma-joined). */
  buildUrl(path: string, query?: Record<string, unknown>): string {
    let url = this.baseUrl + path;
    if (query) {
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(query)) {
        if (value === undefined || value === null) continue;
        params.append(key, Array.isArray(value) ? value.join(',') : String(value));
      }
      const qs = params.toString();
      if (qs) url += `?${qs}`;
    }
    return url;
  }

  private headersFor(spec: { mutating: boolean; headers?: Record<string, unknown> | undefined }, options: RequestOptions | undefined, accept: string): Record<string, string> {
    const headers: Record<string, string> = { accept, 'x-aegis-sdk': `node/${SDK_VERSION}`, ...this.defaultHeaders };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (spec.headers) for (const [k, v] of Object.entries(spec.headers)) if (v !== undefined && v !== null) headers[k] = String(v);
    if (options?.requestId) headers['x-request-id'] = options.requestId;
    if (spec.mutating) headers['idempotency-key'] = options?.idempotencyKey ?? randomKey();
    if (options?.headers) Object.assign(headers, options.headers);
    return headers;
  }

  private encodeBody(spec: RequestSpec, options: UploadOptions | undefined): { body?: string | Uint8Array | ArrayBuffer | Blob; contentType?: string } {
    const { body, bodyForm } = spec;
    if (body === undefined || !bodyForm) return {};
    const wantsRaw = bodyForm.raw.length > 0 && (isContent(body) || isUpload(body));
    if (!wantsRaw) {
      if (!bodyForm.json) throw new AegisError(`${spec.method} ${spec.path} takes a raw body: a string, bytes, a Blob or { content, contentType }`);
      return { body: JSON.stringify(body), contentType: 'application/json' };
    }
    const upload: Upload = isUpload(body) ? body : { content: body as UploadContent };
    const content = upload.content;
    let contentType = upload.contentType ?? options?.contentType;
    if (!contentType && typeof Blob !== 'undefined' && content instanceof Blob && content.type) contentType = content.type;
    if (!contentType && bodyForm.textMayBeJson && typeof content === 'string' && /^\s*[[{]/.test(content)) contentType = 'application/json';
    contentType ??= bodyForm.raw[0]!;
    return { body: content, contentType };
  }

  /**
   * Sends `spec` with retries and answers the parsed body. The Idempotency-Key (and every other
   * header) is computed once, so each retry of a mutation carries the same key.
   */
  async request<T>(spec: RequestSpec, options?: UploadOptions): Promise<T> {
    const response = await this.send(spec, options, 'application/json');
    return (await this.readBody(response, spec.response ?? 'json')) as T;
  }

  /** The successful Response of `spec` (its body unread), after retries; throws typed errors. */
  async send(spec: RequestSpec, options: UploadOptions | undefined, accept: string, attemptTimeout = true): Promise<Response> {
    const url = this.buildUrl(spec.path, spec.query);
    const { body, contentType } = this.encodeBody(spec, options);
    const headers = this.headersFor(spec, options, accept);
    if (contentType) headers['content-type'] = contentType;
    const maxRetries = options?.maxRetries ?? this.maxRetries;
    const timeoutMs = options?.timeoutMs ?? this.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      const abort = attemptSignal(timeoutMs, options?.signal);
      let response: Response;
      try {
        response = await this.fetchImpl(url, { method: spec.method, headers, body: (body ?? null) as RequestInit["body"], signal: abort.signal });
      } catch (cause) {
        abort.done();
        if (options?.signal?.aborted) throw options.signal.reason;
        const error = abort.timedOut() ? new APITimeoutError(`${spec.method} ${spec.path}: no answer within ${timeoutMs} ms`, { cause }) : new APIConnectionError(`${spec.method} ${spec.path}: ${(cause as Error)?.message ?? 'connection failed'}`, { cause });
        if (attempt >= maxRetries) throw error;
        await sleep(backoffMs(attempt), options?.signal);
        continue;
      }
      if (response.ok) {
        // The body is read under the same timeout, except for streams, which are endless.
        if (attemptTimeout) return withTimeoutCleared(response, abort.done);
        abort.done();
        return response;
      }
      const errorBody = await readErrorBody(response);
      abort.done();
      if (RETRY_STATUSES.has(response.status) && attempt < maxRetries) {
        await sleep(Math.min(MAX_RETRY_WAIT_MS, retryAfterMs(response.headers) ?? backoffMs(attempt)), options?.signal);
        continue;
      }
      throw errorFromResponse(response.status, errorBody, response.headers);
    }
  }

  private async readBody(response: Response, kind: 'json' | 'empty' | 'document'): Promise<unknown> {
    try {
      const text = await response.text();
      if (kind === 'empty' || text === '') return undefined;
      const type = response.headers.get('content-type') ?? '';
      if (kind === 'document' && !type.includes('json')) return text;
      return JSON.parse(text) as unknown;
    } catch (cause) {
      if (cause instanceof AegisError) throw cause;
      if (cause instanceof SyntaxError) throw new AegisError(`Invalid JSON in the answer: ${cause.message}`, { status: response.status, requestId: response.headers.get('x-request-id') ?? undefined, cause });
      throw new APIConnectionError(`Reading the answer failed: ${(cause as Error)?.message}`, { cause });
    } finally {
      doneOf.get(response)?.();
    }
  }
}

// The timeout of a successful attempt ends when its body is read (readBody calls it).
const doneOf = new WeakMap<Response, () => void>();
function withTimeoutCleared(response: Response, done: () => void): Response {
  doneOf.set(response, done);
  return response;
}

async function readErrorBody(response: Response): Promise<unknown> {
  try {
    const text = await response.text();
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  } catch {
    return undefined;
  }
}
