// What ACME issuance needs to know from the server's settings, and its fixed numbers: the job kind,
// the backoff between failed orders, how long a challenge is answered.
import type { ServerConfig } from '../../config.ts';

export type AcmeSettings = Pick<
  ServerConfig,
  'acmeDirectoryUrl' | 'acmeEmail' | 'acmeCaCertsPath' | 'acmeChallenges' | 'acmeRenewBeforeDays' | 'acmeCheckIntervalMs' | 'shieldTlsPort' | 'shieldDomainProof'
>;

/** One job per order; its dedupe key names the site (./scheduler.ts). */
export const ORDER_JOB = 'shield.certificate.order';

/**
 * Job attempts: the handler records an order's failure itself and completes, so a job is retried
 * only when its run was cut short (the worker stopped or died, the lease was lost).
 */
export const ORDER_JOB_MAX_ATTEMPTS = 5;

const MINUTE = 60_000;
/** The first retry after a failed order; each further failure doubles it, up to a day. */
export const FIRST_RETRY_MS = 5 * MINUTE;
export const LAST_RETRY_MS = 24 * 60 * MINUTE;

/** Delay before the next order of a site whose last `failures` orders failed in a row (failures ≥ 1). */
export function retryDelayMs(failures: number): number {
  return Math.min(LAST_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(Math.max(failures - 1, 0), 20));
}

/** How long the gateways answer a challenge: far longer than a validation takes, short enough that a crashed order's rows go soon. */
export const CHALLENGE_TTL_MS = 60 * MINUTE;

/** The stored and published error text of a failure is cut to this length. */
export const MAX_ERROR_LENGTH = 1_000;

