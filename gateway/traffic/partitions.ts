// The traffic record's day partitions (migration 0020): shield_traffic_YYYYMMDD holds the requests
// of one UTC day. The writer creates a day's partition before its first row; housekeeping drops
// whole days past retention and clears kept values sooner (docs/impact-preview.md, "Retention").
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';

const DAY = 86_400_000;

/** `20261129`: the UTC day of an instant, as partitions are named. */
export function trafficPartitionDay(at: number): string {
  return new Date(at).toISOString().slice(0, 10).replaceAll('-', '');
}

const dayStart = (day: string): string => `${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6, 8)} 00:00:00+00`;
const partitionName = (day: string): string => {
  if (!/^\d{8}$/.test(day)) throw new Error(`not a partition day: ${day}`);
  return `shield_traffic_${day}`;
};

/** PostgreSQL's answers when another process created the same partition at the same moment. */
const RACED = new Set(['42P07', '23505']);

/** Creates the day's partition unless it exists (several gateways may race to it: the loser finds it made). */
export async function ensureTrafficPartition(db: Db, day: string): Promise<void> {
  const next = trafficPartitionDay(Date.parse(`${dayStart(day).slice(0, 10)}T00:00:00Z`) + DAY);
  try {
    await sql
      .raw(`create table if not exists ${partitionName(day)} partition of shield_traffic for values from ('${dayStart(day)}') to ('${dayStart(next)}')`)
      .execute(db);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code !== 'string' || !RACED.has(code)) throw err;
  }
}

/** The days that have a partition, oldest first. */
export async function trafficPartitionDays(db: Db): Promise<string[]> {
  const rows = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i
    join pg_class c on c.oid = i.inhrelid
    join pg_class p on p.oid = i.inhparent
    where p.relname = 'shield_traffic'`.execute(db);
  return rows.rows
    .map((r) => r.name.slice('shield_traffic_'.length))
    .filter((day) => /^\d{8}$/.test(day))
    .sort();
}

/**
 * Retention: drops the partitions of days that ended more than `days` days ago, and clears the
 * values of requests older than `valueHours` hours. Returns the days dropped.
 */
export async function pruneTraffic(db: Db, options: { days: number; valueHours: number; now?: number }): Promise<string[]> {
  const now = options.now ?? Date.now();
  const oldestKept = trafficPartitionDay(now - options.days * DAY);
  const dropped: string[] = [];
  for (const day of await trafficPartitionDays(db)) {
    if (day >= oldestKept) break;
    await sql.raw(`drop table if exists ${partitionName(day)}`).execute(db);
    dropped.push(day);
  }
  await db
    .updateTable('shield_traffic')
    .set({ values_sealed: null })
    .where('values_sealed', 'is not', null)
    .where('until_at', '<', new Date(now - options.valueHours * 3_600_000))
    .execute();
  return dropped;
}
