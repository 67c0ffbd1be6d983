import { isObject } from '../schemas/json-value.ts';
// The one error an Aegis API answer turns into: the status, and the envelope the API always sends
// (`{"error": {"code", "message", "details"}}`, README "API conventions"), plus the request id so a
// failure in a reconciler run can be found in the server's logs.

export interface ErrorEnvelope {
  error: { code: string; message: string; details: Record<string, unknown> };
}

export class AegisApiError extends Error {
  override readonly name = 'AegisApiError';

  constructor(
    readonly status: number,
    /** The envelope's `code` (`validation_failed`, `conflict`, …); `http_<status>` when the answer had no envelope (a proxy's 502 page). */
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown>,
    /** `X-Request-Id` of the answer, as logged by the server as `request_id`. */
    readonly requestId: string | undefined,
    /** `METHOD /path` of the request, for messages. */
    readonly request: string,
  ) {
    super(`${request}: ${status} ${code}: ${message}`);
  }
}


export function isErrorEnvelope(body: unknown): body is ErrorEnvelope {
  if (!isObject(body) || !isObject(body.error)) return false;
  const { code, message } = body.error;
  return typeof code === 'string' && typeof message === 'string';
}

/** The error for a non-2xx answer; `body` is the parsed JSON (or the text when it was not JSON). */
export function apiErrorFrom(response: Response, body: unknown, request: string): AegisApiError {
  const requestId = response.headers.get('x-request-id') ?? undefined;
  if (isErrorEnvelope(body)) {
    const details = isObject(body.error.details) ? body.error.details : {};
    return new AegisApiError(response.status, body.error.code, body.error.message, details, requestId, request);
  }
  const text = typeof body === 'string' ? body.slice(0, 200) : '';
  return new AegisApiError(response.status, `http_${response.status}`, text || response.statusText || 'no error envelope', {}, requestId, request);
}
