// Webhook deliveries and their attempts in the database. An attempt is recorded together with the
// delivery's new state and the webhook's failure clock in one transaction, and only if the delivery
// still has the attempt count read before sending: a job reclaimed by another worker (lease lost)
// cannot record the same attempt twice.
import { sql } from 'kysely';
import { recordAudit } from '../../platform/audit-log.ts';
import type { Db } from '../../platform/db/database.ts';
import type { AttemptTrigger, DeliveryStatus, EventRow, WebhookDeliveryAttemptRow, WebhookDeliveryRow, WebhookRow } from '../../platform/db/schema.ts';
import { announceDeliveries, recordEvents } from '../../platform/events/event-store.ts';
import { newId } from '../../platform/ids.ts';
import { iso, isoOrNull } from '../../platform/resources/timestamps.ts';
import type { SendResult } from './send.ts';
import { toWebhook } from './store.ts';
import { livemodeOf } from '../../platform/db/environments.ts';

export interface LoadedDelivery {
  delivery: WebhookDeliveryRow;
  event: EventRow;
  webhook: WebhookRow;
}

/** The delivery with its event and webhook, or undefined when any of them is gone (deleted, pruned). */
export async function loadDelivery(db: Db, id: string): Promise<LoadedDelivery | undefined> {
  const delivery = await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
  if (!delivery) return undefined;
  const [event, webhook] = await Promise.all([
    db.selectFrom('events').selectAll().where('id', '=', delivery.event_id).executeTakeFirst(),
    db.selectFrom('webhooks').selectAll().where('id', '=', delivery.webhook_id).executeTakeFirst(),
  ]);
  return event && webhook ? { delivery, event, webhook } : undefined;
}

/** A delivery to a disabled webhook ends here, without a request (a success already made stays). */
export async function failForDisabledWebhook(db: Db, delivery: WebhookDeliveryRow): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', error: 'webhook disabled', next_attempt_at: null, updated_at: sql<Date>`now()` })
    .where('id', '=', delivery.id)
    .where('status', '<>', 'succeeded')
    .execute();
}

export interface AttemptRecord {
  loaded: LoadedDelivery;
  trigger: AttemptTrigger;
  startedAt: Date;
  result: SendResult;
  /** The delivery's status after this attempt. */
  status: DeliveryStatus;
  /** When the schedule tries again (automatic failures with attempts left), else null. */
  nextAttemptAt: Date | null;
  /** A webhook whose every delivery has failed for longer than this is disabled. */
  disableAfterMs: number;
}

export interface RecordedAttempt {
  /** False: another run recorded this attempt first (the delivery's attempt count moved on). */
  recorded: boolean;
  delivery?: WebhookDeliveryRow;
  /** True when this attempt disabled the webhook. */
  disabled: boolean;
}

