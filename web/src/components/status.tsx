// Loading, empty and error states, the same on every page. Errors show the API's own message and
// code (and the request id to quote), never a blank page.
import type { ReactNode } from 'react';
import { ApiError } from '../api/client.ts';

export function Loading({ label = 'Loading' }: { label?: string }) {
  return (
    <p className="loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

/** One problem the API named with a field of the request (`details.fields` of a 400/422). */
export interface FieldProblem {
  field: string;
  message: string;
}

export function fieldProblems(error: unknown): FieldProblem[] {
  if (!(error instanceof ApiError) || !Array.isArray(error.details.fields)) return [];
  return (error.details.fields as unknown[]).flatMap((f) => {
    if (typeof f !== 'object' || f === null) return [];
    const { field, message } = f as Record<string, unknown>;
    return [{ field: typeof field === 'string' ? field : '', message: typeof message === 'string' ? message : 'is invalid' }];
  });
}

/** The problem the API found with one field, if any (to mark that input aria-invalid). */
export function problemWith(error: unknown, field: string): string | undefined {
  return fieldProblems(error).find((p) => p.field === field || p.field.endsWith(`/${field}`) || p.field.endsWith(`.${field}`))?.message;
}

/**
 * The API's refusal as the page shows it: its message, code and request id, then what it named —
 * the fields to correct (under the form's own labels, `fieldLabels`: API name → label), the reasons
 * a document was refused, and per-item problems (`details.errors`, `.rows`). Nothing without an error.
 */
export function ErrorMessage({ error, title = 'Something went wrong', fieldLabels = {} }: { error: unknown; title?: string; fieldLabels?: Record<string, string> }) {
  if (error === null || error === undefined) return null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div className="error" role="alert">
      <strong>{title}</strong>
      <p>{message}</p>
      {error instanceof ApiError && (
        <>
          <p className="error-meta">
            <code>{error.code}</code> · HTTP {error.status}
            {error.requestId && <> · request {error.requestId}</>}
          </p>
          <FieldList problems={fieldProblems(error)} labels={fieldLabels} />
          <ItemList label="Why it was refused" items={error.details.reasons} />
          <ItemList label="Problems" items={[...asArray(error.details.errors), ...asArray(error.details.rows)]} />
        </>
      )}
    </div>
  );
}

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function FieldList({ problems, labels }: { problems: FieldProblem[]; labels: Record<string, string> }) {
  if (problems.length === 0) return null;
  return (
    <ul className="field-problems" aria-label="Fields to correct">
      {problems.map((p, i) => {
        const label = labels[p.field.split(/[./[]/)[0] ?? ''];
        return (
          <li key={i}>
            {label ? <><strong>{label}</strong> (<code>{p.field}</code>)</> : <code>{p.field || 'request'}</code>}: {p.message}
          </li>
        );
      })}
    </ul>
  );
}

function ItemList({ label, items }: { label: string; items: unknown }) {
  const list = asArray(items);
  if (list.length === 0) return null;
  const line = (item: unknown) =>
    item !== null && typeof item === 'object'
      ? Object.entries(item as Record<string, unknown>).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' · ')
      : String(item);
  return (
    <ul className="error-details" aria-label={label}>
      {list.slice(0, 20).map((item, i) => (
        <li key={i}>{line(item)}</li>
      ))}
      {list.length > 20 && <li>…and {list.length - 20} more</li>}
    </ul>
  );
}
