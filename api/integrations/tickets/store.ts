// Ticket links in the database: one row per finding (vulnerability_tickets), the resource the API
// shows, and the state changes the jobs and the inbound sync make.
import { sql } from 'kysely';
import type { Db } from '../../../platform/db/database.ts';
import type { TicketState, VulnerabilityTicketRow } from '../../../platform/db/schema.ts';
import { iso } from '../../../platform/resources/timestamps.ts';
import type { ProviderName } from '../providers/types.ts';

/** What the caller asked for (POST …/ticket), kept on the row for the job and for a retry. */
export type TicketRequest = {
  connection: string;
  project: string;
  assignee?: string | undefined;
  labels?: string[] | undefined;
};

export function toTicket(row: VulnerabilityTicketRow) {
  const request = row.request as Partial<TicketRequest>;
  return {
    object: 'ticket' as const,
    vulnerability_id: row.vulnerability_id,
    connection: row.integration_id,
    provider: row.provider as ProviderName,
    project: typeof request.project === 'string' ? request.project : null,
    state: row.state,
    key: row.key,
    url: row.url,
    external_id: row.external_id,
    error: row.error,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export type TicketResource = ReturnType<typeof toTicket>;

/** The link as the finding shows it. */
export const ticketLink = (row: Pick<VulnerabilityTicketRow, 'provider' | 'key' | 'url' | 'state'>) => ({ provider: row.provider, key: row.key, url: row.url, state: row.state });

export async function findTicket(db: Db, orgId: string, vulnerabilityId: string, options: { forUpdate?: boolean } = {}): Promise<VulnerabilityTicketRow | undefined> {
  let query = db.selectFrom('vulnerability_tickets').selectAll().where('org_id', '=', orgId).where('vulnerability_id', '=', vulnerabilityId);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** Ticket links of these findings, by finding id (for the finding resources). */
export async function ticketLinksOf(db: Db, vulnerabilityIds: readonly string[]): Promise<Map<string, ReturnType<typeof ticketLink>>> {
  if (vulnerabilityIds.length === 0) return new Map();
  const rows = await db.selectFrom('vulnerability_tickets').select(['vulnerability_id', 'provider', 'key', 'url', 'state']).where('vulnerability_id', 'in', [...vulnerabilityIds]).execute();
  return new Map(rows.map((r) => [r.vulnerability_id, ticketLink(r)]));
}

export interface NewTicket {
  orgId: string;
  vulnerabilityId: string;
  integrationId: string;
  provider: string;
  request: TicketRequest;
  createdBy: string;
}

/** A fresh `creating` row; a concurrent second insert for the same finding fails on the primary key. */
export async function insertTicket(trx: Db, t: NewTicket): Promise<VulnerabilityTicketRow> {
  return trx
    .insertInto('vulnerability_tickets')
    .values({
      vulnerability_id: t.vulnerabilityId,
      org_id: t.orgId,
      integration_id: t.integrationId,
      provider: t.provider,
      state: 'creating',
      request: JSON.stringify(t.request),
      created_by: t.createdBy,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A failed request asked for again: the same row, back to `creating` with the new request. */
export async function retryFailedTicket(trx: Db, t: NewTicket): Promise<VulnerabilityTicketRow> {
  return trx
    .updateTable('vulnerability_tickets')
    .set({
      integration_id: t.integrationId,
      provider: t.provider,
      state: 'creating',
      request: JSON.stringify(t.request),
      external_id: null,
      key: null,
      url: null,
      error: null,
      created_by: t.createdBy,
      updated_at: sql<Date>`now()`,
    })
    .where('vulnerability_id', '=', t.vulnerabilityId)
    .where('state', '=', 'failed')
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Moves the ticket to `to` only from one of `from` (so a job or a webhook acting on a stale view
 * changes nothing); returns the updated row, or undefined when it was not in `from`.
 */
export async function moveTicket(
  db: Db,
  vulnerabilityId: string,
  from: readonly TicketState[],
  to: TicketState,
  fields: { external_id?: string; key?: string; url?: string; error?: string | null } = {},
): Promise<VulnerabilityTicketRow | undefined> {
  return db
    .updateTable('vulnerability_tickets')
    .set({ ...fields, state: to, updated_at: sql<Date>`now()` })
    .where('vulnerability_id', '=', vulnerabilityId)
    .where('state', 'in', [...from])
    .returningAll()
    .executeTakeFirst();
}

/** Notes a failure without changing the state (a close the tracker refused). */
export async function noteTicketError(db: Db, vulnerabilityId: string, error: string): Promise<void> {
  await db.updateTable('vulnerability_tickets').set({ error, updated_at: sql<Date>`now()` }).where('vulnerability_id', '=', vulnerabilityId).execute();
}
