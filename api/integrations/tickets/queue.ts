// The ticket jobs' kinds and how they are queued. Kept free of provider and event imports: the
// event store calls queueTicketCloses for every batch of events it records.
import { sql } from 'kysely';
import type { Db } from '../../../platform/db/database.ts';
import type { EventRow } from '../../../platform/db/schema.ts';
import { enqueue, enqueueMany } from '../../../platform/jobs/queue.ts';

export const TICKET_CREATE_JOB = 'ticket.create';
export const TICKET_CLOSE_JOB = 'ticket.close';
/** Attempts before a ticket job gives up (rate limits and outages are retried; refusals are not). */
export const TICKET_JOB_MAX_ATTEMPTS = 8;

/** Both kinds carry only the finding: the ticket row says the rest, as it is when the job runs. */
export type TicketJobPayload = { vulnerability_id: string };

/** Queues the creation of a `creating` ticket, in the caller's transaction (announce after commit). */
export async function enqueueTicketCreate(trx: Db, orgId: string, vulnerabilityId: string): Promise<string> {
  const { job } = await enqueue(trx, { kind: TICKET_CREATE_JOB, orgId, payload: { vulnerability_id: vulnerabilityId } satisfies TicketJobPayload, maxAttempts: TICKET_JOB_MAX_ATTEMPTS });
  return job.id;
}

/**
 * One close per open period of a ticket: the key changes only when the ticket's state does
 * (reopened at the tracker), so a finding resolved, reopened and resolved again in Aegis while the
 * ticket stays open closes it once.
 */
const closeKey = (vulnerabilityId: string, ticketUpdatedAt: Date): string => `${TICKET_CLOSE_JOB}:${vulnerabilityId}:${ticketUpdatedAt.getTime()}`;

/** Queues a close of one open ticket (a ticket created after its finding was already resolved). */
export async function enqueueTicketClose(trx: Db, ticket: { org_id: string; vulnerability_id: string; updated_at: Date }): Promise<void> {
  await enqueue(trx, {
    kind: TICKET_CLOSE_JOB,
    orgId: ticket.org_id,
    payload: { vulnerability_id: ticket.vulnerability_id } satisfies TicketJobPayload,
    maxAttempts: TICKET_JOB_MAX_ATTEMPTS,
    dedupeKey: closeKey(ticket.vulnerability_id, ticket.updated_at),
  });
}

/**
 * For recorded `vulnerability.resolved` events: a `ticket.close` job for each of those findings
 * whose ticket is `open`. A ticket the tracker closed is already `closed` when its finding is
 * resolved (./sync.ts), so nothing is echoed back. Returns how many jobs were queued (the caller
 * announces them after commit).
 */
export async function queueTicketCloses(trx: Db, events: readonly Pick<EventRow, 'type' | 'data'>[]): Promise<number> {
  const ids = events.filter((e) => e.type === 'vulnerability.resolved').map((e) => (e.data.object as { id?: unknown }).id).filter((id): id is string => typeof id === 'string');
  if (ids.length === 0) return 0;
  // One array parameter, however many findings a scan resolved at once.
  const open = await trx
    .selectFrom('vulnerability_tickets')
    .select(['org_id', 'vulnerability_id', 'updated_at'])
    .where(sql<boolean>`vulnerability_id = any(${ids}::text[])`)
    .where('state', '=', 'open')
    .execute();
  if (open.length === 0) return 0;
  const created = await enqueueMany(
    trx,
    open.map((t) => ({
      kind: TICKET_CLOSE_JOB,
      orgId: t.org_id,
      payload: { vulnerability_id: t.vulnerability_id } satisfies TicketJobPayload,
      maxAttempts: TICKET_JOB_MAX_ATTEMPTS,
      dedupeKey: closeKey(t.vulnerability_id, t.updated_at),
    })),
  );
  return created.length;
}
