// Automatic triage: a new high or critical finding of an organisation whose active AI connection
// has `auto_triage` on is triaged as the scan records it. Called by the event store for every batch
// of events, in the transaction that records them; kept free of provider and SDK imports so the
// event store does not load them (nor import itself back through them).
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import type { EventRow } from '../../platform/db/schema.ts';
import { enqueueMany } from '../../platform/jobs/queue.ts';
import { activeAiConnection } from './engine-choice.ts';
import { autoTriageKey, pendingTriage, TRIAGE_JOB, TRIAGE_JOB_MAX_ATTEMPTS, type TriageJobPayload } from './queue.ts';
import { readUsage } from './usage.ts';

const AUTO_SEVERITIES = new Set(['high', 'critical']);

/** The new high/critical findings of `events`, by organisation. */
function newSevereFindings(events: readonly Pick<EventRow, 'org_id' | 'type' | 'data'>[]): Map<string, string[]> {
  const byOrg = new Map<string, string[]>();
  for (const e of events) {
    if (e.type !== 'vulnerability.created') continue;
    const object = e.data.object as { id?: unknown; severity?: unknown };
    if (typeof object.id !== 'string' || typeof object.severity !== 'string' || !AUTO_SEVERITIES.has(object.severity)) continue;
    byOrg.set(e.org_id, [...(byOrg.get(e.org_id) ?? []), object.id]);
  }
  return byOrg;
}

/**
 * Queues a `triage.run` (once per finding) for each new high or critical finding in `events` whose
 * organisation has auto triage on and budget left, marking its triage `pending` (trigger `auto`).
 * A budget named in the connection's settings is checked here; the server's default budget is
 * checked by the job (a triage refused there says so). Returns how many jobs were queued (the
 * caller announces them after commit).
 */
export async function queueAutoTriage(trx: Db, events: readonly Pick<EventRow, 'org_id' | 'type' | 'data'>[]): Promise<number> {
  const byOrg = newSevereFindings(events);
  let queued = 0;
  for (const [orgId, ids] of byOrg) {
    const connection = await activeAiConnection(trx, orgId);
    const ai = connection?.settings.ai;
    if (!connection || ai?.auto_triage !== true) continue;
    if (ai.monthly_token_budget !== undefined && (await readUsage(trx, orgId)).tokens >= ai.monthly_token_budget) continue;
    const jobs = await enqueueMany(
      trx,
      ids.map((id) => ({
        kind: TRIAGE_JOB,
        orgId,
        payload: { vulnerability_id: id, org_id: orgId, engine: 'ai', integration_id: connection.id } satisfies TriageJobPayload,
        maxAttempts: TRIAGE_JOB_MAX_ATTEMPTS,
        dedupeKey: autoTriageKey(id),
      })),
    );
    if (jobs.length === 0) continue;
    const findingIds = jobs.map((j) => (j.payload as { vulnerability_id: string }).vulnerability_id);
    const jobIds = jobs.map((j) => j.id);
    const pending = JSON.stringify(pendingTriage({ trigger: 'auto', requestedBy: null, jobId: null }));
    // One statement for the batch: each finding's pending triage names its own job.
    await sql`
      update vulnerabilities as v
      set triage = ${pending}::jsonb || jsonb_build_object('job_id', j.job_id)
      from unnest(${findingIds}::text[], ${jobIds}::text[]) as j(vulnerability_id, job_id)
      where v.id = j.vulnerability_id and v.org_id = ${orgId} and v.triage is null`.execute(trx);
    queued += jobs.length;
  }
  return queued;
}
