// How a model provider's SDK failure (openai, @anthropic-ai/sdk) becomes one of ./providers/errors.ts,
// the terms the triage jobs act on:
//   401 / 403 (key refused, key without access)         → ProviderAuthError: the connection goes to `error`
//   429                                                 → ProviderRateLimitError after Retry-After
//   408, 5xx (529 overloaded), connection lost, timeout → ProviderUnavailableError: retried with backoff
//   other 4xx (bad request, unknown model, 402 billing) → ProviderRequestError: retrying cannot help
// The provider's own message is kept (it says what to fix), with anything that looks like an API key
// masked: OpenAI echoes a masked key in its 401 message, and a gateway might echo it whole.
import * as AnthropicSdk from '@anthropic-ai/sdk';
import * as OpenAiSdk from 'openai';
import {
  ProviderAuthError,
  ProviderError,
  ProviderRateLimitError,
  ProviderRequestError,
  ProviderUnavailableError,
  retryAfterMs,
} from './errors.ts';
import { RefusedAddressError, RefusedRedirectError } from '../../../platform/net/outbound.ts';

export type AiProvider = 'openai' | 'anthropic';

/** Wait when a 429 names none: a minute, the providers' usual per-minute window. */
const DEFAULT_RATE_LIMIT_WAIT_MS = 60_000;
/** As retryAfterMs caps Retry-After. */
const MAX_WAIT_MS = 60 * 60 * 1000;

// sk-…, sk-proj-…, sk-ant-api03-… and masked forms such as sk-********abcd.
const KEY_LIKE = /\bsk-[A-Za-z0-9_*-]{4,}/g;

/** `text` with `secret` and anything shaped like an API key masked. */
export function maskKeys(text: string, secret?: string): string {
  const withoutSecret = secret && secret.length >= 4 ? text.split(secret).join('[redacted]') : text;
  return withoutSecret.replace(KEY_LIKE, '[redacted]');
}

type SdkApiError = OpenAiSdk.APIError | AnthropicSdk.APIError;

const isSdkError = (err: unknown): err is SdkApiError => err instanceof OpenAiSdk.APIError || err instanceof AnthropicSdk.APIError;
const isConnectionError = (err: unknown): boolean =>
  err instanceof OpenAiSdk.APIConnectionError || err instanceof AnthropicSdk.APIConnectionError;
const isAbort = (err: unknown): boolean => err instanceof OpenAiSdk.APIUserAbortError || err instanceof AnthropicSdk.APIUserAbortError;

/** The message of an outbound-policy refusal (a refused address or redirect) in the error's causes, if any. */
function refusalIn(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof RefusedAddressError || e instanceof RefusedRedirectError) return e.message;
  }
  return undefined;
}

/** The provider's explanation from an error body: OpenAI `{error:{message}}`, Anthropic `{type:'error', error:{message}}`. */
function detailOf(err: SdkApiError): string {
  const body: unknown = err.error;
  if (typeof body === 'object' && body !== null) {
    const record = body as Record<string, unknown>;
    if (typeof record.message === 'string') return record.message;
    const inner = record.error;
    if (typeof inner === 'object' && inner !== null && typeof (inner as Record<string, unknown>).message === 'string') {
      return (inner as Record<string, unknown>).message as string;
    }
  }
  // No JSON body: the SDK's message starts with the status, which the caller's wording repeats.
  return err.message.replace(/^\d{3}\s*/, '');
}

/**
 * The ProviderError for `err` thrown by a model SDK call. Errors that are already ProviderErrors
 * pass through; anything else that is not an SDK error (a bug of ours) is returned unchanged so it
 * is not disguised as a provider failure. `key` is masked out of every message.
 */
export function toProviderError(provider: AiProvider, err: unknown, key?: string): unknown {
  if (err instanceof ProviderError) return err;
  if (isAbort(err)) return new ProviderUnavailableError(provider, `${provider} request was aborted`);
  if (isConnectionError(err)) {
    const timedOut = err instanceof OpenAiSdk.APIConnectionTimeoutError || err instanceof AnthropicSdk.APIConnectionTimeoutError;
    // The SDKs say "Connection error."; the outbound policy's refusal, when that is what happened, says why.
    const why = refusalIn(err) ?? (err as Error).message;
    return new ProviderUnavailableError(provider, timedOut ? `${provider} did not answer in time` : `${provider} could not be reached: ${maskKeys(why, key)}`);
  }
  if (!isSdkError(err) || err.status === undefined) return err;

  const status = err.status;
  const detail = maskKeys(detailOf(err), key).slice(0, 300);
  const message = `${provider} answered ${status}${detail ? `: ${detail}` : ''}`;
  if (status === 401 || status === 403) return new ProviderAuthError(provider, message, status);
  if (status === 429) {
    // OpenAI may also send retry-after-ms, which is finer grained.
    const ms = err.headers?.get('retry-after-ms');
    const wait = ms && /^\d+(\.\d+)?$/.test(ms.trim()) ? Math.min(Math.ceil(Number(ms)), MAX_WAIT_MS) : retryAfterMs(err.headers?.get('retry-after'));
    return new ProviderRateLimitError(provider, message, wait ?? DEFAULT_RATE_LIMIT_WAIT_MS, status);
  }
  if (status === 408 || status >= 500) return new ProviderUnavailableError(provider, message, status);
  return new ProviderRequestError(provider, message, status);
}

/** Runs an SDK call, throwing its failure as a ProviderError. */
export async function callModelApi<T>(provider: AiProvider, key: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw toProviderError(provider, err, key);
  }
}
