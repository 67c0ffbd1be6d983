// Events in the database: recorded in the caller's transaction together with the change they
// describe (DESIGN §7) and the work they call for; read back by the events API. What an event
// calls for (webhook deliveries, ticket closes, automatic triage) is not known here: features
// subscribe at start-up (api/event-subscribers.ts), so the store never imports a feature.
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { EventData, EventRow } from '../db/schema.ts';
import { newId } from '../ids.ts';
import { announceEnqueued } from '../jobs/signals.ts';
import { iso } from '../resources/timestamps.ts';
import { EVENT_TYPE_INFO, type EventType } from '../../schemas/events.ts';
import { livemodeOf, organizationOf } from '../db/environments.ts';

export interface NewEvent {
  orgId: string;
  type: EventType | 'ping';
  /** The object as it is now (its API representation). */
  object: Record<string, unknown>;
  /** For updates: the changed fields' values before the change. */
  previous?: Record<string, unknown> | undefined;
}

const CHUNK = 500;

/**
 * Work that recorded events call for, queued in the transaction that records them so an event is
 * never stored without it; returns how many jobs it queued.
 */
export type EventSubscriber = (trx: Db, events: readonly EventRow[]) => Promise<number>;

const subscribers = new Map<string, EventSubscriber>();

/** Adds (or, under the same name, replaces) a subscriber; called once per process at start-up. */
export function subscribeToEvents(name: string, subscriber: EventSubscriber): void {
  subscribers.set(name, subscriber);
}

/**
 * Stores events inside the caller's transaction and runs every subscriber on them, in the order
 * they subscribed. Returns the number of jobs queued as `deliveries`: when it is not 0, call
 * `announceDeliveries` after the commit so workers start at once instead of at their next poll.
 */
export async function recordEvents(trx: Db, events: readonly NewEvent[]): Promise<{ rows: EventRow[]; deliveries: number }> {
  // A process that never subscribed would store events whose webhooks are never sent: refuse.
  if (subscribers.size === 0) throw new Error('No event subscribers: call installEventSubscribers() (api/event-subscribers.ts) at start-up');
  const rows: EventRow[] = [];
  for (let i = 0; i < events.length; i += CHUNK) {
    const values = events.slice(i, i + CHUNK).map((e) => {
      const data: EventData = e.previous ? { object: e.object, previous_attributes: e.previous } : { object: e.object };
      return { id: newId('evt'), org_id: e.orgId, type: e.type, version: EVENT_TYPE_INFO[e.type].version, data: JSON.stringify(data) };
    });
    rows.push(...(await trx.insertInto('events').values(values).returningAll().execute()));
  }
  let deliveries = 0;
  for (const subscriber of subscribers.values()) deliveries += await subscriber(trx, rows);
  return { rows, deliveries };
}

/** Wakes the delivery workers after the transaction that queued deliveries committed. */
export function announceDeliveries(db: Db, deliveries: number): void {
  if (deliveries > 0) announceEnqueued(db);
}

/** Records events in a transaction of their own and announces their deliveries. */
export async function publishEvents(db: Db, events: readonly NewEvent[]): Promise<EventRow[]> {
  if (events.length === 0) return [];
  const recorded = await db.transaction().execute((trx) => recordEvents(trx, events));
  announceDeliveries(db, recorded.deliveries);
  return recorded.rows;
}

/** An event as the API returns it and webhooks deliver it. */
export function toEvent(row: EventRow) {
  return {
    id: row.id,
    livemode: livemodeOf(row.org_id),
    object: 'event' as const,
    type: row.type,
    version: row.version,
    organization_id: organizationOf(row.org_id),
    created_at: iso(row.created_at),
    data: row.data,
  };
}

export type EventResource = ReturnType<typeof toEvent>;

export interface EventListQuery {
  orgId: string;
  after: string | null;
  limit: number;
  /** Only these types. */
  types?: readonly string[] | undefined;
  /** Events newer than this id (catching up: `starting_after` in creation order). */
  since?: string | undefined;
}

export async function listEvents(db: Db, q: EventListQuery): Promise<EventRow[]> {
  let query = db.selectFrom('events').selectAll().where('org_id', '=', q.orgId);
  if (q.types) query = query.where('type', 'in', q.types.length > 0 ? [...q.types] : ['']);
  if (q.after) query = query.where('id', '<', q.after);
  if (q.since) query = query.where('id', '>', q.since);
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}

export async function findEvent(db: Db, orgId: string, id: string): Promise<EventRow | undefined> {
  return db.selectFrom('events').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

/** How long events (and with them their deliveries' logs) are kept: Stripe keeps 30 days too. */
export const EVENT_RETENTION_DAYS = 30;

/** Deletes events past the retention, a batch at a time; returns how many. */
export async function pruneEvents(db: Db, days = EVENT_RETENTION_DAYS, batch = 5_000): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await db
      .deleteFrom('events')
      .where('id', 'in', (eb) => eb.selectFrom('events').select('id').where('created_at', '<', sql<Date>`now() - ${days} * interval '1 day'`).limit(batch))
      .executeTakeFirst();
    const n = Number(deleted.numDeletedRows);
    total += n;
    if (n < batch) return total;
  }
}
