// From events to deliveries: for each event, one delivery per enabled webhook of its organisation
// whose subscription selects the event's type, and one `webhook.deliver` job per delivery — all in
// the transaction that records the events, so an event is never stored without its deliveries
// (nor delivered without being stored). The caller announces the jobs after commit.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import type { EventRow } from '../../platform/db/schema.ts';
import { newId } from '../../platform/ids.ts';

export const DELIVERY_JOB_KIND = 'webhook.deliver';

export interface DeliveryJobPayload {
  delivery_id: string;
  /** `manual`: a redelivery asked for by a person; one attempt, outside the retry schedule. */
  trigger: 'automatic' | 'manual';
}

/**
 * The queue's own attempt limit is only a backstop: the delivery's retry schedule decides when to
 * give up (api/webhooks/delivery-job.ts), and the job then completes with the delivery failed.
 */
export const DELIVERY_JOB_MAX_ATTEMPTS = 100;

const CHUNK = 1_000;

/** Jobs for deliveries, oldest event first, so an endpoint's deliveries start in event order. */
export async function enqueueDeliveryJobs(trx: Db, deliveries: readonly { id: string; org_id: string }[], trigger: DeliveryJobPayload['trigger'], maxAttempts = DELIVERY_JOB_MAX_ATTEMPTS): Promise<void> {
  for (let i = 0; i < deliveries.length; i += CHUNK) {
    await trx
      .insertInto('jobs')
      .values(
        deliveries.slice(i, i + CHUNK).map((d) => ({
          id: newId('job'),
          org_id: d.org_id,
          kind: DELIVERY_JOB_KIND,
          payload: JSON.stringify({ delivery_id: d.id, trigger } satisfies DeliveryJobPayload),
          max_attempts: maxAttempts,
        })),
      )
      .execute();
  }
}

/** Creates the deliveries (and their jobs) the events call for; returns how many. */
export async function queueDeliveries(trx: Db, events: readonly Pick<EventRow, 'id' | 'org_id' | 'type'>[]): Promise<number> {
  let queued = 0;
  for (let i = 0; i < events.length; i += CHUNK) {
    const chunk = events.slice(i, i + CHUNK);
    // A subscription entry selects a type exactly, by family (`scan.*`) or all of them (`*`; never `ping`).
    const { rows: pairs } = await sql<{ webhook_id: string; event_id: string; org_id: string; type: string }>`
      select w.id as webhook_id, e.id as event_id, e.org_id, e.type
      from unnest(${chunk.map((e) => e.id)}::text[], ${chunk.map((e) => e.org_id)}::text[], ${chunk.map((e) => e.type)}::text[]) as e(id, org_id, type)
      join webhooks w on w.org_id = e.org_id and w.enabled
      where exists (
        select 1 from jsonb_array_elements_text(w.events) as p(pattern)
        where p.pattern = e.type
           or (p.pattern = '*' and e.type <> 'ping')
           or (right(p.pattern, 2) = '.*' and starts_with(e.type, left(p.pattern, -1)))
      )
      order by e.id, w.id`.execute(trx);
    if (pairs.length === 0) continue;
    const deliveries = pairs.map((p) => ({ id: newId('whd'), org_id: p.org_id, webhook_id: p.webhook_id, event_id: p.event_id, event_type: p.type }));
    for (let j = 0; j < deliveries.length; j += CHUNK) {
      await trx.insertInto('webhook_deliveries').values(deliveries.slice(j, j + CHUNK)).execute();
    }
    await enqueueDeliveryJobs(trx, deliveries, 'automatic');
    queued += deliveries.length;
  }
  return queued;
}
