// Plans gate features (spec 5.2, 5.4): `admin` API keys need Pro or above, SSO needs Enterprise.
// Gates read the plan from the database at the moment of use, so a plan change takes effect at once.
import type { Db } from '../db/database.ts';
import { ApiError } from '../http/errors.ts';
import type { AuthChanges } from '../auth/auth-changes.ts';

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

/**
 * Puts the organisation on `plan` (the hook billing drives; `aegis orgs set-plan` today). With
 * `changes`, cached session authorisations everywhere drop the old plan at once; gates read the
 * database anyway. False when there is no such organisation.
 */
export async function setPlan(db: Db, changes: AuthChanges | undefined, orgId: string, plan: Plan): Promise<boolean> {
  const update = async (trx: Db) =>
    (await trx.updateTable('organizations').set({ plan }).where('id', '=', orgId).returning('id').executeTakeFirst()) !== undefined;
  return changes ? changes.commit(db, update) : update(db);
}
