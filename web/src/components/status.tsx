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

export function ErrorMessage({ error, title = 'Something went wrong' }: { error: unknown; title?: string }) {
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div className="error" role="alert">
      <strong>{title}</strong>
      <p>{message}</p>
      {error instanceof ApiError && (
        <p className="error-meta">
          <code>{error.code}</code> · HTTP {error.status}
          {error.requestId && <> · request {error.requestId}</>}
        </p>
      )}
      {error instanceof ApiError && <DetailList details={error.details} />}
    </div>
  );
}

/** The API's per-item problems (`details.fields`, `.errors`, `.rows`, `.reasons`), one line each. */
const ITEM_LISTS = ['fields', 'errors', 'rows', 'reasons'] as const;

function DetailList({ details }: { details: Record<string, unknown> }) {
  const items = ITEM_LISTS.flatMap((key) => (Array.isArray(details[key]) ? (details[key] as unknown[]) : []));
  if (items.length === 0) return null;
  const line = (item: unknown) =>
    item !== null && typeof item === 'object'
      ? Object.entries(item as Record<string, unknown>).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' · ')
      : String(item);
  return (
    <ul className="error-details">
      {items.slice(0, 20).map((item, i) => (
        <li key={i}>{line(item)}</li>
      ))}
      {items.length > 20 && <li>…and {items.length - 20} more</li>}
    </ul>
  );
}
