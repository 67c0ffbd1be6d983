// What a job kind is to the queue: a handler and its limits. Other modules (scans, webhooks) add
// their kinds to the registry in ./registry.ts; the worker runs whatever is registered.
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database, JobRow } from '../db/schema.ts';

export type { JobRow, JobState } from '../db/schema.ts';

/** A job as its handler sees it: the row, with the payload typed by the kind. */
export type Job<P extends object = Record<string, unknown>> = Omit<JobRow, 'payload'> & { payload: P };

/** Why a running handler's signal was aborted (the signal's `reason` is a JobAbortedError). */
export type AbortCause = 'canceled' | 'lease-lost' | 'shutdown';

export class JobAbortedError extends Error {
  override readonly name = 'JobAbortedError';
  constructor(readonly reason: AbortCause) {
    super(reason === 'canceled' ? 'job canceled' : reason === 'lease-lost' ? 'job lease lost to another worker' : 'worker shutting down');
  }
}

/** Thrown by a handler when retrying cannot help (bad payload, target refused): the job ends `failed` at once. */
export class PermanentJobError extends Error {
  override readonly name = 'PermanentJobError';
}

/** Thrown by a handler that decides itself when to try again (a webhook's retry schedule): retried after `retryInMs`, attempts permitting. */
export class RetryLaterError extends Error {
  override readonly name = 'RetryLaterError';
  constructor(
    message: string,
    readonly retryInMs: number,
  ) {
    super(message);
  }
}

/** ctx.completeWith found the lease gone: the job was reclaimed and its work belongs to another run. */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
}

export type JobLogger = FastifyBaseLogger;

export interface JobContext {
  /** Aborted when the job is canceled, its lease is lost or the worker stops; `reason` says which (JobAbortedError). */
  signal: AbortSignal;
  /** Fraction done, 0–1; stored with the next lease heartbeat. */
  progress(fraction: number): void;
  log: JobLogger;
  /** Id of the worker running this attempt. */
  workerId: string;
  /**
   * Writes the job's outcome and completes it in one transaction, only while this attempt still
   * holds the lease (the row is locked first, so the job cannot be reclaimed meanwhile). Results
   * stored this way (findings, say) are therefore written exactly once even if a lease is lost and
   * the job runs again elsewhere. Throws LeaseLostError when the lease is gone. The callback must
   * use `trx` only: on the embedded database `db` would wait for the transaction forever.
   */
  completeWith<R>(write: (trx: Kysely<Database>) => Promise<R>): Promise<R>;
}

export interface BackoffPolicy {
  /** Delay before the second attempt; doubled for each attempt after (default 1 000 ms). */
  baseMs?: number;
  /** Longest delay (default 300 000 ms). */
  maxMs?: number;
}

export interface JobKindDefinition<P extends object = Record<string, unknown>, R = unknown> {
  /** Method syntax on purpose: a handler of a narrower payload still fits the registry's type. */
  run(job: Job<P>, ctx: JobContext): Promise<R>;
  /** Jobs of this kind one worker runs at once (default 1). */
  concurrency?: number;
  /** Jobs of this kind running at once across all workers (default: no cap beyond each worker's). */
  globalConcurrency?: number;
  backoff?: BackoffPolicy;
}

/** Kinds by name; the worker reads it on every claim, so kinds registered later are picked up. */
export type JobHandlers = Record<string, JobKindDefinition>;
