// Verify-fix: the `verify-finding` job re-runs exactly the check that produced a finding — for a URL
// finding its recorded check (details.check) through the client of the scan that found it, for a
// code finding a rescan of the same source looking for the same fingerprint. Not reproduced: the
// finding is resolved (`verified`) and, when asked, the virtual patch made from it is deleted.
// Reproduced: it stays (or is again) open, with the fresh evidence.
import { sql } from 'kysely';
import { recordAudit } from '../../platform/audit-log.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { Db } from '../../platform/db/database.ts';
import { withWorkspace } from '../../platform/git/workspace.ts';
import { enqueue } from '../../platform/jobs/queue.ts';
import { JobAbortedError, type Job, type JobContext, type JobKindDefinition } from '../../platform/jobs/types.ts';
import { fetchSource, runScanner, type ScanJobOptions } from './run-scan.ts';
import { getScanById, type ScanRow } from './store.ts';
import type { Recheck } from '../../scanners/web/types.ts';
import { recheckUrlFinding } from './url/run.ts';
import { announceDeliveries, recordEvents } from '../../platform/events/event-store.ts';
import { vulnerabilityChanged } from '../findings/events.ts';
import type { Verification, VulnerabilityRow } from '../findings/store.ts';
import { errorMessage } from '../../schemas/json-value.ts';

export const VERIFY_JOB_KIND = 'verify-finding';

interface VerifyPayload {
  [key: string]: unknown;
  vulnerability_id: string;
}

/** Queues a verification (in the caller's transaction) and returns its initial state. */
export async function requestVerification(trx: Db, vulnerability: Pick<VulnerabilityRow, 'id' | 'org_id'>): Promise<Verification> {
  const { job } = await enqueue(trx, { kind: VERIFY_JOB_KIND, orgId: vulnerability.org_id, payload: { vulnerability_id: vulnerability.id } satisfies VerifyPayload, maxAttempts: 3 });
  const verification: Verification = { status: 'queued', job_id: job.id, requested_at: new Date().toISOString(), finished_at: null, evidence: null, error: null };
  await trx.updateTable('vulnerabilities').set({ verification: JSON.stringify(verification), updated_at: sql<Date>`now()` }).where('id', '=', vulnerability.id).execute();
  return verification;
}

/** A code finding: rescan the source its last scan read, and look for the same fingerprint. */
async function rescan(options: ScanJobOptions, scan: ScanRow, fingerprint: string, signal: AbortSignal): Promise<Recheck> {
  return withWorkspace(async (dir) => {
    const fetched = await fetchSource(options.db, scan, dir, options, signal);
    const output = await runScanner(options.db, scan, dir, signal, () => undefined);
    const same = output.findings.find((f) => f.fingerprint === fingerprint);
    const at = typeof fetched.commit === 'string' ? ` at ${fetched.commit}` : '';
    return same ? { reproduced: true, evidence: same.evidence } : { reproduced: false, evidence: `not found by a new ${scan.scan_type} scan of ${scan.target}${at}` };
  });
}

async function deletePatchOf(trx: Db, vulnerability: VulnerabilityRow): Promise<void> {
  if (!vulnerability.virtual_patch_id || !vulnerability.virtual_patch_auto_remove) return;
  const deleted = await trx
    .deleteFrom('virtual_patches')
    .where('id', '=', vulnerability.virtual_patch_id)
    .where('site_id', 'in', (eb) => eb.selectFrom('shield_sites').select('id').where('org_id', '=', vulnerability.org_id))
    .returning(['id', 'site_id'])
    .executeTakeFirst();
  if (deleted) {
    await recordAudit(trx, {
      orgId: vulnerability.org_id,
      actor: { type: 'system', id: 'verify-fix' },
      action: 'virtual_patch.deleted',
      target: { type: 'virtual_patch', id: deleted.id },
      metadata: { site_id: deleted.site_id, reason: 'finding verified fixed', vulnerability_id: vulnerability.id },
    });
  }
}

async function verify(options: ScanJobOptions, job: Job<VerifyPayload>, ctx: JobContext): Promise<{ status: Verification['status'] } | null> {
  const { db } = options;
  const vulnerability = await db.selectFrom('vulnerabilities').selectAll().where('id', '=', job.payload.vulnerability_id).executeTakeFirst();
  if (!vulnerability) return null;
  const base = (vulnerability.verification as Verification | null) ?? { job_id: job.id, requested_at: new Date().toISOString() };
  const running: Verification = { ...base, job_id: job.id, status: 'running', finished_at: null, evidence: null, error: null } as Verification;
  await db.updateTable('vulnerabilities').set({ verification: JSON.stringify(running) }).where('id', '=', vulnerability.id).execute();

  let outcome: Recheck | { error: string };
  try {
    const scan = await getScanById(db, vulnerability.last_scan_id);
    if (!scan) throw new Error('the scan that found it no longer exists');
    const location = vulnerability.location as { kind?: string };
    const check = (vulnerability.details as { check?: Record<string, unknown> }).check;
    if (location.kind === 'url') {
      if (!check) throw new Error('the finding carries no check to re-run');
      outcome = await recheckUrlFinding(scan, check, options, ctx.signal);
    } else {
      outcome = await rescan(options, scan, vulnerability.fingerprint, ctx.signal);
    }
  } catch (err) {
    if (err instanceof JobAbortedError || ctx.signal.aborted) throw err;
    outcome = { error: errorMessage(err) };
  }

  const result = await ctx.completeWith(async (trx) => {
    const finished = new Date().toISOString();
    let after: VulnerabilityRow;
    if ('error' in outcome) {
      const failed: Verification = { ...running, status: 'error', finished_at: finished, error: outcome.error };
      await trx.updateTable('vulnerabilities').set({ verification: JSON.stringify(failed), updated_at: sql<Date>`now()` }).where('id', '=', vulnerability.id).execute();
      return { status: 'error' as const, deliveries: 0 };
    }
    const done: Verification = { ...running, status: outcome.reproduced ? 'reproduced' : 'not_reproduced', finished_at: finished, evidence: outcome.evidence.slice(0, 4000) };
    if (outcome.reproduced) {
      const reopen = vulnerability.status === 'resolved';
      after = await trx
        .updateTable('vulnerabilities')
        .set({ verification: JSON.stringify(done), evidence: done.evidence ?? vulnerability.evidence, ...(reopen ? { status: 'open', resolution: null, fixed_at: null } : {}), updated_at: sql<Date>`now()` })
        .where('id', '=', vulnerability.id)
        .returningAll()
        .executeTakeFirstOrThrow();
    } else {
      await deletePatchOf(trx, vulnerability);
      const patchGone = vulnerability.virtual_patch_auto_remove ? { virtual_patch_id: null } : {};
      after = await trx
        .updateTable('vulnerabilities')
        .set({ verification: JSON.stringify(done), status: 'resolved', resolution: 'verified', fixed_at: sql<Date>`now()`, ...patchGone, updated_at: sql<Date>`now()` })
        .where('id', '=', vulnerability.id)
        .returningAll()
        .executeTakeFirstOrThrow();
    }
    // Compared with the finding as it was before this verification began.
    const event = vulnerabilityChanged(vulnerability, after);
    const recorded = event ? await recordEvents(trx, [event]) : undefined;
    return { status: done.status, deliveries: recorded?.deliveries ?? 0 };
  });
  announceDeliveries(db, result.deliveries);
  return { status: result.status };
}

export function verifyJobKind(options: ScanJobOptions): JobKindDefinition<VerifyPayload> {
  return { concurrency: 2, run: (job, ctx) => verify(options, job, ctx) };
}
