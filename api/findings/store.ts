// Vulnerabilities (findings) in the database: reading, listing with filters, triage updates.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import type { VulnerabilitiesTable } from '../../platform/db/schema.ts';
import { iso, isoOrNull } from '../../platform/resources/timestamps.ts';
import type { ScanType } from '../../schemas/checks/schedule.ts';
import type { Severity } from '../../scanners/types.ts';
import { livemodeOf } from '../../platform/db/environments.ts';
import { afterCursor, sortKey, sortKeyText, type SortCursor, type SortSpec } from './sort.ts';

export type VulnerabilityRow = Selectable<VulnerabilitiesTable>;
export type VulnerabilityStatus = 'open' | 'acknowledged' | 'resolved' | 'accepted_risk';

export function toVulnerability(row: VulnerabilityRow) {
  return {
    id: row.id,
    livemode: livemodeOf(row.org_id),
    scan_type: row.scan_type as ScanType,
    target: row.target,
    rule_id: row.rule_id,
    title: row.title,
    severity: row.severity as Severity,
    cwe: row.cwe,
    location: row.location,
    evidence: row.evidence,
    details: row.details,
    status: row.status as VulnerabilityStatus,
    resolution: row.resolution as 'fixed' | 'verified' | 'manual' | null,
    false_positive: row.false_positive,
    notes: row.notes,
    first_scan_id: row.first_scan_id,
    last_scan_id: row.last_scan_id,
    first_seen_at: iso(row.first_seen_at),
    last_seen_at: iso(row.last_seen_at),
    fixed_at: isoOrNull(row.fixed_at),
    verification: row.verification as Verification | null,
    virtual_patch: row.virtual_patch_id ? { id: row.virtual_patch_id, auto_remove: row.virtual_patch_auto_remove } : null,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** The latest verify-fix of a finding (a type alias, so it fits the response types inferred from JSON Schema). */
export type Verification = {
  status: 'queued' | 'running' | 'reproduced' | 'not_reproduced' | 'error';
  job_id: string;
  requested_at: string;
  finished_at: string | null;
  /** What the re-run saw. */
  evidence: string | null;
  error: string | null;
};

export interface VulnerabilityListQuery {
  orgId: string;
  after: string | null;
  limit: number;
  severities?: string[] | undefined;
  statuses?: string[] | undefined;
  scanTypes?: string[] | undefined;
  cwes?: string[] | undefined;
  scanId?: string | undefined;
  target?: string | undefined;
  falsePositive?: boolean | undefined;
}

/** Filters only (no paging): what the list and the counts share. */
function filtered(db: Db, q: Omit<VulnerabilityListQuery, 'after' | 'limit'>) {
  let query = db.selectFrom('vulnerabilities').where('org_id', '=', q.orgId);
  if (q.severities) query = query.where('severity', 'in', q.severities);
  if (q.statuses) query = query.where('status', 'in', q.statuses);
  if (q.scanTypes) query = query.where('scan_type', 'in', q.scanTypes);
  if (q.cwes) query = query.where('cwe', 'in', q.cwes);
  if (q.target) query = query.where('target', '=', q.target);
  if (q.falsePositive !== undefined) query = query.where('false_positive', '=', q.falsePositive);
  if (q.scanId) {
    const scanId = q.scanId;
    query = query.where('id', 'in', (eb) => eb.selectFrom('scan_findings').select('vulnerability_id').where('scan_id', '=', scanId));
  }
  return query;
}

export async function listVulnerabilities(db: Db, q: VulnerabilityListQuery): Promise<VulnerabilityRow[]> {
  let query = filtered(db, q).selectAll();
  if (q.after) query = query.where('id', '<', q.after);
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}

/** A page in `spec`'s order, each row with its sort key's text (for the next cursor). */
export async function listVulnerabilitiesSorted(
  db: Db,
  q: Omit<VulnerabilityListQuery, 'after'> & { spec: SortSpec; cursor: SortCursor | null },
): Promise<Array<VulnerabilityRow & { sort_key: string }>> {
  let query = filtered(db, q).selectAll().select(sortKeyText(q.spec).as('sort_key'));
  if (q.cursor) query = query.where(afterCursor(q.spec, q.cursor));
  const direction = q.spec.descending ? 'desc' : 'asc';
  return query.orderBy(sortKey(q.spec), direction).orderBy('id', direction).limit(q.limit + 1).execute();
}

export async function findVulnerability(db: Db, orgId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<VulnerabilityRow | undefined> {
  let query = db.selectFrom('vulnerabilities').selectAll().where('org_id', '=', orgId).where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export interface TriageChanges {
  status?: VulnerabilityStatus;
  resolution?: 'manual' | null;
  fixed_at?: null;
  false_positive?: boolean;
  notes?: string;
}

export async function updateVulnerability(db: Db, orgId: string, id: string, changes: TriageChanges): Promise<VulnerabilityRow> {
  return db
    .updateTable('vulnerabilities')
    .set({ ...changes, updated_at: sql<Date>`now()` })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The vulnerabilities a scan saw. */
export async function vulnerabilitiesOfScan(db: Db, scanId: string): Promise<VulnerabilityRow[]> {
  return db
    .selectFrom('vulnerabilities')
    .selectAll()
    .where('id', 'in', (eb) => eb.selectFrom('scan_findings').select('vulnerability_id').where('scan_id', '=', scanId))
    .orderBy('id')
    .execute();
}
