// Counting a batch's blocks and challenges into their alert windows (`shield_alert_windows`), in the
// batch's own transaction: the gateway's half of the Shield alerts. The API's events area closes
// ended windows into `shield.block` / `shield.challenge` events (api/events/shield-alerts.ts).
//
// Windows are taken from the database's clock when a batch is written, not from the requests'
// times: every gateway floors the same clock, and a late batch (a retry, a slow flush) lands in the
// window open now instead of reopening one that was already closed and emitted.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import type { DecisionEvent } from '../decision.ts';

/** Samples an alert window keeps (the first ones written). */
export const MAX_SAMPLES = 5;

/** What a window row keeps of a request: the decision log's id and the request's outline. */
export interface AlertSample {
  id: string;
  time: string;
  client_ip: string;
  method: string;
  host: string;
  path: string;
  status: number;
}

/** One site, action and rule's blocks (or challenges) of a batch, not yet in a window. */
export interface AlertDelta {
  site_id: string;
  org_id: string;
  action: 'block' | 'challenge';
  rule_kind: string;
  rule_id: string;
  count: number;
  samples: AlertSample[];
  /** Epoch ms of the earliest and latest request counted. */
  first_at: number;
  last_at: number;
}

export type AlertDeltas = Map<string, AlertDelta>;

export const isAlerted = (action: DecisionEvent['action']): action is 'block' | 'challenge' => action === 'block' || action === 'challenge';

/**
 * Counts a block or challenge into `deltas` (anything else is ignored). `stored`: the decision's
 * row is written with this batch, so it may serve as a sample; a decision that is only counted
 * (dropped from the queue) must not, its id would lead nowhere.
 */
export function addAlert(deltas: AlertDeltas, event: DecisionEvent, stored: boolean): void {
  if (!isAlerted(event.action)) return;
  const ruleKind = event.rule_kind ?? '';
  const ruleId = event.rule_id ?? '';
  const key = `${event.site_id}\u0000${event.action}\u0000${ruleKind}\u0000${ruleId}`;
  const at = Date.parse(event.time);
  let delta = deltas.get(key);
  if (!delta) {
    delta = { site_id: event.site_id, org_id: event.org_id, action: event.action, rule_kind: ruleKind, rule_id: ruleId, count: 0, samples: [], first_at: at, last_at: at };
    deltas.set(key, delta);
  }
  delta.count += 1;
  if (at < delta.first_at) delta.first_at = at;
  if (at > delta.last_at) delta.last_at = at;
  if (stored && delta.samples.length < MAX_SAMPLES) {
    delta.samples.push({ id: event.id, time: event.time, client_ip: event.client_ip, method: event.method, host: event.host, path: event.path, status: event.status });
  }
}

/** Adds `from`'s counts to `into` without their samples (for decisions whose rows were not stored). */
export function mergeAlertCounts(into: AlertDeltas, from: AlertDeltas): void {
  for (const [key, delta] of from) {
    const existing = into.get(key);
    if (!existing) {
      into.set(key, { ...delta, samples: [] });
      continue;
    }
    existing.count += delta.count;
    existing.first_at = Math.min(existing.first_at, delta.first_at);
    existing.last_at = Math.max(existing.last_at, delta.last_at);
  }
}

/**
 * Adds a batch's blocks and challenges to the open windows, inside the batch's transaction (so
 * they are counted exactly when the batch commits). One statement; rows in key order, so that
 * gateways writing at once lock them in the same order and cannot deadlock.
 */
export async function countShieldAlerts(trx: Db, deltas: AlertDeltas, windowMs: number): Promise<void> {
  if (deltas.size === 0) return;
  const rows = [...deltas.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, d]) => ({ ...d, first_at: new Date(d.first_at).toISOString(), last_at: new Date(d.last_at).toISOString() }));
  const window = Math.max(1, Math.round(windowMs));
  // clock_timestamp(), not now(): the time of this statement, not of the transaction's start.
  await sql`
    insert into shield_alert_windows (site_id, org_id, action, rule_kind, rule_id, window_start, window_end, count, samples, first_at, last_at)
    select r.x->>'site_id', r.x->>'org_id', r.x->>'action', r.x->>'rule_kind', r.x->>'rule_id',
           w.start, w.start + ${window}::integer * interval '1 millisecond',
           (r.x->>'count')::bigint, r.x->'samples', (r.x->>'first_at')::timestamptz, (r.x->>'last_at')::timestamptz
    from jsonb_array_elements(${JSON.stringify(rows)}::jsonb) with ordinality as r(x, i)
    cross join (select to_timestamp(floor(extract(epoch from clock_timestamp()) * 1000 / ${window}::integer) * ${window}::integer / 1000.0) as start) w
    order by r.i
    on conflict (site_id, action, rule_kind, rule_id, window_start) do update set
      count = shield_alert_windows.count + excluded.count,
      samples = case when jsonb_array_length(shield_alert_windows.samples) >= ${MAX_SAMPLES}::integer then shield_alert_windows.samples else (
        select coalesce(jsonb_agg(s.x order by s.i), '[]'::jsonb)
        from (select e.x, e.i from jsonb_array_elements(shield_alert_windows.samples || excluded.samples) with ordinality as e(x, i) order by e.i limit ${MAX_SAMPLES}::integer) s
      ) end,
      first_at = least(shield_alert_windows.first_at, excluded.first_at),
      last_at = greatest(shield_alert_windows.last_at, excluded.last_at)
  `.execute(trx);
}
