// What triage spent, per organisation and calendar month (UTC): tokens with the customer's AI
// provider and triages of the bundled fallback (table ai_usage). Budgets and quotas are checked
// against it. Kept free of provider imports: the event store reaches it through ./auto.ts.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import type { IntegrationRow } from '../../platform/db/schema.ts';

export interface TriageLimits {
  /** Fallback triages per organisation and month without an AI connection. */
  fallbackMonthlyQuota: number;
  /** Tokens per month of an AI connection whose settings name no budget. */
  defaultMonthlyTokenBudget: number;
}

export interface MonthUsage {
  /** First day of the month, `YYYY-MM-DD`. */
  month: string;
  tokens: number;
  triages: number;
  fallback_triages: number;
}

/** The first instant of `now`'s month, UTC. */
export function monthStart(now: Date = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/** When the usage of `now`'s month stops counting: the first instant of the next month, UTC. */
export function monthReset(now: Date = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

/** `YYYY-MM-DD` of the month start: the `month` key of ai_usage (a string, so no time zone converts it). */
export function monthKey(now: Date = new Date()): string {
  return monthStart(now).toISOString().slice(0, 10);
}

/** Whole seconds until the month resets (at least 1): a Retry-After. */
export function secondsUntilReset(now: Date = new Date()): number {
  return Math.max(1, Math.ceil((monthReset(now).getTime() - now.getTime()) / 1000));
}

/** The monthly token budget of an AI connection: its own setting, else the server's default. */
export function tokenBudgetOf(integration: Pick<IntegrationRow, 'settings'>, limits: TriageLimits): number {
  return integration.settings.ai?.monthly_token_budget ?? limits.defaultMonthlyTokenBudget;
}

interface UsageRow {
  tokens: string | number;
  triages: number;
  fallback_triages: number;
}

const toUsage = (month: string, row: UsageRow | undefined): MonthUsage => ({
  month,
  tokens: Number(row?.tokens ?? 0),
  triages: Number(row?.triages ?? 0),
  fallback_triages: Number(row?.fallback_triages ?? 0),
});

export async function readUsage(db: Db, orgId: string, now: Date = new Date()): Promise<MonthUsage> {
  const month = monthKey(now);
  const row = await db
    .selectFrom('ai_usage')
    .select(['tokens', 'triages', 'fallback_triages'])
    .where('org_id', '=', orgId)
    .where('month', '=', sql<Date>`${month}::date`)
    .executeTakeFirst();
  return toUsage(month, row);
}

export interface UsageIncrement {
  tokens?: number;
  triages?: number;
  fallbackTriages?: number;
}

/** Adds to this month's counters in one statement (concurrent triages never lose each other's counts). */
export async function addUsage(db: Db, orgId: string, add: UsageIncrement, now: Date = new Date()): Promise<MonthUsage> {
  const month = monthKey(now);
  const tokens = Math.max(0, Math.round(add.tokens ?? 0));
  const triages = add.triages ?? 0;
  const fallback = add.fallbackTriages ?? 0;
  const row = await db
    .insertInto('ai_usage')
    .values({ org_id: orgId, month: sql<string>`${month}::date`, tokens, triages, fallback_triages: fallback })
    .onConflict((oc) =>
      oc.columns(['org_id', 'month']).doUpdateSet({
        tokens: sql<number>`ai_usage.tokens + ${tokens}`,
        triages: sql<number>`ai_usage.triages + ${triages}`,
        fallback_triages: sql<number>`ai_usage.fallback_triages + ${fallback}`,
      }),
    )
    .returning(['tokens', 'triages', 'fallback_triages'])
    .executeTakeFirstOrThrow();
  return toUsage(month, row);
}

/**
 * Counts one fallback triage, unless `quota` (when not null) is reached: the check and the
 * increment are one statement, so concurrent requests cannot pass the quota together. Returns the
 * usage after the increment, or null when the quota was already used up.
 */
export async function reserveFallbackTriage(db: Db, orgId: string, quota: number | null, now: Date = new Date()): Promise<MonthUsage | null> {
  if (quota !== null && quota < 1) return null;
  const month = monthKey(now);
  const query = db
    .insertInto('ai_usage')
    .values({ org_id: orgId, month: sql<string>`${month}::date`, tokens: 0, fallback_triages: 1 })
    .onConflict((oc) => {
      const update = oc.columns(['org_id', 'month']).doUpdateSet({ fallback_triages: sql<number>`ai_usage.fallback_triages + 1` });
      return quota === null ? update : update.where('ai_usage.fallback_triages', '<', quota);
    });
  const row = await query.returning(['tokens', 'triages', 'fallback_triages']).executeTakeFirst();
  return row ? toUsage(month, row) : null;
}
