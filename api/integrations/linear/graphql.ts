// One GraphQL call to Linear, with its failures turned into the provider errors callers act on.
// Linear answers most failures as GraphQL errors (often with HTTP 400, sometimes 200), the kind in
// `extensions.code`: AUTHENTICATION_ERROR (a revoked or wrong key), FORBIDDEN, RATELIMITED (the
// reset time is in the X-RateLimit-Requests-Reset header, UTC epoch milliseconds).
import {
  errorForStatus,
  ProviderAuthError,
  ProviderRateLimitError,
  ProviderRequestError,
  ProviderUnavailableError,
  retryAfterMs,
} from '../providers/errors.ts';
import type { ProviderSession } from '../providers/types.ts';

export const PROVIDER = 'linear';

interface GraphqlError {
  message?: string;
  extensions?: { code?: string; userPresentableMessage?: string };
}

/** How long Linear asks us to wait, from its rate-limit headers; a minute when it does not say. */
export function linearRetryAfterMs(headers: Headers, now = Date.now()): number {
  for (const name of ['x-ratelimit-requests-reset', 'x-ratelimit-complexity-reset']) {
    const value = headers.get(name);
    if (value && /^\d+$/.test(value.trim())) {
      return Math.min(Math.max(0, Number(value.trim()) - now), 60 * 60 * 1000);
    }
  }
  return retryAfterMs(headers.get('retry-after')) ?? 60_000;
}

function graphqlFailure(status: number, headers: Headers, errors: GraphqlError[]): Error {
  const first = errors[0] ?? {};
  const code = first.extensions?.code ?? '';
  const text = first.extensions?.userPresentableMessage ?? first.message ?? 'unknown error';
  const message = `linear answered ${status}${code ? ` ${code}` : ''}: ${text.slice(0, 300)}`;
  if (code === 'RATELIMITED') return new ProviderRateLimitError(PROVIDER, message, linearRetryAfterMs(headers), status);
  if (code === 'AUTHENTICATION_ERROR' || code === 'FORBIDDEN' || status === 401) return new ProviderAuthError(PROVIDER, message, status);
  if (status >= 500 || code === 'INTERNAL_SERVER_ERROR') return new ProviderUnavailableError(PROVIDER, message, status);
  return new ProviderRequestError(PROVIDER, message, status);
}

/** Runs `query` with `variables` and returns its `data`; throws the mapped error otherwise. */
export async function graphql<T>(session: ProviderSession, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  let response: Response;
  try {
    response = await session.fetch(`${session.apiBaseUrl}/graphql`, {
      method: 'POST',
      headers: { authorization: session.authorization, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new ProviderUnavailableError(PROVIDER, `linear could not be reached: ${(err as Error).message}`);
  }
  const text = await response.text();
  type Answer = { data?: T | null; errors?: GraphqlError[] };
  let body: Answer | null = null;
  try {
    body = JSON.parse(text) as Answer;
  } catch {
    body = null;
  }
  if (body?.errors?.length) throw graphqlFailure(response.status, response.headers, body.errors);
  if (response.status === 429) throw new ProviderRateLimitError(PROVIDER, 'linear answered 429', linearRetryAfterMs(response.headers));
  if (!response.ok) throw errorForStatus(PROVIDER, response.status, response.headers, text.slice(0, 200));
  if (!body?.data) throw new ProviderRequestError(PROVIDER, 'linear answered without data', response.status);
  return body.data;
}
