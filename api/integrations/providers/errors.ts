// How a provider call fails, in terms the callers act on:
//   - ProviderAuthError: the provider refused the credential (401: revoked, expired beyond
//     refresh). The connection goes to `error` and an `integration.error` event is recorded.
//   - ProviderRateLimitError: 429, or GitHub's secondary rate limit (403 with Retry-After or an
//     exhausted X-RateLimit-Remaining). The job retries after `retryAfterMs`.
//   - ProviderUnavailableError: the provider is down (5xx, connection refused, timeout). The job
//     retries with backoff.
//   - ProviderRequestError: the provider rejected the request itself (4xx: an unknown project,
//     a field it refuses, 403 for a permission on one project or repository — the credential
//     still works elsewhere). Retrying cannot help; the message is the provider's, safe to show.
// Messages never carry a token.

export class ProviderError extends Error {
  override name = 'ProviderError';
  constructor(
    readonly provider: string,
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

export class ProviderAuthError extends ProviderError {
  override name = 'ProviderAuthError';
}

export class ProviderRateLimitError extends ProviderError {
  override name = 'ProviderRateLimitError';
  constructor(provider: string, message: string, readonly retryAfterMs: number, status: number | null = 429) {
    super(provider, message, status);
  }
}

export class ProviderUnavailableError extends ProviderError {
  override name = 'ProviderUnavailableError';
}

export class ProviderRequestError extends ProviderError {
  override name = 'ProviderRequestError';
}

/** Longest wait a provider may ask for before we retry anyway (its limits reset hourly at most). */
const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

/**
 * Retry-After as delay-seconds or an HTTP date, in ms; null when absent or unreadable. GitHub's
 * X-RateLimit-Reset (epoch seconds) is read when `resetEpochSeconds` is given.
 */
export function retryAfterMs(retryAfter: string | null | undefined, resetEpochSeconds?: string | null, now = Date.now()): number | null {
  let ms: number | null = null;
  if (retryAfter) {
    const value = retryAfter.trim();
    if (/^\d+$/.test(value)) ms = Number(value) * 1000;
    else {
      const at = Date.parse(value);
      if (!Number.isNaN(at)) ms = Math.max(0, at - now);
    }
  } else if (resetEpochSeconds && /^\d+$/.test(resetEpochSeconds.trim())) {
    ms = Math.max(0, Number(resetEpochSeconds.trim()) * 1000 - now);
  }
  return ms === null ? null : Math.min(ms, MAX_RETRY_AFTER_MS);
}

/**
 * The error for a non-2xx answer of `provider`. `detail` is the provider's own message when it
 * gave one. 401 → auth; 429 → rate limit; 403 → rate limit when the provider says so in headers,
 * else request (no permission for this resource); 5xx → unavailable; other 4xx → request.
 */
export function errorForStatus(provider: string, status: number, headers: Headers, detail: string): ProviderError {
  const message = `${provider} answered ${status}${detail ? `: ${detail.slice(0, 300)}` : ''}`;
  const wait = retryAfterMs(headers.get('retry-after'), headers.get('x-ratelimit-reset'));
  if (status === 429) return new ProviderRateLimitError(provider, message, wait ?? 60_000, status);
  if (status === 403 && (headers.get('retry-after') !== null || headers.get('x-ratelimit-remaining') === '0')) {
    return new ProviderRateLimitError(provider, message, wait ?? 60_000, status);
  }
  if (status === 401) return new ProviderAuthError(provider, message, status);
  if (status >= 500) return new ProviderUnavailableError(provider, message, status);
  return new ProviderRequestError(provider, message, status);
}
