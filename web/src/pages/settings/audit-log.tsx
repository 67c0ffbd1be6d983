// Settings, Audit log: who did what, newest first, filtered as the API filters, a page at a time,
// and the same filtered range as a CSV download (`?format=csv`, streamed by the API). Admin only.
import { useState } from 'react';
import { api, ok } from '../../api/client.ts';
import { hasScope, useMe } from '../../api/session.ts';
import { Time } from '../../components/badges.tsx';
import { Pager, usePagedList } from '../../components/list.tsx';
import { Empty, ErrorMessage, Loading } from '../../components/status.tsx';
import { AuditFiltersForm, auditQuery, NO_FILTERS, type AuditFilters } from './audit-log-filters.tsx';
import './api-keys.css';

export default function AuditLogPage() {
  const me = useMe();
  // Until the caller is known, neither the page nor the notice (no flash of the wrong one).
  const isAdmin = hasScope(me.data, 'admin');
  return (
    <section aria-labelledby="audit-log-heading">
      <h2 id="audit-log-heading">Audit log</h2>
      <p className="settings-intro">Every change to keys, members, sessions, SSO and billing, with who made it and from where.</p>
      {me.isPending ? <Loading /> : isAdmin ? <AuditLog /> : <p className="notice">Only owners and admins can read the audit log.</p>}
    </section>
  );
}

/** The action's facts, one per line (values that are not text as JSON). */
function Metadata({ facts }: { facts: Record<string, unknown> }) {
  const entries = Object.entries(facts);
  if (entries.length === 0) return <>—</>;
  return (
    <ul className="audit-metadata">
      {entries.map(([name, value]) => (
        <li key={name}><span className="muted">{name}:</span> {typeof value === 'string' ? value : JSON.stringify(value)}</li>
      ))}
    </ul>
  );
}

function csvHref(filters: AuditFilters): string {
  const params = new URLSearchParams({ format: 'csv', ...auditQuery(filters) });
  return `/api/v1/audit-log?${params.toString()}`;
}

/** A JSON page (the route can also answer CSV, which only the download link asks for). */
async function auditPage(query: ReturnType<typeof auditQuery> & { cursor: string | undefined }) {
  const page = await ok(api.GET('/api/v1/audit-log', { params: { query: { ...query, format: 'json' } } }));
  if (typeof page === 'string') throw new Error('the audit log answered CSV where JSON was asked for');
  return page;
}

function AuditLog() {
  const [filters, setFilters] = useState<AuditFilters>(NO_FILTERS);
  const query = auditQuery(filters);
  const list = usePagedList(['audit-log', query], (cursor) => auditPage({ ...query, cursor }));
  return (
    <>
      <AuditFiltersForm applied={filters} onApply={setFilters} />
      <p>
        <a className="button" href={csvHref(filters)} download="audit-log.csv">Download CSV</a>{' '}
        <span className="muted">All events matching the filters (up to 100,000 rows).</span>
      </p>
      {list.isPending ? (
        <Loading label="Loading the audit log" />
      ) : list.error ? (
        <ErrorMessage error={list.error} title="The audit log could not be loaded" />
      ) : list.rows.length === 0 ? (
        <Empty>No events match.</Empty>
      ) : (
        <div className="table-wrap" tabIndex={0} role="region" aria-label="Audit events">
          <table>
            <caption className="visually-hidden">Audit events, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Actor</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">IP address</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {list.rows.map((event) => (
                <tr key={event.id}>
                  <td><Time at={event.created_at} /></td>
                  <td>{event.actor.type} <code>{event.actor.id}</code></td>
                  <th scope="row"><code>{event.action}</code></th>
                  <td>{event.target ? <>{event.target.type} <code>{event.target.id}</code></> : '—'}</td>
                  <td>{event.ip ?? '—'}</td>
                  <td><Metadata facts={event.metadata} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager list={list} label="Audit log pages" />
    </>
  );
}
