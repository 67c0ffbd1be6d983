// The two refusals of triage, worded once for the API and the job: an AI connection's monthly
// token budget spent (429 ai_budget_exhausted), and the fallback's monthly quota used up (402
// triage_quota_exceeded). Each says the limit, what was used and when it resets.
import type { IntegrationRow } from '../../platform/db/schema.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { monthReset, secondsUntilReset, type MonthUsage } from './usage.ts';

const day = (at: Date): string => at.toISOString().slice(0, 10);
const count = (n: number): string => n.toLocaleString('en-US');

export function budgetExhaustedMessage(integration: Pick<IntegrationRow, 'provider' | 'id'>, budget: number, used: number, now = new Date()): string {
  return (
    `the monthly AI token budget of this organisation's ${integration.provider} connection (${integration.id}) is spent: ` +
    `${count(used)} of ${count(budget)} tokens used this month; it resets on ${day(monthReset(now))}. ` +
    'Raise settings.ai.monthly_token_budget of the connection, or triage with engine "fallback".'
  );
}

/** 429 with Retry-After (set by the caller: seconds to the reset). */
export function budgetExhausted(integration: Pick<IntegrationRow, 'provider' | 'id'>, budget: number, usage: MonthUsage, now = new Date()): ApiError {
  return new ApiError(429, 'ai_budget_exhausted', budgetExhaustedMessage(integration, budget, usage.tokens, now), {
    budget,
    used: usage.tokens,
    resets_at: monthReset(now).toISOString(),
    integration_id: integration.id,
    retry_after_seconds: secondsUntilReset(now),
  });
}

export function quotaExceeded(quota: number, usage: MonthUsage, now = new Date()): ApiError {
  return new ApiError(
    402,
    'triage_quota_exceeded',
    `the fallback triage quota of this organisation is used up: ${usage.fallback_triages} of ${quota} triages this month ` +
      `(the bundled fallback gives ${quota} triages per month to an organisation without an AI connection); it resets on ${day(monthReset(now))}. ` +
      'Connecting an AI provider (Settings → Integrations → AI) lifts the quota.',
    { quota, used: usage.fallback_triages, resets_at: monthReset(now).toISOString() },
  );
}
