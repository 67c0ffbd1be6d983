// The events a change to a finding raises: `vulnerability.resolved` when it becomes resolved,
// `vulnerability.updated` for any other change of status or triage, each with the changed fields'
// old values in `previous_attributes` (as Stripe does).
import type { NewEvent } from '../../platform/events/event-store.ts';
import { toVulnerability, type VulnerabilityRow } from './store.ts';

/** The fields whose change is worth telling receivers about (not last-seen times or evidence). */
const WATCHED = ['status', 'resolution', 'false_positive', 'notes', 'verification', 'virtual_patch', 'fixed_at'] as const;

type Resource = ReturnType<typeof toVulnerability>;

export function vulnerabilityCreated(row: VulnerabilityRow): NewEvent {
  return { orgId: row.org_id, type: 'vulnerability.created', object: toVulnerability(row) };
}

/** The event for `before` → `after`, or undefined when nothing watched changed. */
export function vulnerabilityChanged(before: VulnerabilityRow | Resource, after: VulnerabilityRow): NewEvent | undefined {
  const old: Resource = 'org_id' in before ? toVulnerability(before) : before;
  const now = toVulnerability(after);
  const previous: Record<string, unknown> = {};
  for (const field of WATCHED) {
    if (JSON.stringify(old[field]) !== JSON.stringify(now[field])) previous[field] = old[field];
  }
  if (Object.keys(previous).length === 0) return undefined;
  const resolved = now.status === 'resolved' && old.status !== 'resolved';
  return { orgId: after.org_id, type: resolved ? 'vulnerability.resolved' : 'vulnerability.updated', object: now, previous };
}
