// The checks a JSON Schema cannot express for an IP access rule, shared by the JSON route and the
// CSV import so both refuse exactly the same rules.
import { checkRuleValue, type IpRuleType } from './ip-values.ts';

export interface FieldProblem {
  field: string;
  message: string;
}

export type RuleCheck = { ok: true; valueKey: string; expiresAt: Date | null } | { ok: false; problems: FieldProblem[] };

/** An update's `expires_at`: unchanged (undefined), cleared (null), or a time that must be in the future. */
export function checkIpRuleExpiry(expires: string | null | undefined, now = Date.now()): { ok: true; expiresAt: Date | null | undefined } | { ok: false; problems: FieldProblem[] } {
  if (expires === undefined || expires === null) return { ok: true, expiresAt: expires };
  const expiresAt = new Date(expires);
  return expiresAt.getTime() <= now ? { ok: false, problems: [{ field: 'expires_at', message: 'must be in the future' }] } : { ok: true, expiresAt };
}

export function checkIpRule(rule: { type: IpRuleType; value: string; expires_at?: string | null | undefined }, now = Date.now()): RuleCheck {
  const problems: FieldProblem[] = [];
  const value = checkRuleValue(rule.type, rule.value);
  if (!value.ok) problems.push({ field: 'value', message: `${JSON.stringify(rule.value)} ${value.reason}` });
  let expiresAt: Date | null = null;
  if (rule.expires_at) {
    expiresAt = new Date(rule.expires_at);
    if (Number.isNaN(expiresAt.getTime())) problems.push({ field: 'expires_at', message: 'is not an ISO 8601 timestamp' });
    else if (expiresAt.getTime() <= now) problems.push({ field: 'expires_at', message: 'must be in the future' });
  }
  return value.ok && problems.length === 0 ? { ok: true, valueKey: value.key, expiresAt } : { ok: false, problems };
}
