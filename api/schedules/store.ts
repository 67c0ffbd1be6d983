// Scan schedules in the database.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import type { ScanScheduleRow } from '../../platform/db/schema.ts';
import { newId } from '../../platform/ids.ts';
import { jsonColumns } from '../../platform/resources/json-columns.ts';
import { labelsContain } from '../../platform/resources/labels.ts';
import { iso, isoOrNull } from '../../platform/resources/timestamps.ts';
import type { ScanType } from '../../schemas/checks/schedule.ts';
import { livemodeOf } from '../../platform/db/environments.ts';

export interface ScheduleFields {
  name: string;
  scan_type: ScanType;
  target: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  config: Record<string, unknown>;
  labels: Record<string, string>;
  next_run_at: Date | null;
}

export interface ScheduleListQuery {
  orgId: string;
  after: string | null;
  limit: number;
  labels?: Record<string, string> | undefined;
  scanTypes?: string[] | undefined;
  enabled?: boolean | undefined;
}

export function toSchedule(row: ScanScheduleRow) {
  return {
    id: row.id,
    livemode: livemodeOf(row.org_id),
    name: row.name,
    scan_type: row.scan_type as ScanType,
    target: row.target,
    cron: row.cron,
    timezone: row.timezone,
    enabled: row.enabled,
    config: row.config,
    next_run_at: isoOrNull(row.next_run_at),
    labels: row.labels,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export async function listSchedules(db: Db, q: ScheduleListQuery): Promise<ScanScheduleRow[]> {
  let query = db.selectFrom('scan_schedules').selectAll().where('org_id', '=', q.orgId);
  if (q.after) query = query.where('id', '<', q.after);
  if (q.labels) query = query.where(labelsContain('labels', q.labels));
  if (q.scanTypes) query = query.where('scan_type', 'in', q.scanTypes);
  if (q.enabled !== undefined) query = query.where('enabled', '=', q.enabled);
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}

/**
 * `forUpdate` locks the row until the transaction ends: an update validates the merged old and new
 * values (a target must suit the scan type), which is only sound if nobody changes the row meanwhile.
 */
export async function findSchedule(db: Db, orgId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<ScanScheduleRow | undefined> {
  let query = db.selectFrom('scan_schedules').selectAll().where('org_id', '=', orgId).where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function insertSchedule(db: Db, orgId: string, fields: ScheduleFields): Promise<ScanScheduleRow> {
  return db
    .insertInto('scan_schedules')
    .values({ id: newId('sched'), org_id: orgId, ...jsonColumns(fields, ['config', 'labels']) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateSchedule(db: Db, orgId: string, id: string, changes: Partial<ScheduleFields>): Promise<ScanScheduleRow | undefined> {
  return db
    .updateTable('scan_schedules')
    .set({ ...jsonColumns(changes, ['config', 'labels']), updated_at: sql<Date>`now()` })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteSchedule(db: Db, orgId: string, id: string): Promise<ScanScheduleRow | undefined> {
  return db.deleteFrom('scan_schedules').where('org_id', '=', orgId).where('id', '=', id).returningAll().executeTakeFirst();
}
