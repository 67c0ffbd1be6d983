// Reads a site's traffic record back for a replay (replay.ts), oldest first, in slices of time so
// that a day of traffic is never held in memory at once; kept values are opened as they are read.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import type { DecisionAction, RuleKind } from '../decision.ts';
import type { RecordedValues, TrafficRecord, ValuesReason } from './traffic-record.ts';

/** Rows fetched per query: a slice of time is split further when it holds more. */
const PAGE = 20_000;

export interface TrafficWindow {
  since: number;
  until: number;
}

/** Opens a sealed values column (the server's SecretBox, bound to the site). */
export type OpenValues = (sealed: string, siteId: string) => string;

/**
 * The site's requests in [since, until), in arrival order. Pages by (at, ctid) — the physical row
 * id breaks ties between requests of the same millisecond — so memory stays at one page.
 */
type Cursor = { at: Date; tid: string } | null;

/** One page of rows after `after`, in (at, row id) order. */
function page(db: Db, siteId: string, window: TrafficWindow, after: Cursor) {
  const tid = sql<string>`tableoid::text || ':' || ctid::text`;
  return db
    .selectFrom('shield_traffic')
    .select(['at', 'client_ip', 'network', 'asn', 'country', 'method', 'path', 'status', 'latency_ms', 'has_session', 'api_keys', 'action', 'rule_kind', 'rule_id', 'would', 'values_reason', 'values_sealed', tid.as('tid')])
    .where('site_id', '=', siteId)
    .where('at', '>=', after ? after.at : new Date(window.since))
    .where('at', '<', new Date(window.until))
    .$if(after !== null, (q) => q.where(sql<boolean>`(at, tableoid::text || ':' || ctid::text) > (${after?.at}, ${after?.tid})`))
    .orderBy('at')
    .orderBy(tid)
    .limit(PAGE)
    .execute();
}

export async function* readTraffic(db: Db, siteId: string, window: TrafficWindow, open: OpenValues): AsyncGenerator<TrafficRecord> {
  let after: Cursor = null;
  for (;;) {
    const rows = await page(db, siteId, window, after);
    for (const row of rows) {
      let values: RecordedValues | null = null;
      if (row.values_sealed !== null) {
        try {
          values = JSON.parse(open(row.values_sealed, siteId)) as RecordedValues;
        } catch {
          // Sealed under another key (AEGIS_SECRET_KEY changed): replayed on its metadata alone.
          values = null;
        }
      }
      yield {
        siteId,
        at: row.at.getTime(),
        clientIp: row.client_ip,
        network: row.network,
        asn: row.asn,
        country: row.country,
        method: row.method,
        path: row.path,
        status: row.status,
        latencyMs: row.latency_ms,
        hasSession: row.has_session,
        apiKeys: row.api_keys ? row.api_keys.split(' ') : [],
        action: row.action as DecisionAction,
        ruleKind: row.rule_kind as RuleKind | null,
        ruleId: row.rule_id,
        would: row.would as TrafficRecord['would'],
        values,
        valuesReason: values ? (row.values_reason as ValuesReason | null) : null,
      };
    }
    if (rows.length < PAGE) return;
    const last = rows[rows.length - 1]!;
    after = { at: last.at, tid: last.tid };
  }
}

/** When the site's record begins (its oldest request still kept), or null when it has none. */
export async function recordedSince(db: Db, siteId: string): Promise<number | null> {
  const row = await db.selectFrom('shield_traffic').select((eb) => eb.fn.min('at').as('first')).where('site_id', '=', siteId).executeTakeFirst();
  return row?.first ? new Date(row.first).getTime() : null;
}
