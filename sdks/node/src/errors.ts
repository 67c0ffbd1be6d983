// Typed errors. The API answers `{"error":{"code","message","details"}}` with a status and an
// `x-request-id` header; each status the API uses has its own subclass so callers can `instanceof`.

export interface ErrorInit {
  status?: number | undefined;
  code?: string | undefined;
  details?: unknown;
  requestId?: string | undefined;
  headers?: Headers | undefined;
  cause?: unknown;
}

/** Base class of every error the SDK throws. */
export class AegisError extends Error {
  /** HTTP status, when the server answered. */
  readonly status: number | undefined;
  /** The API's error code (`not_found`, `validation_failed`, `rate_limited`, ...). */
  readonly code: string | undefined;
  /** The API's structured details (`fields` for validation errors, `rows` for CSV imports, ...). */
  readonly details: unknown;
  /** The request id of the answer (`x-request-id`), to quote to support. */
  readonly requestId: string | undefined;
  /** The answer's headers, when there was an answer. */
  readonly headers: Headers | undefined;

  constructor(message: string, init: ErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.requestId = init.requestId;
    this.headers = init.headers;
  }

  /** Same as `requestId` (the spelling the other SDKs use). */
  get request_id(): string | undefined {
    return this.requestId;
  }
}

/** The server answered with an error status. */
export class APIError extends AegisError {}
export class BadRequestError extends APIError {}
export class AuthenticationError extends APIError {}
export class PermissionDeniedError extends APIError {}
export class NotFoundError extends APIError {}
export class ConflictError extends APIError {}
/** 422: `details.fields` names the invalid fields; a CSV import names its `details.rows`. */
export class ValidationError extends APIError {}
export class RateLimitError extends APIError {}
export class InternalServerError extends APIError {}

/** No answer: the connection failed or was reset. */
export class APIConnectionError extends AegisError {}
/** No answer within the timeout. */
export class APITimeoutError extends APIConnectionError {}

/** A webhook whose signature, timestamp or body does not verify. */
export class WebhookSignatureError extends AegisError {}

const BY_STATUS: Record<number, typeof APIError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  422: ValidationError,
  429: RateLimitError,
};

/** The error for an answer of `status` whose body was `body` (parsed JSON, text or undefined). */
export function errorFromResponse(status: number, body: unknown, headers: Headers): APIError {
  const envelope = body && typeof body === 'object' ? (body as { error?: unknown }).error : undefined;
  const error = envelope && typeof envelope === 'object' ? (envelope as { code?: unknown; message?: unknown; details?: unknown }) : undefined;
  const code = typeof error?.code === 'string' ? error.code : undefined;
  const message = typeof error?.message === 'string' ? error.message : typeof body === 'string' && body ? body.slice(0, 500) : `HTTP ${status}`;
  const Type = BY_STATUS[status] ?? (status >= 500 ? InternalServerError : APIError);
  return new Type(message, {
    status,
    code,
    details: error?.details,
    requestId: headers.get('x-request-id') ?? undefined,
    headers,
  });
}
