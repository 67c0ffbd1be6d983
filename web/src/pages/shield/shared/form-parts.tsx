// Pieces every Shield form repeats: the labels box, the Save/Cancel row (with room for the form's
// other actions, such as Preview impact), and read-only facts of an object that cannot change.
import type { ReactNode } from 'react';
import { Field } from '../../../components/forms.tsx';
import { labelsToText, type Labels } from './labels.ts';

export function LabelsField({ labels }: { labels?: Labels | null }) {
  return (
    <Field label="Labels" hint="One key=value a line, e.g. team=payments.">
      {(p) => <textarea {...p} name="labels" rows={3} defaultValue={labelsToText(labels)} spellCheck={false} />}
    </Field>
  );
}

export function FormActions({ busy, onCancel, label, extra }: { busy: boolean; onCancel(): void; label: string; extra?: ReactNode }) {
  return (
    <div className="actions">
      {extra}
      <button type="button" onClick={onCancel}>Cancel</button>
      <button type="submit" className="button-primary" disabled={busy}>{busy ? 'Saving…' : label}</button>
    </div>
  );
}

export const HTTP_METHODS = ['ANY', 'GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
