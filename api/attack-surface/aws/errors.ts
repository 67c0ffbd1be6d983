// How an AWS SDK failure reads to discovery: its AWS error name (the SDK sets `name` to the
// error code of the answer), and which of those mean "no permission" or "slow down".
import { ProviderAuthError, ProviderRateLimitError, ProviderRequestError, ProviderUnavailableError, type ProviderError } from '../../integrations/providers/errors.ts';

interface SdkErrorShape {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  $fault?: unknown;
  $metadata?: { httpStatusCode?: number };
}

const ACCESS_DENIED = new Set(['AccessDenied', 'AccessDeniedException', 'UnauthorizedOperation', 'UnauthorizedAccess']);
const THROTTLING = new Set(['Throttling', 'ThrottlingException', 'ThrottledException', 'TooManyRequestsException', 'RequestLimitExceeded', 'RequestThrottled', 'RequestThrottledException', 'PriorRequestNotComplete', 'SlowDown']);
/** What STS answers when Aegis may not assume the role or its own credentials are refused. */
const AUTH = new Set([...ACCESS_DENIED, 'InvalidClientTokenId', 'ExpiredToken', 'ExpiredTokenException', 'SignatureDoesNotMatch', 'IncompleteSignature', 'MissingAuthenticationToken', 'UnrecognizedClientException', 'RegionDisabledException', 'InvalidIdentityToken']);
/** Failures of the connection itself, not an answer from AWS. */
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);

const shape = (error: unknown): SdkErrorShape => (error && typeof error === 'object' ? (error as SdkErrorShape) : {});

/** AWS's error name (`AccessDenied`, `UnauthorizedOperation`), or a network code, or 'Error'. */
export function awsErrorName(error: unknown): string {
  const e = shape(error);
  if (typeof e.code === 'string' && NETWORK.has(e.code)) return e.code;
  return typeof e.name === 'string' && e.name ? e.name : 'Error';
}

export function awsErrorMessage(error: unknown): string {
  const message = shape(error).message;
  return typeof message === 'string' && message ? message.slice(0, 500) : awsErrorName(error);
}

export const isAccessDenied = (error: unknown): boolean => ACCESS_DENIED.has(awsErrorName(error));

export function isAbort(error: unknown, signal: AbortSignal | undefined): boolean {
  return Boolean(signal?.aborted) || awsErrorName(error) === 'AbortError';
}

function status(error: unknown): number | null {
  return shape(error).$metadata?.httpStatusCode ?? null;
}

/**
 * A failure of STS (AssumeRole / GetCallerIdentity) as a provider error: refused role or
 * credentials → auth; throttling → rate limit; 5xx, network, or Aegis lacking credentials of its
 * own → unavailable; anything else (a malformed role ARN) → request. Messages are AWS's.
 */
export function stsProviderError(error: unknown): ProviderError {
  const name = awsErrorName(error);
  const message = awsErrorMessage(error);
  const code = status(error);
  if (AUTH.has(name)) return new ProviderAuthError('aws', message, code);
  if (THROTTLING.has(name) || code === 429) return new ProviderRateLimitError('aws', message, 60_000, code);
  if (name === 'CredentialsProviderError') return new ProviderUnavailableError('aws', `Aegis has no AWS credentials of its own: ${message}`, null);
  if (NETWORK.has(name) || code === null || code >= 500 || shape(error).$fault === 'server') return new ProviderUnavailableError('aws', message, code);
  return new ProviderRequestError('aws', message, code);
}
