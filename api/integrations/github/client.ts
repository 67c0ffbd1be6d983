// Calls to GitHub's REST API through Octokit, with a session. Octokit's own retry and throttling
// plugins are not loaded: the job queue retries, after the wait GitHub asks for. Every failure
// becomes a ProviderError (../providers/errors.ts).
import { Octokit } from '@octokit/rest';
import { errorForStatus, ProviderError, ProviderRequestError, ProviderUnavailableError } from '../providers/errors.ts';
import { sessionFetch } from '../providers/http.ts';
import type { ProviderSession } from '../providers/types.ts';

export const PROVIDER = 'github';

/** A whole GitHub call; GitHub answers well within it. */
const TIMEOUT_MS = 30_000;

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/**
 * An Octokit for one session: its API base, its Authorization header as is (Bearer for PATs and user
 * tokens), and the session's outbound fetch (net/outbound.ts) instead of Octokit's global one.
 */
export function octokitFor(session: ProviderSession): Octokit {
  const octokit = new Octokit({
    baseUrl: session.apiBaseUrl,
    userAgent: 'aegis',
    log: quiet,
    request: { fetch: sessionFetch(session, TIMEOUT_MS) },
  });
  octokit.hook.before('request', (options) => {
    options.headers.authorization = session.authorization;
    // The REST API version the calls here were written against.
    options.headers['x-github-api-version'] = '2022-11-28';
  });
  return octokit;
}

/** The token of a session (`Bearer <token>`), read in this one place. */
export function tokenOf(session: ProviderSession): string {
  const match = /^Bearer (\S+)$/i.exec(session.authorization);
  if (!match) throw new Error('a GitHub session carries a Bearer token');
  return match[1]!;
}

/** GitHub's `message` from an error body; never the request (its headers hold the token). */
function detailOf(data: unknown): string {
  if (typeof data === 'string') return data.trim().slice(0, 300);
  if (typeof data === 'object' && data !== null) {
    const { message, errors } = data as { message?: unknown; errors?: unknown };
    const text = typeof message === 'string' ? message : '';
    return Array.isArray(errors) && errors.length > 0 ? `${text} ${JSON.stringify(errors).slice(0, 200)}` : text;
  }
  return '';
}

interface OctokitErrorResponse {
  headers?: Record<string, unknown>;
  data?: unknown;
}

/** The ProviderError for whatever an Octokit call threw. */
export function providerErrorOf(err: unknown): Error {
  if (err instanceof ProviderError) return err;
  // Octokit's RequestError, recognised by shape (@octokit/request-error is not a direct dependency).
  const response = typeof err === 'object' && err !== null ? (err as { status?: unknown; response?: OctokitErrorResponse }).response : undefined;
  const status = typeof err === 'object' && err !== null ? (err as { status?: unknown }).status : undefined;
  if (response && typeof status === 'number') {
    const headers = new Headers();
    for (const [name, value] of Object.entries(response.headers ?? {})) if (typeof value === 'string' || typeof value === 'number') headers.set(name, String(value));
    return errorForStatus(PROVIDER, status, headers, detailOf(response.data));
  }
  // No answer: connection refused, reset, timed out (Octokit reports these as status 500 without a response).
  const reason = err instanceof Error ? (err.name === 'TimeoutError' || err.name === 'AbortError' ? 'timed out' : err.message) : 'request failed';
  return new ProviderUnavailableError(PROVIDER, `github is unreachable: ${reason}`);
}

/** Runs Octokit calls, translating their failures. */
export async function call<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw providerErrorOf(err);
  }
}

/** `owner/name` split; anything else is refused. */
export function splitRepository(repository: string): { owner: string; repo: string } {
  const match = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)$/.exec(repository);
  if (!match) throw new ProviderRequestError(PROVIDER, `not a GitHub repository (owner/name): ${repository.slice(0, 200)}`);
  return { owner: match[1]!, repo: match[2]! };
}
