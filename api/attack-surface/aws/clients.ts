// The settings every SDK client of a discovery run shares: Aegis's endpoint override (tests), the
// temporary credentials of the assumed role, and retries for throttling.
import type { AwsSettings } from '../providers/settings.ts';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

/** What a service module needs to list one scope. */
export interface ScopeContext {
  settings: AwsSettings;
  credentials: AwsCredentials;
  /** The customer's account (from the assumed role), for ARNs AWS does not return. */
  accountId: string;
  signal?: AbortSignal;
}

/** Global services (CloudFront, Route 53) are signed for us-east-1. */
export const GLOBAL_REGION = 'us-east-1';

/** The SDK retries throttling and 5xx with backoff; four attempts in all. */
export const MAX_ATTEMPTS = 4;

export interface ClientConfig {
  region: string;
  endpoint?: string;
  credentials?: AwsCredentials;
  maxAttempts: number;
  requestHandler: { connectionTimeout: number; requestTimeout: number };
}

export function clientConfig(settings: AwsSettings, region: string, credentials: AwsCredentials | undefined): ClientConfig {
  return {
    region,
    ...(settings.endpointUrl ? { endpoint: settings.endpointUrl } : {}),
    // Undefined: the SDK's default chain (environment, shared config, instance or task role).
    ...(credentials ? { credentials } : {}),
    maxAttempts: MAX_ATTEMPTS,
    requestHandler: { connectionTimeout: 10_000, requestTimeout: 60_000 },
  };
}

/** `send` options carrying the run's abort signal. */
export const sendOptions = (signal: AbortSignal | undefined): { abortSignal?: AbortSignal } => (signal ? { abortSignal: signal } : {});
