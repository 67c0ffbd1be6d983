// One JSON call to an Atlassian endpoint, with failures turned into the provider errors callers act
// on (../providers/errors.ts). Jira explains refusals as {errorMessages: [], errors: {field: msg}};
// the auth server as {error, error_description}. Their text is kept (it never carries our token).
import { errorForStatus, ProviderUnavailableError } from '../providers/errors.ts';

export const PROVIDER = 'jira';

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  authorization?: string;
  json?: unknown;
}

/** The provider's own words from an error body, whatever of the documented shapes it has. */
export function errorDetail(text: string): string {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const parts: string[] = [];
    if (Array.isArray(body.errorMessages)) parts.push(...body.errorMessages.filter((m): m is string => typeof m === 'string'));
    if (body.errors && typeof body.errors === 'object') {
      for (const [field, message] of Object.entries(body.errors as Record<string, unknown>)) parts.push(`${field}: ${String(message)}`);
    }
    if (typeof body.error_description === 'string') parts.push(body.error_description);
    else if (typeof body.error === 'string') parts.push(body.error);
    if (typeof body.message === 'string') parts.push(body.message);
    return parts.join('; ');
  } catch {
    return text.slice(0, 200);
  }
}

/** One call through `fetcher`, the connector's outbound fetch (../providers/http.ts). */
export async function send(fetcher: typeof fetch, url: string, options: CallOptions = {}): Promise<{ status: number; headers: Headers; text: string }> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.authorization) headers.authorization = options.authorization;
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetcher(url, {
      method: options.method ?? 'GET',
      headers,
      body: options.json === undefined ? undefined : JSON.stringify(options.json),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new ProviderUnavailableError(PROVIDER, `jira could not be reached: ${(err as Error).message}`);
  }
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Calls and parses the JSON answer (undefined for 204); throws the mapped error on non-2xx. */
export async function call<T>(fetcher: typeof fetch, url: string, options: CallOptions = {}): Promise<T> {
  const answer = await send(fetcher, url, options);
  if (answer.status < 200 || answer.status > 299) throw errorForStatus(PROVIDER, answer.status, answer.headers, errorDetail(answer.text));
  return (answer.text ? JSON.parse(answer.text) : undefined) as T;
}
