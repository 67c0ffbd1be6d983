// A refused form: the API's error as ErrorMessage shows it, plus the fields the API named
// (`details.fields` of a 422 validation_failed), which the shared component does not list.
import { ApiError } from '../../api/client.ts';
import { ErrorMessage } from '../../components/status.tsx';

interface FieldProblem {
  field: string;
  message: string;
}

export function fieldProblems(error: unknown): FieldProblem[] {
  if (!(error instanceof ApiError) || !Array.isArray(error.details.fields)) return [];
  return (error.details.fields as Array<Record<string, unknown>>).map((f) => ({ field: String(f.field ?? ''), message: String(f.message ?? '') }));
}

/** The problem the API found with one field, if any (to mark that input aria-invalid). */
export function problemWith(error: unknown, field: string): string | undefined {
  return fieldProblems(error).find((p) => p.field === field || p.field.endsWith(`/${field}`) || p.field.endsWith(`.${field}`))?.message;
}

export function FormError({ error, title = 'The server refused this' }: { error: unknown; title?: string }) {
  if (!error) return null;
  const fields = fieldProblems(error);
  return (
    <div>
      <ErrorMessage error={error} title={title} />
      {fields.length > 0 && (
        <ul className="field-errors" aria-label="Fields to correct">
          {fields.map((f, i) => (
            <li key={i}>
              <code>{f.field || 'body'}</code>: {f.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
