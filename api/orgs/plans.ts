// Plans gate features (spec 5.2, 5.4): `admin` API keys need Pro or above, SSO needs Enterprise.
// Gates read the plan from the database at the moment of use, so a plan change takes effect at once.
import type { Db } from '../db/database.ts';
import { ApiError } from '../http/errors.ts';

export const PLANS = ['trial', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export const isPlan = (value: string): value is Plan => (PLANS as readonly string[]).includes(value);
/** A stored plan (the database's check constraint allows only these). */
export const asPlan = (value: string): Plan => (isPlan(value) ? value : 'trial');

export async function currentPlan(db: Db, orgId: string): Promise<Plan> {
  const row = await db.selectFrom('organizations').select('plan').where('id', '=', orgId).executeTakeFirstOrThrow();
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
