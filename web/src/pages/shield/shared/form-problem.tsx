// The API's refusal of a form, shown next to it: the message (ErrorMessage) and, for a 422, each
// field the API named (`details.fields`) under the label the form gives it, or the reasons a
// document was refused (`details.reasons`).
import { ApiError } from '../../../api/client.ts';
import { ErrorMessage } from '../../../components/status.tsx';

interface FieldProblem {
  field: string;
  message: string;
}

function fieldProblems(error: ApiError): FieldProblem[] {
  const fields = error.details.fields;
  if (!Array.isArray(fields)) return [];
  return fields.flatMap((f: unknown) => {
    if (typeof f !== 'object' || f === null) return [];
    const { field, message } = f as Record<string, unknown>;
    return [{ field: typeof field === 'string' ? field : '', message: typeof message === 'string' ? message : 'is invalid' }];
  });
}

function reasons(error: ApiError): string[] {
  const list = error.details.reasons;
  return Array.isArray(list) ? list.filter((r): r is string => typeof r === 'string') : [];
}

/** `fieldLabels` maps the API's field names (`origin_url`) to the form's labels (`Origin URL`). */
export function FormProblem({ error, fieldLabels = {} }: { error: unknown; fieldLabels?: Record<string, string> }) {
  if (!error) return null;
  const fields = error instanceof ApiError ? fieldProblems(error) : [];
  const why = error instanceof ApiError ? reasons(error) : [];
  return (
    <div className="form-problem">
      <ErrorMessage error={error} title="Not saved" />
      {fields.length > 0 && (
        <ul className="field-problems" aria-label="Problems by field">
          {fields.map((f, i) => (
            <li key={i}>
              <strong>{fieldLabels[f.field.split(/[.[]/)[0] ?? ''] ?? f.field}</strong>
              {fieldLabels[f.field.split(/[.[]/)[0] ?? ''] && <> (<code>{f.field}</code>)</>}: {f.message}
            </li>
          ))}
        </ul>
      )}
      {why.length > 0 && (
        <ul className="field-problems" aria-label="Why the document was refused">
          {why.slice(0, 50).map((r, i) => (
            <li key={i}>{r}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
