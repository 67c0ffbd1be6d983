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
      {error instanceof ApiError && Array.isArray(error.details.errors) && (
        <ul className="error-details">
          {(error.details.errors as Array<Record<string, unknown>>).slice(0, 20).map((detail, i) => (
            <li key={i}>{Object.entries(detail).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' · ')}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
