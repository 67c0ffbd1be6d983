// Reads a site's traffic record back for a replay (../impact/replay.ts), in arrival order, a page
// of batches at a time so that a day of traffic is never held in memory at once; kept values are
// opened as their batch is read. Batches written by different gateway processes overlap in time,
// so their requests are merged: a request is handed out once no batch still unread can hold an
// earlier one (batches are read in order of their first request).
import type { Db } from '../../platform/db/database.ts';
import { decodeBatch } from './record-batch.ts';
import type { RecordedValues, TrafficRecord } from './traffic-record.ts';

/** Batch rows fetched per query (a batch holds about a second of one process's requests). */
const PAGE = 64;
/** A batch spans about a second (the writer's flush); one starting this long before a window cannot reach into it. */
const MAX_BATCH_SPAN_MS = 10 * 60_000;

export interface TrafficWindow {
  since: number;
  until: number;
}

/** Opens a sealed values column (the server's SecretBox, bound to the site). */
export type OpenValues = (sealed: string, siteId: string) => string;

interface BatchRow {
  at: Date;
  records: string;
  values_sealed: string | null;
}

/** Batches whose first request is in [from, until), oldest first, at most `size`. */
function page(db: Db, siteId: string, window: TrafficWindow, from: number, size: number): Promise<BatchRow[]> {
  return db
    .selectFrom('shield_traffic')
    .select(['at', 'records', 'values_sealed'])
    .where('site_id', '=', siteId)
    .where('at', '>=', new Date(from))
    .where('at', '<', new Date(window.until))
    .where('until_at', '>=', new Date(window.since))
    .orderBy('at')
    .limit(size)
    .execute();
}

function decode(row: BatchRow, siteId: string, open: OpenValues): TrafficRecord[] {
  let values: Record<string, RecordedValues> | null = null;
  if (row.values_sealed !== null) {
    try {
      values = JSON.parse(open(row.values_sealed, siteId)) as Record<string, RecordedValues>;
    } catch {
      // Sealed under another key (AEGIS_SECRET_KEY changed): replayed on its metadata alone.
      values = null;
    }
  }
  return decodeBatch(siteId, row.records, values);
}

/** Requests of several batches, each in arrival order, handed out merged. */
class Merge {
  readonly #cursors: { records: TrafficRecord[]; next: number }[] = [];

  add(records: TrafficRecord[]): void {
    // A batch is written in arrival order, but a request's `at` is when it arrived and it is added
    // when answered: a slow request comes after faster ones that arrived later.
    records.sort((a, b) => a.at - b.at);
    if (records.length > 0) this.#cursors.push({ records, next: 0 });
  }

  /** Requests that arrived before `bound` (all, when undefined), in arrival order. */
  *drain(bound?: number): Generator<TrafficRecord> {
    for (;;) {
      let best = -1;
      let bestAt = Number.POSITIVE_INFINITY;
      for (let i = 0; i < this.#cursors.length; i++) {
        const cursor = this.#cursors[i]!;
        const at = cursor.records[cursor.next]!.at;
        if (at < bestAt) {
          bestAt = at;
          best = i;
        }
      }
      if (best < 0 || (bound !== undefined && bestAt >= bound)) return;
      const cursor = this.#cursors[best]!;
      yield cursor.records[cursor.next++]!;
      if (cursor.next === cursor.records.length) this.#cursors.splice(best, 1);
    }
  }
}

/**
 * The site's requests of the window, in arrival order (those of batches overlapping its edges
 * included: the replay keeps what falls inside). Pages continue from the last page's final
 * instant, re-read whole, so no batch is lost or repeated however many share it.
 */
export async function* readTraffic(db: Db, siteId: string, window: TrafficWindow, open: OpenValues, pageSize = PAGE): AsyncGenerator<TrafficRecord> {
  const merge = new Merge();
  let from = window.since - MAX_BATCH_SPAN_MS;
  for (;;) {
    let rows = await page(db, siteId, window, from, pageSize);
    const full = rows.length === pageSize;
    if (full) {
      const last = rows[rows.length - 1]!.at.getTime();
      const before = rows.findIndex((row) => row.at.getTime() >= last);
      if (before > 0) {
        rows = rows.slice(0, before);
        from = last;
      } else {
        // A whole page of batches starting in one millisecond: read that millisecond whole.
        rows = await page(db, siteId, window, last, Number.MAX_SAFE_INTEGER).then((all) => all.filter((row) => row.at.getTime() < last + 1));
        from = last + 1;
      }
    }
    for (const row of rows) {
      // No batch after this one holds a request that arrived before it began.
      yield* merge.drain(row.at.getTime());
      merge.add(decode(row, siteId, open));
    }
    if (!full) break;
  }
  yield* merge.drain();
}

/** When the site's record begins (its oldest request still kept), or null when it has none. */
export async function recordedSince(db: Db, siteId: string): Promise<number | null> {
  const row = await db.selectFrom('shield_traffic').select((eb) => eb.fn.min('at').as('first')).where('site_id', '=', siteId).executeTakeFirst();
  return row?.first ? new Date(row.first).getTime() : null;
}
