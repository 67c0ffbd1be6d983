// The settings every SDK client of a discovery run shares: Aegis's endpoint override (tests), the
// temporary credentials of the assumed role, retries for throttling, and the connections: the SDK's
// node:http(s) agents come from the outbound policy (net/outbound.ts) as `operator` traffic. AWS
// endpoints are AWS's own names (<service>.<region>.amazonaws.com; regions are checked against
// `^[a-z]{2}(-[a-z]+)+-\d$` when saved) or the operator's AEGIS_AWS_ENDPOINT_URL, and the default
// credential chain may read the instance metadata service on purpose (Aegis's own identity): no
// address rule applies, and a VPC endpoint that resolves to a private address keeps working.
import type http from 'node:http';
import type https from 'node:https';
import { operatorPolicy, outboundNodeAgents } from '../../../platform/net/outbound.ts';
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
  requestHandler: { connectionTimeout: number; requestTimeout: number; httpAgent: http.Agent; httpsAgent: https.Agent };
}

export function clientConfig(settings: AwsSettings, region: string, credentials: AwsCredentials | undefined): ClientConfig {
  return {
    region,
    ...(settings.endpointUrl ? { endpoint: settings.endpointUrl } : {}),
    // Undefined: the SDK's default chain (environment, shared config, instance or task role).
    ...(credentials ? { credentials } : {}),
    maxAttempts: MAX_ATTEMPTS,
    // Agents of their own per client: client.destroy() destroys them.
    requestHandler: { connectionTimeout: 10_000, requestTimeout: 60_000, ...outboundNodeAgents(operatorPolicy) },
  };
}

/** `send` options carrying the run's abort signal. */
export const sendOptions = (signal: AbortSignal | undefined): { abortSignal?: AbortSignal } => (signal ? { abortSignal: signal } : {});