/** Records an attempt, moves the webhook's failure clock and disables the webhook when it ran out. */
export async function recordAttempt(db: Db, r: AttemptRecord): Promise<RecordedAttempt> {
  const { delivery, webhook } = r.loaded;
  const { result } = r;
  const outcome = await db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('webhook_deliveries')
      .set({
        attempts: sql<number>`attempts + 1`,
        status: r.status,
        last_attempt_at: r.startedAt,
        next_attempt_at: r.nextAttemptAt,
        response_status: result.status,
        response_body: result.body,
        duration_ms: result.durationMs,
        error: result.error,
        updated_at: sql<Date>`now()`,
      })
      .where('id', '=', delivery.id)
      .where('attempts', '=', delivery.attempts)
      .returningAll()
      .executeTakeFirst();
    if (!updated) return { recorded: false, disabled: false, deliveries: 0 };
    await trx
      .insertInto('webhook_delivery_attempts')
      .values({
        id: newId('wha'),
        delivery_id: delivery.id,
        trigger: r.trigger,
        started_at: r.startedAt,
        duration_ms: result.durationMs,
        succeeded: result.ok,
        response_status: result.status,
        response_body: result.body,
        error: result.error,
      })
      .execute();
    if (result.ok) {
      await trx.updateTable('webhooks').set({ failing_since: null }).where('id', '=', webhook.id).where('failing_since', 'is not', null).execute();
      return { recorded: true, delivery: updated, disabled: false, deliveries: 0 };
    }
    const failing = await trx
      .updateTable('webhooks')
      .set({ failing_since: sql<Date>`coalesce(failing_since, now())` })
      .where('id', '=', webhook.id)
      .returning(['failing_since'])
      .executeTakeFirst();
    const since = failing?.failing_since;
    if (!since) return { recorded: true, delivery: updated, disabled: false, deliveries: 0 };
    const reason = `every delivery failed since ${since.toISOString()}; last error: ${result.error ?? 'unknown'}`.slice(0, 1000);
    // The database's clock decides, as it set failing_since: worker clocks may differ.
    const disabled = await trx
      .updateTable('webhooks')
      .set({ enabled: false, disabled_reason: reason, updated_at: sql<Date>`now()` })
      .where('id', '=', webhook.id)
      .where('enabled', '=', true)
      .where('failing_since', '<', sql<Date>`now() - ${r.disableAfterMs} * interval '1 millisecond'`)
      .returningAll()
      .executeTakeFirst();
    if (!disabled) return { recorded: true, delivery: updated, disabled: false, deliveries: 0 };
    const events = await recordEvents(trx, [{ orgId: disabled.org_id, type: 'webhook.disabled', object: toWebhook(disabled) }]);
    await recordAudit(trx, {
      orgId: disabled.org_id,
      actor: { type: 'system', id: 'webhooks' },
      action: 'webhook.disabled',
      target: { type: 'webhook', id: disabled.id },
      // The host only: paths and queries of webhook URLs often embed tokens.
      metadata: { host: new URL(disabled.url).host, failing_since: since.toISOString(), last_error: result.error },
    });
    return { recorded: true, delivery: updated, disabled: true, deliveries: events.deliveries };
  });
  announceDeliveries(db, outcome.deliveries);
  return { recorded: outcome.recorded, disabled: outcome.disabled, ...(outcome.delivery ? { delivery: outcome.delivery } : {}) };
}

export interface DeliveryListQuery {
  orgId: string;
  webhookId: string;
  after: string | null;
  limit: number;
  statuses?: readonly string[] | undefined;
  eventTypes?: readonly string[] | undefined;
}

export async function listDeliveries(db: Db, q: DeliveryListQuery): Promise<WebhookDeliveryRow[]> {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('org_id', '=', q.orgId).where('webhook_id', '=', q.webhookId);
  if (q.statuses) query = query.where('status', 'in', q.statuses.length > 0 ? ([...q.statuses] as DeliveryStatus[]) : ['pending']);
  if (q.eventTypes) query = query.where('event_type', 'in', q.eventTypes.length > 0 ? [...q.eventTypes] : ['']);
  if (q.after) query = query.where('id', '<', q.after);
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}

export async function findDelivery(db: Db, orgId: string, webhookId: string, id: string): Promise<WebhookDeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('org_id', '=', orgId).where('webhook_id', '=', webhookId).where('id', '=', id).executeTakeFirst();
}

/** Attempts oldest first (by start: ids from different workers' clocks may interleave). */
export async function listAttempts(db: Db, deliveryId: string): Promise<WebhookDeliveryAttemptRow[]> {
  return db.selectFrom('webhook_delivery_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('started_at', 'asc').orderBy('id', 'asc').execute();
}

export function toDelivery(row: WebhookDeliveryRow) {
  return {
    id: row.id,
    livemode: livemodeOf(row.org_id),
    object: 'webhook_delivery' as const,
    webhook_id: row.webhook_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempt_count: row.attempts,
    next_attempt_at: isoOrNull(row.next_attempt_at),
    last_attempt_at: isoOrNull(row.last_attempt_at),
    response_status: row.response_status,
    response_body: row.response_body,
    duration_ms: row.duration_ms,
    error: row.error,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function toAttempt(row: WebhookDeliveryAttemptRow) {
  return {
    id: row.id,
    trigger: row.trigger,
    started_at: iso(row.started_at),
    duration_ms: row.duration_ms,
    succeeded: row.succeeded,
    response_status: row.response_status,
    response_body: row.response_body,
    error: row.error,
  };
}
