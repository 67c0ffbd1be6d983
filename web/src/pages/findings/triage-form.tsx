// Triage of a finding: its status, the false-positive mark and notes, saved with one PATCH. The
// status list offers only the changes the API allows from the current status.
import { useState, type FormEvent } from 'react';
import { api, ok } from '../../api/client.ts';
import { Field, useWrite } from '../../components/forms.tsx';
import { ErrorMessage } from '../../components/status.tsx';
import { findingsKey, type Finding } from './model.ts';

type Status = Finding['status'];

const ALLOWED: Record<Status, readonly Status[]> = {
  open: ['acknowledged', 'resolved', 'accepted_risk'],
  acknowledged: ['open', 'resolved', 'accepted_risk'],
  accepted_risk: ['open', 'acknowledged', 'resolved'],
  resolved: ['open'],
};

export function TriageForm({ finding }: { finding: Finding }) {
  const [status, setStatus] = useState<Status>(finding.status);
  const [falsePositive, setFalsePositive] = useState(finding.false_positive);
  const [notes, setNotes] = useState(finding.notes);
  const [saved, setSaved] = useState(false);
  const save = useWrite(
    () => {
      const body: { status?: Status; false_positive?: boolean; notes?: string } = {};
      if (status !== finding.status) body.status = status;
      if (falsePositive !== finding.false_positive) body.false_positive = falsePositive;
      if (notes !== finding.notes) body.notes = notes;
      return ok(api.PATCH('/api/v1/vulnerabilities/{id}', { params: { path: { id: finding.id } }, body }));
    },
    [findingsKey],
    () => setSaved(true),
  );
  const changed = status !== finding.status || falsePositive !== finding.false_positive || notes !== finding.notes;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSaved(false);
    if (changed) save.mutate(undefined);
  };
  return (
    <form onSubmit={submit} aria-labelledby="triage-form-heading" className="triage-form">
      <h2 id="triage-form-heading">Triage</h2>
      <Field label="Status">
        {(props) => (
          <select {...props} value={status} onChange={(e) => setStatus(e.target.value as Status)}>
            {[finding.status, ...ALLOWED[finding.status]].map((s) => (
              <option key={s} value={s}>{s.replace(/_/g, ' ')}</option>
            ))}
          </select>
        )}
      </Field>
      <div className="field checkbox">
        <label>
          <input type="checkbox" checked={falsePositive} onChange={(e) => setFalsePositive(e.target.checked)} /> False positive
        </label>
      </div>
      <Field label="Notes" hint="Visible to everyone in the organisation.">
        {(props) => <textarea {...props} maxLength={10_000} value={notes} onChange={(e) => setNotes(e.target.value)} />}
      </Field>
      <div className="actions">
        <button type="submit" className="button-primary" disabled={!changed || save.isPending}>
          {save.isPending ? 'Saving…' : 'Save triage'}
        </button>
        {saved && !changed && <span role="status" className="muted">Saved.</span>}
      </div>
      {save.error && <ErrorMessage error={save.error} title="The triage was not saved" />}
    </form>
  );
}
