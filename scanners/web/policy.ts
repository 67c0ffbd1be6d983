// A scan policy: per rule id, `ignore` (not run, not reported), `warn` or `fail`. A rule the policy
// leaves out fails for high and critical findings and warns otherwise. One definition for every URL
// scanner and the job that records their findings.
import type { Severity } from '../types.ts';

export type PolicyMark = 'warn' | 'fail' | 'ignore';
export type ScanPolicy = Record<string, PolicyMark>;

export function policyMark(ruleId: string, severity: Severity, policy: ScanPolicy | undefined): PolicyMark {
  return policy?.[ruleId] ?? (severity === 'critical' || severity === 'high' ? 'fail' : 'warn');
}
