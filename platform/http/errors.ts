// The one error type routes throw. The error handler turns it (and every framework error) into the
// specification's envelope: { "error": { "code", "message", "details" } }.

export type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'forbidden'
  | 'csrf_failed'
  | 'sso_required'
  | 'plan_required'
  | 'live_mode_required'
  | 'key_rotating'
  | 'owner_session_required'
  | 'sign_in_required'
  | 'signup_closed'
  | 'not_found'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'not_acceptable'
  | 'conflict'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'headers_too_large'
  | 'unsupported_media_type'
  | 'validation_failed'
  | 'idempotency_key_reused'
  | 'rate_limited'
  | 'internal'
  | 'unavailable'
  | 'provider_unavailable'
  | 'ai_budget_exhausted'
  | 'triage_quota_exceeded';

export type ErrorDetails = Record<string, unknown>;

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const codeForStatus: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  408: 'request_timeout',
  409: 'conflict',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  429: 'rate_limited',
  431: 'headers_too_large',
  500: 'internal',
  503: 'unavailable',
};

export const badRequest = (message: string, details?: ErrorDetails) => new ApiError(400, 'invalid_request', message, details);
export const notFound = (what: string) => new ApiError(404, 'not_found', `${what} not found`);
export const conflict = (message: string, details?: ErrorDetails) => new ApiError(409, 'conflict', message, details);
export const validationFailed = (message: string, details?: ErrorDetails) => new ApiError(422, 'validation_failed', message, details);
