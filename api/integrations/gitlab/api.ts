// Calls to GitLab's REST API v4 with a session. Every non-2xx answer becomes a ProviderError
// (../providers/errors.ts); GitLab says how long to wait in Retry-After (and RateLimit-Reset, an
// epoch, on its rate-limit answers), and its error bodies are `{"message": …}` or `{"error": …}`.
import { errorForStatus, ProviderAuthError, type ProviderError, ProviderUnavailableError } from '../providers/errors.ts';
import type { ProviderSession } from '../providers/types.ts';

export const PROVIDER = 'gitlab';

/** A whole GitLab call, connection included; GitLab answers well within it. */
const TIMEOUT_MS = 30_000;

/** The token of a session (`Bearer <token>`), read in this one place. */
export function tokenOf(session: ProviderSession): string {
  const match = /^Bearer (\S+)$/.exec(session.authorization);
  if (!match) throw new Error('a GitLab session carries a Bearer token');
  return match[1]!;
}

/** `:id` of /projects/:id — a numeric id, or the project path URL-encoded (`group%2Fproject`). */
export const projectId = (project: string): string => encodeURIComponent(project);

/** GitLab's own error text from a JSON or plain body; never the request (it may hold a token). */
export function detailOf(text: string): string {
  try {
    const body = JSON.parse(text) as unknown;
    if (typeof body === 'object' && body !== null) {
      const { message, error, error_description: description } = body as Record<string, unknown>;
      for (const value of [message, description, error]) {
        if (typeof value === 'string') return value;
        if (value !== undefined && value !== null) return JSON.stringify(value);
      }
    }
  } catch {
    // Not JSON: GitLab's 429 answer is plain text.
  }
  return text.trim().slice(0, 300);
}

/**
 * The ProviderError for a non-2xx answer. GitLab's rate-limit answers carry Retry-After and
 * RateLimit-Reset (epoch seconds, the IETF draft's name rather than GitHub's X- one): the latter is
 * passed on under the name errorForStatus reads.
 */
export function failure(response: Response, text: string): ProviderError {
  const headers = new Headers(response.headers);
  const reset = headers.get('ratelimit-reset');
  if (reset !== null && !headers.has('x-ratelimit-reset')) headers.set('x-ratelimit-reset', reset);
  const error = errorForStatus(PROVIDER, response.status, headers, detailOf(text));
  // A token without the scope a call needs (GitLab: 403 insufficient_scope) is unusable for this
  // connection as a whole, not a refusal of one resource.
  if (response.status === 403 && /insufficient_scope/.test(text + (response.headers.get('www-authenticate') ?? ''))) return new ProviderAuthError(PROVIDER, error.message, 403);
  return error;
}

/**
 * The connector's outbound fetch (`fetcher`, ../providers/http.ts), with network failures and
 * timeouts as ProviderUnavailableError. Redirects are not followed: GitLab's API answers none.
 */
export async function send(fetcher: typeof fetch, url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetcher(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    const reason = err instanceof Error ? (err.name === 'TimeoutError' ? 'timed out' : err.message) : 'request failed';
    throw new ProviderUnavailableError(PROVIDER, `gitlab is unreachable: ${reason}`);
  }
}

/** The parsed JSON answer of `method path` (path relative to the API base), or the ProviderError. */
export async function api<T>(session: ProviderSession, method: 'GET' | 'POST' | 'PUT', path: string, body?: Record<string, unknown>): Promise<T> {
  const headers: Record<string, string> = { authorization: session.authorization, accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await send(session.fetch, `${session.apiBaseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  if (response.status < 200 || response.status > 299) throw failure(response, text);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ProviderUnavailableError(PROVIDER, `gitlab answered ${method} ${path.split('?')[0]} with a body that is not JSON`, response.status);
  }
}
