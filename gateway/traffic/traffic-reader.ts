// Reads a site's traffic record back for a replay (../impact/replay.ts), oldest first, a page at a
// time so that a day of traffic is never held in memory at once; kept values are opened as read.
//
// Each row comes back as one text value, its fields joined by U+001F: on the embedded database
// every column of every row costs a conversion on the way out of it, and one column per row reads
// a million requests several times faster than eighteen.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import type { DecisionAction, RuleKind } from '../decision.ts';
import type { RecordedValues, TrafficRecord, ValuesReason } from './traffic-record.ts';

/** Rows fetched per query. */
const PAGE = 20_000;
const SEPARATOR = '\u001f';
const NULL = '\\N';

export interface TrafficWindow {
  since: number;
  until: number;
}

/** Opens a sealed values column (the server's SecretBox, bound to the site). */
export type OpenValues = (sealed: string, siteId: string) => string;

const nullable = (text: string | undefined): string | null => (text === undefined || text === NULL ? null : text);

/** Rows with `at` in [from, until), oldest first, at most PAGE; each one text line (see the header). */
async function page(db: Db, siteId: string, from: number, until: number, size: number): Promise<string[]> {
  const field = (column: string) => sql.raw(`coalesce(${column}::text, '${NULL}')`);
  const result = await sql<{ r: string }>`
    select concat_ws(${SEPARATOR},
      floor(extract(epoch from at) * 1000)::bigint, client_ip, network, ${field('asn')}, ${field('country')}, method,
      replace(path, ${SEPARATOR}, '%1F'), status, latency_ms, has_session, ${field('api_keys')}, action,
      ${field('rule_kind')}, ${field('rule_id')}, ${field('would')}, ${field('values_reason')}, ${field('values_sealed')}) as r
    from shield_traffic
    where site_id = ${siteId} and at >= ${new Date(from)} and at < ${new Date(until)}
    order by at
    limit ${size}`.execute(db);
  return result.rows.map((row) => row.r);
}

function parse(line: string, siteId: string, open: OpenValues): TrafficRecord {
  const f = line.split(SEPARATOR);
  const sealed = nullable(f[16]);
  let values: RecordedValues | null = null;
  if (sealed !== null) {
    try {
      values = JSON.parse(open(sealed, siteId)) as RecordedValues;
    } catch {
      // Sealed under another key (AEGIS_SECRET_KEY changed): replayed on its metadata alone.
      values = null;
    }
  }
  const asn = nullable(f[3]);
  const apiKeys = nullable(f[10]);
  return {
    siteId,
    at: Number(f[0]),
    clientIp: f[1] ?? '',
    network: f[2] ?? '',
    asn: asn === null ? null : Number(asn),
    country: nullable(f[4]),
    method: f[5] ?? 'GET',
    path: f[6] ?? '/',
    status: Number(f[7]),
    latencyMs: Number(f[8]),
    hasSession: f[9] === 'true' || f[9] === 't',
    apiKeys: apiKeys ? apiKeys.split(' ') : [],
    action: f[11] as DecisionAction,
    ruleKind: nullable(f[12]) as RuleKind | null,
    ruleId: nullable(f[13]),
    would: nullable(f[14]) as TrafficRecord['would'],
    values,
    valuesReason: values ? (nullable(f[15]) as ValuesReason | null) : null,
  };
}

/**
 * The site's requests in [since, until), in arrival order. Pages continue from the last page's
 * final millisecond, re-read whole: the rows of that millisecond are yielded with the next page,
 * so none is lost or repeated however many share it. The next page is asked for before this one is
 * handed out, so that on PostgreSQL the database reads it while the caller replays this one.
 */
export async function* readTraffic(db: Db, siteId: string, window: TrafficWindow, open: OpenValues, pageSize = PAGE): AsyncGenerator<TrafficRecord> {
  const atOf = (line: string) => Number(line.slice(0, line.indexOf(SEPARATOR)));
  // A page asked for ahead may be left unread (the caller stopped): its failure is then nobody's.
  const ahead = (from: number) => {
    const next = page(db, siteId, from, window.until, pageSize);
    next.catch(() => undefined);
    return next;
  };
  let pending: Promise<string[]> | null = page(db, siteId, window.since, window.until, pageSize);
  while (pending) {
    let lines = await pending;
    pending = null;
    if (lines.length === pageSize) {
      const last = atOf(lines[lines.length - 1]!);
      const before = lines.findIndex((line) => atOf(line) >= last);
      if (before > 0) {
        // This page up to its final millisecond; that millisecond comes first in the next page.
        lines = lines.slice(0, before);
        pending = ahead(last);
      } else {
        // A whole page within one millisecond (a page's worth of requests at once): read that millisecond whole.
        lines = await page(db, siteId, last, last + 1, Number.MAX_SAFE_INTEGER);
        pending = ahead(last + 1);
      }
    }
    for (const line of lines) yield parse(line, siteId, open);
  }
}

/** When the site's record begins (its oldest request still kept), or null when it has none. */
export async function recordedSince(db: Db, siteId: string): Promise<number | null> {
  const row = await db.selectFrom('shield_traffic').select((eb) => eb.fn.min('at').as('first')).where('site_id', '=', siteId).executeTakeFirst();
  return row?.first ? new Date(row.first).getTime() : null;
}
