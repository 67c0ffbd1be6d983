// Shield blocks and challenges as platform events without a flood: the decision recorder adds each
// batch's blocks and challenges to `shield_alert_windows` (gateway/events/alert-windows.ts), and a
// closer here turns every row whose window has ended into one `shield.block` / `shield.challenge`
// event. A 10 000-request attack on one rule is then about one event per window instead of 10 000
// events (and webhook deliveries), and the events' counts add up to exactly the requests blocked.
import { sql } from 'kysely';
import type { BaseLogger } from 'pino';
import type { Db } from '../../platform/db/database.ts';
import { Ticker } from '../../platform/jobs/ticker.ts';
import type { AlertSample } from '../../gateway/events/alert-windows.ts';
import { iso } from '../../platform/resources/timestamps.ts';
import { announceDeliveries, recordEvents, type NewEvent } from '../../platform/events/event-store.ts';

/**
 * How long after a window's end it is closed: the time a batch's statement may take between
 * reading the clock and writing its row. A batch slower than that (waiting on a lock for longer)
 * would write a fresh row for a window already emitted: a second event for that window, carrying
 * only the late requests — counted once still, but emitted twice.
 */
export const CLOSE_GRACE_MS = 1_000;

/** Rows one transaction of the closer takes; the rest wait for the next round. */
const CLOSE_BATCH = 1_000;

/**
 * Emits one event per window that has ended and deletes the window, in one transaction. Deleting
 * is what makes a window emitted once: of two closers that race, one deletes and returns the row,
 * the other skips it (SKIP LOCKED; a row a batch is still updating waits for the next round).
 * Returns the number of events.
 */
export async function closeShieldAlerts(db: Db, graceMs = CLOSE_GRACE_MS): Promise<number> {
  let total = 0;
  for (;;) {
    const { events, deliveries } = await db.transaction().execute(async (trx) => {
      const { rows } = await sql<ClosedWindow>`
        delete from shield_alert_windows w
        using (
          select site_id, action, rule_kind, rule_id, window_start from shield_alert_windows
          where window_end <= now() - ${graceMs}::integer * interval '1 millisecond'
          order by window_end
          limit ${CLOSE_BATCH}::integer
          for update skip locked
        ) due
        where w.site_id = due.site_id and w.action = due.action and w.rule_kind = due.rule_kind and w.rule_id = due.rule_id and w.window_start = due.window_start
        returning w.*
      `.execute(trx);
      if (rows.length === 0) return { events: 0, deliveries: 0 };
      // Events in window order, so that a receiver sees an attack unfold in order.
      rows.sort((a, b) => a.window_start.getTime() - b.window_start.getTime() || a.site_id.localeCompare(b.site_id) || a.rule_id.localeCompare(b.rule_id));
      const recorded = await recordEvents(trx, rows.map(alertEvent));
      return { events: rows.length, deliveries: recorded.deliveries };
    });
    announceDeliveries(db, deliveries);
    total += events;
    if (events < CLOSE_BATCH) return total;
  }
}

interface ClosedWindow {
  site_id: string;
  org_id: string;
  action: string;
  rule_kind: string;
  rule_id: string;
  window_start: Date;
  window_end: Date;
  count: string | number;
  samples: AlertSample[] | string;
  first_at: Date;
  last_at: Date;
}

/** The event of a closed window; `data.object` follows ShieldAlertObject (catalogue.ts). */
function alertEvent(row: ClosedWindow): NewEvent {
  const samples = typeof row.samples === 'string' ? (JSON.parse(row.samples) as AlertSample[]) : row.samples;
  return {
    orgId: row.org_id,
    type: row.action === 'challenge' ? 'shield.challenge' : 'shield.block',
    object: {
      object: 'shield_alert',
      site_id: row.site_id,
      action: row.action,
      rule_kind: row.rule_kind,
      rule_id: row.rule_id,
      count: Number(row.count),
      window_start: iso(new Date(row.window_start)),
      window_end: iso(new Date(row.window_end)),
      first_at: iso(new Date(row.first_at)),
      last_at: iso(new Date(row.last_at)),
      samples,
    },
  };
}

export interface ShieldAlertCloserOptions {
  db: Db;
  /** Only errors are logged (a pino or Fastify logger). */
  log: Pick<BaseLogger, 'error'>;
  /** The alert window (ms): windows are closed every half window, at least once a second. */
  windowMs: number;
}

/**
 * Closes ended windows every half window (at most a second apart: an alert then leaves within
 * about a second of its window's end plus the grace) until stopped; any number of processes may run one.
 */
export function startShieldAlertCloser(options: ShieldAlertCloserOptions): Ticker {
  const intervalMs = Math.max(50, Math.min(1_000, Math.floor(options.windowMs / 2)));
  return new Ticker(() => closeShieldAlerts(options.db), intervalMs, (err) => options.log.error({ err }, 'shield: closing alert windows failed')).start();
}
