// Small labels whose colour backs up (never replaces) their text.
const SEVERITY_ORDER = ['critical', 'high', 'medium', 'low', 'info'] as const;
export type Severity = (typeof SEVERITY_ORDER)[number];
export const SEVERITIES: readonly Severity[] = SEVERITY_ORDER;

export function SeverityBadge({ severity }: { severity: string }) {
  return <span className={`badge severity-${severity}`}>{severity}</span>;
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge status-${status.replace(/[^a-z_]/g, '')}`}>{status.replace(/_/g, ' ')}</span>;
}

/** Marks an object that a config repository (or Terraform) manages: edits here are undone by its next sync. */
export function ManagedBadge({ by }: { by: string }) {
  return <span className="badge badge-managed" title={`Managed by ${by}: changes made here are undone by its next sync`}>managed by {by}</span>;
}

/** A time as the person's locale writes it, with the exact ISO time on hover. */
export function Time({ at }: { at: string | null | undefined }) {
  if (!at) return <span>—</span>;
  const date = new Date(at);
  return <time dateTime={at} title={at}>{date.toLocaleString()}</time>;
}

/** The config source that manages an object (the reconciler's `aegis.dev/source` label), if any. */
export function configSourceOf(labels: Record<string, string> | null | undefined): string | null {
  return labels?.['aegis.dev/source'] ?? null;
}

/** Shown above a form that edits a managed object: the change will not last. */
export function ManagedEditWarning({ labels }: { labels: Record<string, string> | null | undefined }) {
  const source = configSourceOf(labels);
  if (!source) return null;
  return (
    <p className="notice" role="note">
      This object is managed by <strong>{source}</strong>. A change made here will be undone by the next sync of that
      config repository (or at once, if it heals drift).
    </p>
  );
}
