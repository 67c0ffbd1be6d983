// What a Stripe event means for an organisation's plan, decided from the event alone (no database):
// which organisation it names, which plan it asks for and what billing status to record. Applying
// it is api/billing/apply-event.ts.
//
// Conventions (docs/billing.md): the subscription carries `metadata.aegis_organization_id` (set
// when the Checkout session is created), and the first item's price names the plan by its
// `lookup_key` or `metadata.aegis_plan`. One subscription per organisation: a plan change updates
// the subscription's price rather than starting a second subscription.
import type Stripe from 'stripe';
import { isPlan, type Plan } from '../accounts/people/plans.ts';

/** Metadata key naming the Aegis organisation on a subscription (and copied onto its invoices). */
export const ORG_METADATA_KEY = 'aegis_organization_id';
/** Price metadata key naming the plan when the price has no lookup key. */
export const PLAN_METADATA_KEY = 'aegis_plan';

/** The event types that change billing; docs/billing.md asks for exactly these in Stripe's dashboard. */
export const BILLING_EVENT_TYPES = ['customer.subscription.created', 'customer.subscription.updated', 'customer.subscription.deleted', 'invoice.payment_failed'] as const;

export type PlanChange =
  | { kind: 'set'; plan: Plan }
  /** Billing trouble is not a downgrade yet: Stripe keeps retrying, then cancels (its own dunning). */
  | { kind: 'keep' }
  /** The price names no plan Aegis knows: nothing is changed rather than guessing. */
  | { kind: 'unknown'; named: string | null };

export interface BillingIntent {
  /** `metadata.aegis_organization_id`, if the object carries it. */
  orgId: string | undefined;
  /** Stripe's customer (cus_…), the fallback way to find the organisation. */
  customerId: string | undefined;
  plan: PlanChange;
  /** What `billing_status` becomes (Stripe's subscription status, or `past_due` for a failed invoice). */
  status: string;
}

/** The intent of a billing event; null for every other type (acknowledged and ignored). */
export function billingIntent(event: Stripe.Event): BillingIntent | null {
  switch (event.type) {
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
      return subscriptionIntent(event.data.object, false);
    case 'customer.subscription.deleted':
      return subscriptionIntent(event.data.object, true);
    case 'invoice.payment_failed':
      return invoiceFailedIntent(event.data.object);
    default:
      return null;
  }
}

function subscriptionIntent(subscription: Stripe.Subscription, deleted: boolean): BillingIntent {
  const found = { orgId: metadataOrg(subscription.metadata), customerId: idOf(subscription.customer) };
  if (deleted) return { ...found, plan: { kind: 'set', plan: 'trial' }, status: 'canceled' };
  switch (subscription.status) {
    case 'active':
    case 'trialing':
      return { ...found, plan: planOf(subscription), status: subscription.status };
    case 'canceled':
    case 'incomplete_expired':
      // incomplete_expired: the first payment never succeeded; the subscription is over for good.
      return { ...found, plan: { kind: 'set', plan: 'trial' }, status: 'canceled' };
    case 'paused':
      // A trial that ended without a payment method: no paid plan until it is resumed.
      return { ...found, plan: { kind: 'set', plan: 'trial' }, status: 'paused' };
    default:
      // past_due, unpaid, incomplete (and statuses Stripe may add): record it, leave the plan.
      return { ...found, plan: { kind: 'keep' }, status: subscription.status };
  }
}

function invoiceFailedIntent(invoice: Stripe.Invoice): BillingIntent {
  return {
    // Stripe snapshots the subscription's metadata onto its invoices: under `parent` since API
    // version 2025-03-31, at the top level before (events come in the endpoint's API version).
    orgId: metadataOrg(invoice.parent?.subscription_details?.metadata ?? (invoice as LegacyInvoice).subscription_details?.metadata),
    customerId: idOf(invoice.customer),
    plan: { kind: 'keep' },
    status: 'past_due',
  };
}

/** Where invoices of API versions before 2025-03-31 carry the subscription's metadata. */
interface LegacyInvoice {
  subscription_details?: { metadata?: Stripe.Metadata | null } | null;
}

/** The plan the subscription's first item's price names. */
function planOf(subscription: Stripe.Subscription): PlanChange {
  const price = subscription.items?.data?.[0]?.price;
  const named = price?.lookup_key || price?.metadata?.[PLAN_METADATA_KEY] || null;
  return named !== null && isPlan(named) ? { kind: 'set', plan: named } : { kind: 'unknown', named };
}

function metadataOrg(metadata: Stripe.Metadata | null | undefined): string | undefined {
  const value = metadata?.[ORG_METADATA_KEY]?.trim();
  return value ? value : undefined;
}

/** Expandable fields arrive as an id, or as the object when the event was built with expansion. */
function idOf(value: string | { id: string } | null | undefined): string | undefined {
  if (typeof value === 'string') return value || undefined;
  return value?.id || undefined;
}
