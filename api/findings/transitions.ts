// Which status changes triage may make (PATCH /api/v1/vulnerabilities/:id):
//
//   open          → acknowledged, resolved, accepted_risk
//   acknowledged  → open, resolved, accepted_risk
//   accepted_risk → open, acknowledged, resolved
//   resolved      → open (reopen)
//
// Scans move findings too: a finding not seen by a later scan of its target becomes resolved with
// resolution `fixed`; seen again, it is open again. A manual `resolved` records resolution
// `manual`. `false_positive` and `notes` can change in any status.
import type { VulnerabilityStatus } from './store.ts';

const ALLOWED: Record<VulnerabilityStatus, readonly VulnerabilityStatus[]> = {
  open: ['acknowledged', 'resolved', 'accepted_risk'],
  acknowledged: ['open', 'resolved', 'accepted_risk'],
  accepted_risk: ['open', 'acknowledged', 'resolved'],
  resolved: ['open'],
};

export function transitionAllowed(from: VulnerabilityStatus, to: VulnerabilityStatus): boolean {
  return from === to || ALLOWED[from].includes(to);
}

export const allowedFrom = (from: VulnerabilityStatus): readonly VulnerabilityStatus[] => ALLOWED[from];
