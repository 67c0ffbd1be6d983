// What every request of the client goes through, below openapi-fetch: credentials, an
// Idempotency-Key on writes, retries, and the request counts. It sits in the `fetch` openapi-fetch
// calls, so the raw openapi-fetch methods get all of it too, and a retry resends exactly the bytes
// openapi-fetch serialised.
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { isErrorEnvelope } from './errors.ts';

export type FetchFn = (request: Request) => Promise<Response>;

export interface ClientStats {
  /** HTTP requests sent, retries included (= reads + writes). */
  requests: number;
  /** GET/HEAD requests sent. */
  reads: number;
  /** POST/PUT/PATCH/DELETE requests sent. */
  writes: number;
  /** Of the requests sent, how many were retries. */
  retries: number;
  /** Time spent waiting between attempts (Retry-After or backoff), in ms. */
  waitedMs: number;
}

export const emptyStats = (): ClientStats => ({ requests: 0, reads: 0, writes: 0, retries: 0, waitedMs: 0 });

export interface TransportOptions {
  apiKey: string;
  fetch: FetchFn;
  /** Retries after the first attempt. */
  maxRetries: number;
  /** First backoff step; doubles per attempt. */
  retryBaseMs: number;
  /** Longest single wait. A Retry-After beyond it is not waited for: the error is returned at once. */
  maxRetryDelayMs: number;
  userAgent: string;
  stats: ClientStats;
  /** The client's own cancellation, on top of each request's. */
  signal?: AbortSignal;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Transient answers. Writes are retried like reads: every write carries an Idempotency-Key that
 * stays the same across its retries, so if an earlier attempt did reach the server the retry gets
 * that attempt's stored answer back instead of applying the change twice. 500 is not here: it is
 * the server failing on this request, and the same request will most likely fail the same way.
 */
const RETRY_STATUSES = new Set([429, 502, 503, 504]);

/** Retry-After as delay-seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const value = header.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Exponential backoff with "equal jitter": half the step fixed, half random, so clients that failed together spread out but never retry at once. */
export function backoffMs(retry: number, baseMs: number, maxMs: number): number {
  const step = Math.min(maxMs, baseMs * 2 ** retry);
  return step / 2 + Math.random() * (step / 2);
}

/**
 * 409 "still being processed" for our own key: an earlier attempt of this very call (whose answer
 * was lost) is still running on the server. Waiting and asking again gets its answer.
 */
function isOwnRequestInFlight(status: number, body: unknown, idempotencyKey: string | null): boolean {
  return status === 409 && idempotencyKey !== null && isErrorEnvelope(body) && body.error.details.idempotency_key === idempotencyKey;
}

const parseJson = (bytes: ArrayBuffer): unknown => {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return undefined;
  }
};

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** One logical call: the attempts of one request. `onAttempt` counts them for the caller (listAll). */
export async function send(options: TransportOptions, original: Request, onAttempt?: () => void): Promise<Response> {
  const method = original.method.toUpperCase();
  const isWrite = WRITES.has(method);
  const headers = new Headers(original.headers);
  headers.set('authorization', `Bearer ${options.apiKey}`);
  if (!headers.has('user-agent')) headers.set('user-agent', options.userAgent);
  // One key per logical call, generated before the first attempt and sent unchanged on every retry.
  // A caller may bring its own (e.g. one derived from a plan step, to survive a restart of the run).
  if (isWrite && !headers.has('idempotency-key')) headers.set('idempotency-key', randomUUID());
  const idempotencyKey = headers.get('idempotency-key');
  // Read once, resent on each attempt: a Request body is a stream and can be consumed only once.
  const body = original.body === null ? undefined : await original.arrayBuffer();
  const signal = options.signal ? AbortSignal.any([original.signal, options.signal]) : original.signal;

  for (let attempt = 0; ; attempt++) {
    const { stats } = options;
    stats.requests++;
    if (isWrite) stats.writes++;
    else stats.reads++;
    if (attempt > 0) stats.retries++;
    onAttempt?.();

    let waitMs: number | undefined;
    try {
      const response = await options.fetch(new Request(original.url, { method, headers, body, signal, redirect: original.redirect }));
      // The body is read here, inside the retry loop, so a connection that breaks mid-body is retried
      // like one that breaks before the status line. API answers are small JSON (pages ≤ 200 items).
      const bytes = await response.arrayBuffer();
      const retryable = RETRY_STATUSES.has(response.status) || isOwnRequestInFlight(response.status, parseJson(bytes), idempotencyKey);
      if (!retryable || attempt >= options.maxRetries) {
        return new Response(NULL_BODY_STATUSES.has(response.status) ? null : bytes, {
          status: response.status,
          statusText: response.statusText,
          headers: response.headers,
        });
      }
      const asked = retryAfterMs(response.headers.get('retry-after'));
      // A server asking for a longer pause than we are prepared to wait: report it now rather than
      // hang; the caller sees the 429/503 with its Retry-After in the error.
      if (asked !== undefined && asked > options.maxRetryDelayMs) {
        return new Response(bytes, { status: response.status, statusText: response.statusText, headers: response.headers });
      }
      waitMs = asked ?? backoffMs(attempt, options.retryBaseMs, options.maxRetryDelayMs);
    } catch (err) {
      // The caller's own abort is final; anything else thrown by fetch is the network (refused,
      // reset, a response lost on the way), which is exactly what the Idempotency-Key makes safe.
      if (signal.aborted || attempt >= options.maxRetries) throw err;
      waitMs = backoffMs(attempt, options.retryBaseMs, options.maxRetryDelayMs);
    }
    const started = performance.now();
    await delay(waitMs, undefined, { signal });
    stats.waitedMs += performance.now() - started;
  }
}
