// Applies one verified Stripe event, exactly once: the event's row in `stripe_events` is inserted in
// the same transaction as the change it causes, so a redelivery (Stripe delivers at least once, and
// retries for days when it hears no 2xx) finds the row and changes nothing. Every event is answered
// 2xx once verified, whatever its outcome, because a retry would not change the outcome: an event
// for no organisation, or naming an unknown plan, is recorded as such and logged for a person.
import type { FastifyBaseLogger } from 'fastify';
import type Stripe from 'stripe';
import { recordAudit } from '../../platform/audit-log.ts';
import type { AuthChanges } from '../accounts/auth/auth-changes.ts';
import type { Db } from '../../platform/db/database.ts';
import type { StripeEventOutcome } from '../../platform/db/schema.ts';
import { asPlan, writePlan } from '../accounts/people/plans.ts';
import { billingIntent, type BillingIntent } from './subscription-events.ts';

/** A redelivery, or what this first delivery did. */
export type EventResult = { duplicate: true } | Applied;

interface Applied {
  duplicate: false;
  outcome: StripeEventOutcome;
  orgId: string | null;
}

/** Who billing changes are attributed to in the audit trail. */
const STRIPE_ACTOR = { type: 'system', id: 'billing:stripe' } as const;

export async function applyStripeEvent(db: Db, changes: AuthChanges, log: FastifyBaseLogger, event: Stripe.Event): Promise<EventResult> {
  const intent = billingIntent(event);
  // Ignored types never touch a plan: one insert, no announcement to other processes.
  if (!intent) {
    return (await claim(db, event, 'ignored')) ? { duplicate: false, outcome: 'ignored', orgId: null } : { duplicate: true };
  }
  // Billing types may change the plan: AuthChanges makes cached session authorisations forget it.
  return changes.commit(db, async (trx): Promise<EventResult> => {
    // First, so that a concurrent redelivery waits on this row and then sees it.
    if (!(await claim(trx, event, 'applied'))) return { duplicate: true };
    const result = await applyIntent(trx, log, event, intent);
    await trx.updateTable('stripe_events').set({ outcome: result.outcome, org_id: result.orgId }).where('id', '=', event.id).execute();
    // Unmatched and unknown-plan events need a person (wrong metadata or price); stale ones are
    // Stripe's ordinary reordering.
    const notApplied = { stripe_event: event.id, type: event.type, outcome: result.outcome, org_id: result.orgId };
    if (result.outcome === 'unmatched' || result.outcome === 'unknown_plan') log.warn(notApplied, `stripe: ${event.type} not applied (${result.outcome})`);
    else if (result.outcome === 'stale') log.info(notApplied, `stripe: ${event.type} is older than the last billing event applied; ignored`);
    return result;
  });
}

/** Inserts the event's row; false when it is already there (a redelivery). */
async function claim(trx: Db, event: Stripe.Event, outcome: StripeEventOutcome): Promise<boolean> {
  const row = await trx
    .insertInto('stripe_events')
    .values({ id: event.id, type: event.type, org_id: null, outcome })
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

async function applyIntent(trx: Db, log: FastifyBaseLogger, event: Stripe.Event, intent: BillingIntent): Promise<Applied> {
  const org = await findOrganization(trx, intent);
  if (!org) return { duplicate: false, outcome: 'unmatched', orgId: null };
  const found = { duplicate: false as const, orgId: org.id };

  // Stripe does not deliver in order; `created` (seconds) orders events. Equal seconds apply in
  // arrival order, since neither is known to be the older.
  const createdAt = new Date(event.created * 1000);
  if (org.billing_updated_at && createdAt.getTime() < org.billing_updated_at.getTime()) return { ...found, outcome: 'stale' };
  if (intent.plan.kind === 'unknown') {
    log.warn({ stripe_event: event.id, org_id: org.id, named: intent.plan.named }, 'stripe: the subscription price names no Aegis plan (lookup_key or metadata.aegis_plan)');
    return { ...found, outcome: 'unknown_plan' };
  }

  const oldPlan = asPlan(org.plan);
  const newPlan = intent.plan.kind === 'set' ? intent.plan.plan : oldPlan;
  const customerId = intent.orgId !== undefined && intent.customerId !== undefined && org.stripe_customer_id !== intent.customerId ? await claimableCustomer(trx, log, org.id, intent.customerId) : undefined;
  await writePlan(trx, org.id, newPlan, { status: intent.status, updatedAt: createdAt, customerId });

  if (newPlan === oldPlan && intent.status === org.billing_status) return { ...found, outcome: 'unchanged' };
  await recordAudit(trx, {
    orgId: org.id,
    actor: STRIPE_ACTOR,
    action: newPlan !== oldPlan ? 'billing.plan_changed' : 'billing.status_changed',
    target: { type: 'organization', id: org.id },
    metadata: {
      stripe_event_id: event.id,
      stripe_event_type: event.type,
      stripe_customer_id: intent.customerId ?? null,
      old_plan: oldPlan,
      new_plan: newPlan,
      old_status: org.billing_status,
      status: intent.status,
    },
  });
  return { ...found, outcome: 'applied' };
}

/**
 * The organisation the event is about, locked until the transaction ends so that two events for it
 * apply one after the other: the one the metadata names, else the one holding the event's customer.
 */
async function findOrganization(trx: Db, intent: BillingIntent) {
  const columns = ['id', 'plan', 'stripe_customer_id', 'billing_status', 'billing_updated_at'] as const;
  if (intent.orgId !== undefined) {
    // A sandbox (`sbx_…`) is never billed: its plan is its organisation's.
    const named = await trx.selectFrom('organizations').select(columns).where('id', '=', intent.orgId).where('live_org_id', 'is', null).forUpdate().executeTakeFirst();
    if (named) return named;
  }
  if (intent.customerId === undefined) return undefined;
  return trx.selectFrom('organizations').select(columns).where('stripe_customer_id', '=', intent.customerId).forUpdate().executeTakeFirst();
}

/**
 * The customer id to store on the organisation the metadata names, unless another organisation
 * already holds it (the column is unique): then the mapping is left alone and a person is told.
 */
async function claimableCustomer(trx: Db, log: FastifyBaseLogger, orgId: string, customerId: string): Promise<string | undefined> {
  const holder = await trx.selectFrom('organizations').select('id').where('stripe_customer_id', '=', customerId).where('id', '<>', orgId).executeTakeFirst();
  if (!holder) return customerId;
  log.warn({ org_id: orgId, held_by: holder.id, stripe_customer_id: customerId }, 'stripe: the customer already belongs to another organisation; not moved');
  return undefined;
}
