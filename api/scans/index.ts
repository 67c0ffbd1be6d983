// The scans module's hooks into the job system: the `scan` and `verify-finding` job kinds, and what a due schedule does
// (create a scan and its job in the scheduler's transaction, once per due time), for code scans and
// URL scans alike.
import type { Db } from '../../platform/db/database.ts';
import type { ScanScheduleRow } from '../../platform/db/schema.ts';
import { jobHandlers } from '../../platform/jobs/registry.ts';
import type { JobHandlers, JobKindDefinition } from '../../platform/jobs/types.ts';
import { scanJobKind, type ScanJobOptions } from './run-scan.ts';
import { VERIFY_JOB_KIND, verifyJobKind } from './verify-fix.ts';
import { parseGitSource } from '../../platform/git/url.ts';
import { gitTargetRefusal } from '../../platform/git/target-refusal.ts';
import { tenantPolicy, type OutboundPolicy } from '../../platform/net/outbound.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import { createScan, SCAN_JOB_KIND, storedGitSource } from './store.ts';
import { prepareUrlSource } from './url/source.ts';
import type { CommonScanInput } from './url/schemas.ts';
import { sandboxScopeOf } from '../sandbox/target-policy.ts';

const CODE_SCANS = new Set(['sast', 'sca', 'secrets']);
const URL_SCANS = new Set(['dast', 'api', 'cve']);

/**
 * The process's job kinds plus `scan`, bound to this database. Not registered process-wide: tests
 * run several servers, each on its own database, in one process.
 */
export function scanJobHandlers(options: ScanJobOptions): JobHandlers {
  return {
    ...jobHandlers,
    [SCAN_JOB_KIND]: scanJobKind(options) as unknown as JobKindDefinition,
    [VERIFY_JOB_KIND]: verifyJobKind(options) as unknown as JobKindDefinition,
  };
}

/**
 * Starts the scan a schedule is due for, inside the scheduler's transaction; the dedupe key makes
 * a second scheduler's attempt at the same due time a no-op. Returns whether a scan was created.
 * A schedule whose target or config no longer passes the checks of its scan type is skipped.
 * API scans need `config.document_url` (a schedule has no upload).
 */
export function scheduledScanStarter(options: { allowLocalSources: boolean; allowPrivateTargets: boolean; secretBox: SecretBox; publicUrl: () => string; outbound?: OutboundPolicy }) {
  const outbound = options.outbound ?? tenantPolicy({ allowPrivateTargets: options.allowPrivateTargets });
  return async (trx: Db, schedule: ScanScheduleRow, dueAt: Date, dedupeKey: string): Promise<boolean> => {
    // Schedule configs are stored and shown in clear, so credentials are never taken from them.
    const { auth: _auth, ...config } = schedule.config;
    const run = { orgId: schedule.org_id, scanType: schedule.scan_type, config: { ...config, scheduled_for: dueAt.toISOString() }, scheduleId: schedule.id, dedupeKey };
    if (URL_SCANS.has(schedule.scan_type)) {
      if (schedule.scan_type === 'api' && typeof schedule.config.document_url !== 'string') return false;
      let prepared: ReturnType<typeof prepareUrlSource>;
      const sandbox = await sandboxScopeOf(trx, schedule.org_id, options.publicUrl());
      try {
        prepared = prepareUrlSource(schedule.target, config as CommonScanInput, { allowPrivateTargets: options.allowPrivateTargets, box: options.secretBox, sandbox });
      } catch {
        return false;
      }
      return (await createScan(trx, { ...run, target: prepared.target, source: prepared.source })) !== null;
    }
    if (!CODE_SCANS.has(schedule.scan_type)) return false;
    const ref = typeof schedule.config.ref === 'string' ? schedule.config.ref : undefined;
    const parsed = parseGitSource(schedule.target, ref, { allowLocal: options.allowLocalSources });
    if (!parsed.ok) return false;
    // A repository on a literal private address is refused as a scan request would be.
    if (gitTargetRefusal(parsed.source.url, outbound) !== null) return false;
    return (await createScan(trx, { ...run, target: parsed.source.target, source: storedGitSource(parsed.source, options.secretBox) })) !== null;
  };
}
