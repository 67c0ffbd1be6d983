// Reads a site's traffic record back for a replay (../impact/replay.ts), in arrival order, a page
// of batches at a time so that a day of traffic is never held in memory at once; kept values are
// opened as their batch is read. Batches written by different gateway processes overlap in time,
// so their requests are merged: a request is handed out once no batch still unread can hold an
// earlier one (batches are read in order of their first request).
import type { Db } from '../../platform/db/database.ts';
import { DecodedBatch, type RecordRun } from './record-batch.ts';
import type { RecordedValues } from './traffic-record.ts';

/** Batch rows fetched per query (a batch holds up to 30 s of one process's requests: traffic-writer.ts BATCH_MS). */
const PAGE = 64;
/** A batch spans at most BATCH_MS and its slowest request; one starting this long before a window cannot reach into it. */
const MAX_BATCH_SPAN_MS = 10 * 60_000;

export interface TrafficWindow {
  since: number;
  until: number;
}

/** Opens a sealed values column (the server's SecretBox, bound to the site). */
export type OpenValues = (sealed: string, siteId: string) => string;

interface BatchRow {
  at: Date;
  columns: string | null;
  values_sealed: string | null;
}

/** Batches whose first request is in [from, until), oldest first, at most `size`. */
function page(db: Db, siteId: string, window: TrafficWindow, from: number, size: number): Promise<BatchRow[]> {
  return db
    .selectFrom('shield_traffic')
    .select(['at', 'columns', 'values_sealed'])
    // Rows of an earlier release's gateway during a rolling upgrade (migration 0022) are not read.
    .where('columns', 'is not', null)
    .where('site_id', '=', siteId)
    .where('at', '>=', new Date(from))
    .where('at', '<', new Date(window.until))
    .where('until_at', '>=', new Date(window.since))
    .orderBy('at')
    .limit(size)
    .execute();
}

function decode(row: BatchRow, siteId: string, open: OpenValues): DecodedBatch {
  let values: Record<string, RecordedValues> | null = null;
  if (row.values_sealed !== null) {
    try {
      values = JSON.parse(open(row.values_sealed, siteId)) as Record<string, RecordedValues>;
    } catch {
      // Sealed under another key (AEGIS_SECRET_KEY changed): replayed on its metadata alone.
      values = null;
    }
  }
  return new DecodedBatch(siteId, row.columns!, values);
}

/** Requests of several batches, each in arrival order, handed out merged as runs. */
class Merge {
  readonly #cursors: { batch: DecodedBatch; next: number }[] = [];

  add(batch: DecodedBatch): void {
    if (batch.length > 0) this.#cursors.push({ batch, next: 0 });
  }

  /** Requests that arrived before `bound` (all, when undefined), in arrival order, appended to `out` as runs. */
  drain(out: RecordRun[], bound?: number): void {
    const before = (cursor: { batch: DecodedBatch; next: number }): boolean => cursor.next < cursor.batch.length && (bound === undefined || cursor.batch.at(cursor.next) < bound);
    if (this.#cursors.length === 1) {
      // One process's batches (the common case): no merging, the batch's requests as one run.
      const cursor = this.#cursors[0]!;
      const from = cursor.next;
      while (before(cursor)) cursor.next++;
      if (cursor.next > from) out.push({ requests: cursor.batch, from, to: cursor.next });
      if (cursor.next === cursor.batch.length) this.#cursors.length = 0;
      return;
    }
    for (;;) {
      let best = -1;
      let bestAt = Number.POSITIVE_INFINITY;
      for (let i = 0; i < this.#cursors.length; i++) {
        const cursor = this.#cursors[i]!;
        const at = cursor.batch.at(cursor.next);
        if (at < bestAt) {
          bestAt = at;
          best = i;
        }
      }
      if (best < 0 || (bound !== undefined && bestAt >= bound)) return;
      const cursor = this.#cursors[best]!;
      const last = out[out.length - 1];
      // Consecutive requests of one batch extend its run.
      if (last?.requests === cursor.batch && last.to === cursor.next) last.to++;
      else out.push({ requests: cursor.batch, from: cursor.next, to: cursor.next + 1 });
      cursor.next++;
      if (cursor.next === cursor.batch.length) this.#cursors.splice(best, 1);
    }
  }
}

/**
 * The site's requests of the window, in arrival order, a page at a time (those of batches
 * overlapping its edges included: the replay keeps what falls inside). Pages continue from the last
 * page's final instant, re-read whole, so no batch is lost or repeated however many share it. The
 * next page is asked for before this one is handed out, so the database reads while the caller replays.
 */
export async function* readTraffic(db: Db, siteId: string, window: TrafficWindow, open: OpenValues, pageSize = PAGE): AsyncGenerator<RecordRun[]> {
  const merge = new Merge();
  let from = window.since - MAX_BATCH_SPAN_MS;
  let next: Promise<BatchRow[]> | null = page(db, siteId, window, from, pageSize);
  while (next) {
    let rows = await next;
    next = null;
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
      next = page(db, siteId, window, from, pageSize);
    }
    const out: RecordRun[] = [];
    for (const row of rows) {
      // No batch after this one holds a request that arrived before it began.
      merge.drain(out, row.at.getTime());
      merge.add(decode(row, siteId, open));
    }
    if (!next) merge.drain(out);
    if (out.length > 0) yield out;
  }
}

/** When the site's record begins (its oldest request still kept), or null when it has none. */
export async function recordedSince(db: Db, siteId: string): Promise<number | null> {
  const row = await db.selectFrom('shield_traffic').select((eb) => eb.fn.min('at').as('first')).where('site_id', '=', siteId).where('columns', 'is not', null).executeTakeFirst();
  return row?.first ? new Date(row.first).getTime() : null;
}
