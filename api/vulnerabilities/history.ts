// What happened to a finding (GET /api/v1/vulnerabilities/:id/history), built from two records the
// API already keeps:
// - its events (vulnerability.created / updated / resolved): every change of a watched field, with
//   the value before (`previous_attributes`) and after — whoever made it: a person, a scan that
//   resolved or reopened it, a verify-fix, a ticket closed at the tracker;
// - the audit log: who asked for what (a triage change, verify-fix, a ticket, an AI triage, a
//   virtual patch), including requests that change no field of the finding.
// A change made through the API records its event and its audit entry in one transaction, so both
// carry the same `now()`: the event is shown with that entry's actor, and the entry is not repeated.
// Events are kept 30 days (EVENT_RETENTION_DAYS); older changes remain as their audit entries.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import { badRequest } from '../../platform/http/errors.ts';

const VULNERABILITY_EVENTS = ['vulnerability.created', 'vulnerability.updated', 'vulnerability.resolved'];

export interface HistoryCursor {
  key: string;
  id: string;
}

interface HistoryRow {
  id: string;
  created_at: Date;
  at_key: string;
  type: string;
  data: { object?: Record<string, unknown>; previous_attributes?: Record<string, unknown> } | null;
  actor_type: string | null;
  actor_id: string | null;
  actor_name: string | null;
  action: string | null;
  metadata: Record<string, unknown> | null;
}

export async function historyOf(db: Db, orgId: string, vulnerabilityId: string, limit: number, cursor: HistoryCursor | null): Promise<HistoryRow[]> {
  const after = cursor ? sql`(x.created_at, x.id) < (${cursor.key}::timestamptz, ${cursor.id})` : sql`true`;
  const { rows } = await sql<HistoryRow>`
    with related as (
      select * from audit_events a
      where a.org_id = ${orgId}
        and ((a.target_type = 'vulnerability' and a.target_id = ${vulnerabilityId})
          or (a.action = 'virtual_patch.created' and a.metadata->>'vulnerability_id' = ${vulnerabilityId}))
    ),
    changes as (
      select e.id, e.created_at, e.type, e.data,
        (select r.id from related r where r.created_at = e.created_at order by r.id limit 1) as audit_id
      from events e
      where e.org_id = ${orgId}
        and e.type in (${sql.join(VULNERABILITY_EVENTS)})
        and e.data->'object'->>'id' = ${vulnerabilityId}
    ),
    entries as (
      select id, created_at, type, data, audit_id from changes
      union all
      select r.id, r.created_at, r.action, null::jsonb, r.id from related r
      where not exists (select 1 from changes c where c.audit_id = r.id)
    )
    select x.id, x.created_at, x.created_at::text as at_key, x.type, x.data,
      a.actor_type, a.actor_id, coalesce(u.email, k.name) as actor_name, a.action, a.metadata
    from entries x
    left join related a on a.id = x.audit_id
    left join users u on a.actor_type = 'user' and u.id = a.actor_id
    left join api_keys k on a.actor_type = 'api_key' and k.id = a.actor_id
    where ${after}
    order by x.created_at desc, x.id desc
    limit ${limit + 1}`.execute(db);
  return rows;
}

/** One entry as the API returns it. */
export function toHistoryEntry(row: HistoryRow) {
  const object = row.data?.object ?? {};
  const previous = row.data?.previous_attributes ?? {};
  return {
    id: row.id,
    kind: row.id.startsWith('evt_') ? ('change' as const) : ('action' as const),
    type: row.type,
    action: row.action,
    at: (row.created_at instanceof Date ? row.created_at : new Date(row.created_at)).toISOString(),
    actor: row.actor_type && row.actor_id ? { type: row.actor_type as 'user' | 'api_key' | 'system', id: row.actor_id, name: row.actor_name } : null,
    changes: Object.keys(previous)
      .sort()
      .map((field) => ({ field, from: previous[field] ?? null, to: object[field] ?? null })),
    metadata: row.metadata ?? {},
  };
}

const PREFIX = 'h1';
const ID = /^(evt|aud)_[0-9a-z]{26}$/;
const TIMESTAMP_TEXT = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:\d{2})?)?$/;

export function encodeHistoryCursor(row: { at_key: string; id: string }): string {
  return Buffer.from(JSON.stringify([PREFIX, row.at_key, row.id]), 'utf8').toString('base64url');
}

export function decodeHistoryCursor(cursor: string | undefined): HistoryCursor | null {
  if (cursor === undefined) return null;
  const invalid = () => badRequest('cursor is not valid; pass the value of pagination.next unchanged', { field: 'cursor' });
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 3 || parsed[0] !== PREFIX) throw invalid();
  const [, key, id] = parsed as unknown[];
  if (typeof key !== 'string' || typeof id !== 'string' || !TIMESTAMP_TEXT.test(key) || !ID.test(id)) throw invalid();
  return { key, id };
}
