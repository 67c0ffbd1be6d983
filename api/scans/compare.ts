// Reading one scan against another (the diff) and what a scan covered.
import type { Db } from '../../platform/db/database.ts';
import { toVulnerability, vulnerabilitiesOfScan } from '../findings/store.ts';
import type { ScanStatus } from './schemas.ts';
import { previousScan, type ScanRow } from './store.ts';
import type { SkippedByType, SkippedFile } from '../../scanners/types.ts';

/** New, fixed and unchanged findings of `scan` against `baseline` (default: the previous completed scan of the target). */
export async function diffScans(db: Db, scan: ScanRow, baseline?: ScanRow) {
  const base = baseline ?? (await previousScan(db, scan));
  const [current, before] = await Promise.all([vulnerabilitiesOfScan(db, scan.id), base ? vulnerabilitiesOfScan(db, base.id) : Promise.resolve([])]);
  const beforeIds = new Set(before.map((v) => v.id));
  const currentIds = new Set(current.map((v) => v.id));
  const added = current.filter((v) => !beforeIds.has(v.id)).map(toVulnerability);
  const fixed = before.filter((v) => !currentIds.has(v.id)).map(toVulnerability);
  const unchanged = current.filter((v) => beforeIds.has(v.id)).map(toVulnerability);
  return {
    scan_id: scan.id,
    baseline_id: base?.id ?? null,
    counts: { new: added.length, fixed: fixed.length, unchanged: unchanged.length },
    new: added,
    fixed,
    unchanged,
  };
}

export function scanCoverage(scan: ScanRow) {
  const coverage = scan.coverage as { files_scanned?: number; bytes_scanned?: number; skipped?: SkippedFile[]; skipped_by_type?: SkippedByType[]; requests?: number; items?: number; notes?: string[] } | null;
  // URL scans count requests and pages/operations/templates instead of files.
  const web = coverage?.requests !== undefined ? { requests: coverage.requests, items: coverage.items ?? 0 } : { files_scanned: coverage?.files_scanned ?? 0, bytes_scanned: coverage?.bytes_scanned ?? 0, skipped: coverage?.skipped ?? [], ...(coverage?.skipped_by_type !== undefined ? { skipped_by_type: coverage.skipped_by_type } : {}) };
  // The status column holds only the statuses the schema lists.
  return { scan_id: scan.id, status: scan.status as ScanStatus, ...web, notes: coverage?.notes ?? [], complete: scan.status === 'completed' };
}
