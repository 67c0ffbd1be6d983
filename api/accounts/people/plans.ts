// Plans gate features (spec 5.2, 5.4): `admin` API keys need Pro or above, SSO needs Enterprise.
// Gates read the plan from the database at the moment of use, so a plan change takes effect at once.
import type { Db } from '../../../platform/db/database.ts';
import { ApiError } from '../../../platform/http/errors.ts';
import type { AuthChanges } from '../auth/auth-changes.ts';
import { organizationOf } from '../../../platform/db/environments.ts';

export const PLANS = ['trial', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export const isPlan = (value: string): value is Plan => (PLANS as readonly string[]).includes(value);
/** A stored plan (the database's check constraint allows only these). */
export const asPlan = (value: string): Plan => (isPlan(value) ? value : 'trial');

export async function currentPlan(db: Db, orgId: string): Promise<Plan> {
  // A sandbox has its organisation's plan.
  const row = await db.selectFrom('organizations').select('plan').where('id', '=', organizationOf(orgId)).executeTakeFirstOrThrow();
  return asPlan(row.plan);
}

/** Throws 403 `plan_required` naming the plans that allow `feature` unless the organisation is on one. */
export async function requirePlan(db: Db, orgId: string, allowed: readonly Plan[], feature: string): Promise<void> {
  const plan = await currentPlan(db, orgId);
  if (allowed.includes(plan)) return;
  throw new ApiError(403, 'plan_required', `${feature} needs the ${allowed.join(' or ')} plan; this organisation is on ${plan}`, {
    plan,
    required_plans: [...allowed],
  });
}

/** Billing columns written with a plan change (api/billing): Stripe's view of the subscription. */
export interface BillingUpdate {
  status: string | null;
  /** `created` of the Stripe event that carried it; older events are then ignored. */
  updatedAt: Date;
  /** Stripe's customer, when the event names the organisation and its customer. */
  customerId?: string | undefined;
}

/**
 * Puts the organisation on `plan` (the hook billing drives; `aegis orgs set-plan` today). With
 * `changes`, cached session authorisations everywhere drop the old plan at once; gates read the
 * database anyway. `billing` is written in the same statement. False when there is no such
 * organisation.
 */
export async function setPlan(db: Db, changes: AuthChanges | undefined, orgId: string, plan: Plan, billing?: BillingUpdate): Promise<boolean> {
  const update = (trx: Db) => writePlan(trx, orgId, plan, billing);
  return changes ? changes.commit(db, update) : update(db);
}

/**
 * setPlan's write alone, for a caller that already holds the transaction (and announces it through
 * AuthChanges.commit itself), e.g. the Stripe webhook, which records the event in the same one.
 */
export async function writePlan(trx: Db, orgId: string, plan: Plan, billing?: BillingUpdate): Promise<boolean> {
  const columns = billing
    ? {
        plan,
        billing_status: billing.status,
        billing_updated_at: billing.updatedAt,
        ...(billing.customerId !== undefined ? { stripe_customer_id: billing.customerId } : {}),
      }
    : { plan };
  // Only organisations have plans; a sandbox reads its organisation's (currentPlan).
  return (await trx.updateTable('organizations').set(columns).where('id', '=', orgId).where('live_org_id', 'is', null).returning('id').executeTakeFirst()) !== undefined;
}
