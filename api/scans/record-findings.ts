// Stores what a scan found, in one transaction with the scan's end:
//   - a finding whose fingerprint the target already has updates that vulnerability (last seen,
//     latest evidence) — and reopens it if it had been resolved as fixed;
//   - a new fingerprint becomes a new vulnerability;
//   - a vulnerability of the target that this scan did not see is resolved as `fixed`.
// Triage decisions (acknowledged, accepted risk, false positive, notes) survive rescans.
// Each of the three is also an event (created, updated when reopened, resolved), returned to the
// caller to record in the same transaction.
import { sql } from 'kysely';
import type { NewEvent } from '../../platform/events/event-store.ts';
import { vulnerabilityChanged, vulnerabilityCreated } from '../findings/events.ts';
import type { VulnerabilityRow } from '../findings/store.ts';
import type { Db } from '../../platform/db/database.ts';
import { newId } from '../../platform/ids.ts';
import type { Finding as CodeFinding, UrlLocation } from '../../scanners/types.ts';
import { SEVERITIES } from './schemas.ts';
import type { ScanRow } from './store.ts';

const CHUNK = 500;

/** Code scanners' and URL scanners' findings alike. */
type Finding = CodeFinding | CodeFinding<UrlLocation>;

export interface RecordedFindings {
  summary: Record<string, number>;
  /** Vulnerabilities first found by this scan. */
  created: number;
  /** Vulnerabilities of the target resolved because this scan no longer found them. */
  fixed: number;
  /** What changed, as events: created, reopened (updated) and fixed (resolved) findings. */
  events: NewEvent[];
}

/** Rows by id, read in chunks. */
async function rowsById(trx: Db, ids: readonly string[]): Promise<VulnerabilityRow[]> {
  const rows: VulnerabilityRow[] = [];
  for (let i = 0; i < ids.length; i += CHUNK) {
    rows.push(...(await trx.selectFrom('vulnerabilities').selectAll().where('id', 'in', ids.slice(i, i + CHUNK)).orderBy('id').execute()));
  }
  return rows;
}

/** One finding per fingerprint: a scanner may report the same problem twice (two lockfiles, two rules). */
function unique(findings: readonly Finding[]): Finding[] {
  const seen = new Map<string, Finding>();
  for (const finding of findings) if (!seen.has(finding.fingerprint)) seen.set(finding.fingerprint, finding);
  return [...seen.values()];
}

export async function recordFindings(trx: Db, scan: ScanRow, findings: readonly Finding[]): Promise<RecordedFindings> {
  const distinct = unique(findings);
  const summary: Record<string, number> = Object.fromEntries(SEVERITIES.map((s) => [s, 0]));
  const createdIds: string[] = [];
  const ids: string[] = [];
  // Fixed findings this scan may reopen, as they were (their reopening is a `vulnerability.updated`).
  const fixedBefore = new Map(
    (
      await trx
        .selectFrom('vulnerabilities')
        .selectAll()
        .where('org_id', '=', scan.org_id)
        .where('scan_type', '=', scan.scan_type)
        .where('target', '=', scan.target)
        .where('resolution', '=', 'fixed')
        .execute()
    ).map((row) => [row.id, row]),
  );
  for (let i = 0; i < distinct.length; i += CHUNK) {
    const rows = distinct.slice(i, i + CHUNK).map((f) => ({
      id: newId('vuln'),
      org_id: scan.org_id,
      scan_type: scan.scan_type,
      target: scan.target,
      fingerprint: f.fingerprint,
      rule_id: f.rule_id,
      title: f.title,
      severity: f.severity,
      cwe: f.cwe,
      location: JSON.stringify(f.location),
      evidence: f.evidence,
      details: JSON.stringify(f.details),
      status: 'open',
      first_scan_id: scan.id,
      last_scan_id: scan.id,
      first_seen_at: sql<Date>`now()`,
      last_seen_at: sql<Date>`now()`,
    }));
    const upserted = await trx
      .insertInto('vulnerabilities')
      .values(rows)
      .onConflict((oc) =>
        oc.constraint('vulnerabilities_identity').doUpdateSet((eb) => ({
          rule_id: eb.ref('excluded.rule_id'),
          title: eb.ref('excluded.title'),
          severity: eb.ref('excluded.severity'),
          cwe: eb.ref('excluded.cwe'),
          location: eb.ref('excluded.location'),
          evidence: eb.ref('excluded.evidence'),
          details: eb.ref('excluded.details'),
          last_scan_id: eb.ref('excluded.last_scan_id'),
          last_seen_at: sql<Date>`now()`,
          // Found again after being fixed: the problem is back.
          status: sql<string>`case when vulnerabilities.resolution = 'fixed' then 'open' else vulnerabilities.status end`,
          fixed_at: sql<Date | null>`case when vulnerabilities.resolution = 'fixed' then null else vulnerabilities.fixed_at end`,
          resolution: sql<string | null>`case when vulnerabilities.resolution = 'fixed' then null else vulnerabilities.resolution end`,
          updated_at: sql<Date>`now()`,
        })),
      )
      // xmax = 0 only for a freshly inserted row: counts what is new without a second query.
      .returning(['id', 'severity', sql<boolean>`(xmax = 0)`.as('inserted')])
      .execute();
    for (const row of upserted) {
      ids.push(row.id);
      summary[row.severity] = (summary[row.severity] ?? 0) + 1;
      if (row.inserted) createdIds.push(row.id);
    }
  }
  for (let i = 0; i < ids.length; i += CHUNK) {
    await trx
      .insertInto('scan_findings')
      .values(ids.slice(i, i + CHUNK).map((id) => ({ scan_id: scan.id, vulnerability_id: id })))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
  // The findings this scan no longer sees, as they were (locked until the update below resolves them).
  const fixedRows = await trx
    .selectFrom('vulnerabilities')
    .selectAll()
    .where('org_id', '=', scan.org_id)
    .where('scan_type', '=', scan.scan_type)
    .where('target', '=', scan.target)
    .where('status', '!=', 'resolved')
    .where('id', 'not in', (eb) => eb.selectFrom('scan_findings').select('vulnerability_id').where('scan_id', '=', scan.id))
    .forUpdate()
    .execute();
  const fixed: VulnerabilityRow[] = [];
  for (let i = 0; i < fixedRows.length; i += CHUNK) {
    const chunk = fixedRows.slice(i, i + CHUNK).map((r) => r.id);
    fixed.push(
      ...(await trx
        .updateTable('vulnerabilities')
        .set({ status: 'resolved', resolution: 'fixed', fixed_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
        .where('id', 'in', chunk)
        .returningAll()
        .execute()),
    );
  }
  const reopened = ids.filter((id) => fixedBefore.has(id));
  const changed = await rowsById(trx, reopened);
  const fixedById = new Map(fixedRows.map((r) => [r.id, r]));
  const events: NewEvent[] = [
    ...(await rowsById(trx, createdIds)).map(vulnerabilityCreated),
    ...changed.map((after) => vulnerabilityChanged(fixedBefore.get(after.id)!, after)),
    ...fixed.map((after) => vulnerabilityChanged(fixedById.get(after.id)!, after)),
  ].filter((event): event is NewEvent => event !== undefined);
  summary.total = distinct.length;
  return { summary, created: createdIds.length, fixed: fixed.length, events };
}
