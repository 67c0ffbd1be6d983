// The scans module's hooks into the job system: the `scan` job kind, and what a due schedule does
// (create a scan and its job in the scheduler's transaction, once per due time).
import type { Db } from '../db/database.ts';
import type { ScanScheduleRow } from '../db/schema.ts';
import { jobHandlers } from '../jobs/registry.ts';
import type { JobHandlers, JobKindDefinition } from '../jobs/types.ts';
import { scanJobKind, type ScanJobOptions } from './run-scan.ts';
import { parseGitSource } from '../git/url.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { createScan, SCAN_JOB_KIND, storedGitSource } from './store.ts';

const CODE_SCANS = new Set(['sast', 'sca', 'secrets']);

/**
 * The process's job kinds plus `scan`, bound to this database. Not registered process-wide: tests
 * run several servers, each on its own database, in one process.
 */
export function scanJobHandlers(options: ScanJobOptions): JobHandlers {
  return { ...jobHandlers, [SCAN_JOB_KIND]: scanJobKind(options) as unknown as JobKindDefinition };
}

/**
 * Starts the scan a schedule is due for, inside the scheduler's transaction; the dedupe key makes
 * a second scheduler's attempt at the same due time a no-op. Returns whether a scan was created.
 * Schedules of scan types without a runner yet (dast, api, cve) are skipped.
 */
export function scheduledScanStarter(options: { allowLocalSources: boolean; secretBox: SecretBox }) {
  return async (trx: Db, schedule: ScanScheduleRow, dueAt: Date, dedupeKey: string): Promise<boolean> => {
    if (!CODE_SCANS.has(schedule.scan_type)) return false;
    const ref = typeof schedule.config.ref === 'string' ? schedule.config.ref : undefined;
    const parsed = parseGitSource(schedule.target, ref, { allowLocal: options.allowLocalSources });
    if (!parsed.ok) return false;
    const scan = await createScan(trx, {
      orgId: schedule.org_id,
      scanType: schedule.scan_type,
      target: parsed.source.target,
      source: storedGitSource(parsed.source, options.secretBox),
      config: { ...schedule.config, scheduled_for: dueAt.toISOString() },
      scheduleId: schedule.id,
      dedupeKey,
    });
    return scan !== null;
  };
}
