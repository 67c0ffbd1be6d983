// The CSV import of IP access rules (POST …/ip-access/import, text/csv). The API takes a file all
// or nothing: when any row is refused it answers 422 with every bad row in `details.rows` (line,
// column, reason) and imports none, which this dialog says before and shows after, row by row.
import { useState } from 'react';
import { ApiError, send } from '../../../api/client.ts';
import type { Answer } from '../../../api/types.ts';
import { Modal } from '../../../components/dialog.tsx';
import { Field, useWrite } from '../../../components/forms.tsx';
import { ErrorMessage } from '../../../components/status.tsx';
import { rulesKey } from '../shared/api.ts';

export type ImportOutcome = Answer<'/api/v1/shield/sites/{id}/ip-access/import', 'post'>;

interface RowProblem {
  line: number;
  column: string | null;
  reason: string;
}

function rowProblems(error: unknown): RowProblem[] {
  if (!(error instanceof ApiError) || !Array.isArray(error.details.rows)) return [];
  return error.details.rows.flatMap((r: unknown) => {
    if (typeof r !== 'object' || r === null) return [];
    const { line, column, reason } = r as Record<string, unknown>;
    return typeof line === 'number' ? [{ line, column: typeof column === 'string' ? column : null, reason: typeof reason === 'string' ? reason : 'refused' }] : [];
  });
}

const SAMPLE = 'type,value,action,note\nip,203.0.113.7,deny,scanner\ncidr,198.51.100.0/24,challenge,\ncountry,NL,allow,office';

export function CsvImport({ siteId, open, onClose, onImported }: { siteId: string; open: boolean; onClose(): void; onImported(outcome: ImportOutcome): void }) {
  const [csv, setCsv] = useState('');
  const [skip, setSkip] = useState(false);
  const upload = useWrite(
    (body: string) =>
      send<ImportOutcome>(`/api/v1/shield/sites/${encodeURIComponent(siteId)}/ip-access/import${skip ? '?on_conflict=skip' : ''}`, {
        method: 'POST',
        headers: { 'content-type': 'text/csv' },
        body,
      }),
    [rulesKey(siteId, 'ip-access')],
    (outcome) => {
      setCsv('');
      upload.reset();
      onImported(outcome);
    },
  );
  const problems = rowProblems(upload.error);
  // The lines of what was sent, to show each refused row's content beside its line number.
  const lines = (upload.variables ?? '').split(/\r?\n/);
  const readFile = async (file: File | undefined) => {
    if (file) setCsv(await file.text());
  };
  const close = () => {
    upload.reset();
    onClose();
  };

  return (
    <Modal open={open} title="Import IP access rules" onClose={close}>
      <form className="shield-form" onSubmit={(e) => { e.preventDefault(); upload.mutate(csv); }}>
        <p className="notice">
          All or nothing: if any row is refused, <strong>none</strong> of the rows is imported, and every refused row is listed here to fix.
        </p>
        <p className="muted">
          A header row <code>type,value,action,note</code> (and optionally <code>expires_at</code>), then one rule a line. Up to 100 000 rows and 10 MiB.
        </p>
        <Field label="CSV file">
          {(p) => <input {...p} type="file" accept=".csv,text/csv" onChange={(e) => void readFile(e.currentTarget.files?.[0])} />}
        </Field>
        <Field label="Or paste the CSV" hint="For example: ip,203.0.113.7,deny,scanner">
          {(p) => <textarea {...p} name="csv" rows={8} spellCheck={false} value={csv} onChange={(e) => setCsv(e.currentTarget.value)} placeholder={SAMPLE} />}
        </Field>
        <div className="field">
          <label>
            <input type="checkbox" checked={skip} onChange={(e) => setSkip(e.currentTarget.checked)} /> Skip rows that duplicate an existing rule or an earlier row (instead of refusing the file)
          </label>
        </div>
        {upload.error !== null && problems.length === 0 && <ErrorMessage error={upload.error} title="Nothing was imported" />}
        {problems.length > 0 && (
          <div role="alert">
            <p className="error">
              <strong>Nothing was imported.</strong> {problems.length} problem{problems.length === 1 ? '' : 's'} in the file: fix {problems.length === 1 ? 'it' : 'them'} and import again.
            </p>
            <div className="table-wrap">
              <table className="shield-import-errors">
                <caption>Refused rows</caption>
                <thead>
                  <tr>
                    <th scope="col">Line</th>
                    <th scope="col">Column</th>
                    <th scope="col">Row</th>
                    <th scope="col">Problem</th>
                  </tr>
                </thead>
                <tbody>
                  {problems.slice(0, 500).map((p, i) => (
                    <tr key={i}>
                      <td className="num">{p.line}</td>
                      <td>{p.column ?? '—'}</td>
                      <td><code className="shield-cell-code">{lines[p.line - 1] ?? ''}</code></td>
                      <td>{p.reason}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            {problems.length > 500 && <p className="muted">And {problems.length - 500} more.</p>}
          </div>
        )}
        <div className="actions">
          <button type="button" onClick={close}>Cancel</button>
          <button type="submit" className="button-primary" disabled={upload.isPending || csv.trim() === ''}>{upload.isPending ? 'Importing…' : 'Import'}</button>
        </div>
      </form>
    </Modal>
  );
}
