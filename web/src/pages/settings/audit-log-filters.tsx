// The audit log's filters (every filter GET /api/v1/audit-log has): action, actor, target and a date
// range. Applied on submit, so typing does not refetch each keystroke.
import { useState, type FormEvent } from 'react';
import { Field } from '../../components/forms.tsx';

export interface AuditFilters {
  action: string;
  actor: string;
  target: string;
  /** YYYY-MM-DD, local days. */
  from: string;
  to: string;
}

export const NO_FILTERS: AuditFilters = { action: '', actor: '', target: '', from: '', to: '' };

/** Actions the API records, offered as suggestions (any other text is allowed). */
const KNOWN_ACTIONS = [
  'api_key.created', 'api_key.rotated', 'api_key.revoked', 'member.role_changed', 'member.removed', 'invite.sent',
  'invite.revoked', 'invite.accepted', 'session.revoked', 'user.login', 'user.new_device', 'organization.created',
  'organization.plan_changed', 'billing.plan_changed', 'sso.enforced', 'sso.login_refused',
];

/** The API's query for the filters: empty ones left out, days turned into an instant range. */
export function auditQuery(filters: AuditFilters): { action?: string; actor?: string; target?: string; since?: string; until?: string } {
  const day = (text: string, plusDays = 0) => {
    const [y, m, d] = text.split('-').map(Number);
    return new Date(y ?? 1970, (m ?? 1) - 1, (d ?? 1) + plusDays).toISOString();
  };
  return {
    ...(filters.action.trim() && { action: filters.action.trim() }),
    ...(filters.actor.trim() && { actor: filters.actor.trim() }),
    ...(filters.target.trim() && { target: filters.target.trim() }),
    ...(filters.from && { since: day(filters.from) }),
    // `to` is inclusive for people; the API's `until` is exclusive: the next midnight.
    ...(filters.to && { until: day(filters.to, 1) }),
  };
}

export function AuditFiltersForm({ applied, onApply }: { applied: AuditFilters; onApply(filters: AuditFilters): void }) {
  const [draft, setDraft] = useState(applied);
  const set = (name: keyof AuditFilters) => (e: { target: { value: string } }) => setDraft({ ...draft, [name]: e.target.value });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onApply(draft);
  };
  return (
    <form className="filters" onSubmit={submit} aria-label="Audit log filters">
      <Field label="Action" hint="Comma-separated">
        {(props) => <input {...props} list="audit-actions" value={draft.action} onChange={set('action')} />}
      </Field>
      <datalist id="audit-actions">
        {KNOWN_ACTIONS.map((a) => <option key={a} value={a} />)}
      </datalist>
      <Field label="Actor" hint="User, key id or system">
        {(props) => <input {...props} value={draft.actor} onChange={set('actor')} />}
      </Field>
      <Field label="Target" hint="Object id">
        {(props) => <input {...props} value={draft.target} onChange={set('target')} />}
      </Field>
      <Field label="From">
        {(props) => <input {...props} type="date" value={draft.from} max={draft.to || undefined} onChange={set('from')} />}
      </Field>
      <Field label="To">
        {(props) => <input {...props} type="date" value={draft.to} min={draft.from || undefined} onChange={set('to')} />}
      </Field>
      <div className="actions">
        <button type="submit" className="button-primary">Apply</button>
        <button type="button" onClick={() => { setDraft(NO_FILTERS); onApply(NO_FILTERS); }}>Clear</button>
      </div>
    </form>
  );
}
