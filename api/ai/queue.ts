// The triage job's kind, its payload, and the triage a finding carries while it waits. Kept free of
// provider imports: the event store queues automatic triages through ./auto.ts.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import { enqueue } from '../../platform/jobs/queue.ts';
import type { StoredTriage } from './types.ts';

export const TRIAGE_JOB = 'triage.run';
/** Attempts before a triage gives up (rate limits and outages are retried; refusals are not). */
export const TRIAGE_JOB_MAX_ATTEMPTS = 6;

/** A type alias, not an interface: the job registry's payloads are records. */
export type TriageJobPayload = {
  vulnerability_id: string;
  org_id?: string;
  /** `ai`: the connection `integration_id`; `fallback`: the bundled rules. */
  engine: 'ai' | 'fallback';
  integration_id?: string | null;
};

/** Dedupe key of the automatic triage of a finding: once per finding, however often its creation is replayed. */
export const autoTriageKey = (vulnerabilityId: string): string => `${TRIAGE_JOB}:auto:${vulnerabilityId}`;

export function pendingTriage(input: { trigger: StoredTriage['trigger']; requestedBy: string | null; jobId: string | null; now?: Date }): StoredTriage {
  return {
    status: 'pending',
    requested_at: (input.now ?? new Date()).toISOString(),
    requested_by: input.requestedBy,
    trigger: input.trigger,
    completed_at: null,
    engine: null,
    result: null,
    usage: { input_tokens: 0, output_tokens: 0 },
    attempts: 0,
    redactions: 0,
    error: null,
    job_id: input.jobId,
  };
}

/** Queues a triage in the caller's transaction (announce after commit); returns the job id. */
export async function enqueueTriage(trx: Db, orgId: string, payload: TriageJobPayload): Promise<string> {
  const { job } = await enqueue(trx, { kind: TRIAGE_JOB, orgId, payload: { ...payload }, maxAttempts: TRIAGE_JOB_MAX_ATTEMPTS });
  return job.id;
}

/** The stored triage of a finding (null when never triaged). */
export const triageOf = (row: { triage: Record<string, unknown> | null }): StoredTriage | null => (row.triage as StoredTriage | null) ?? null;

/** A stored triage as the API shows it: plain object types (they fit the response types inferred from JSON Schema). */
export function triageView(t: StoredTriage) {
  return {
    ...t,
    engine: t.engine ? { ...t.engine } : null,
    result: t.result ? { ...t.result, suggested_fix: { ...t.result.suggested_fix } } : null,
    usage: { ...t.usage },
  };
}

/**
 * Replaces the finding's triage, only while it is still the one job `jobId` works on (a later
 * request has its own job); returns whether it was written. Never touches status or resolution.
 */
export async function storeTriage(db: Db, vulnerabilityId: string, jobId: string, triage: StoredTriage): Promise<boolean> {
  const updated = await db
    .updateTable('vulnerabilities')
    .set({ triage: JSON.stringify(triage) })
    .where('id', '=', vulnerabilityId)
    .where(sql<boolean>`triage->>'job_id' = ${jobId}`)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}
