// The findings table. Sortable columns are header buttons that ask the server for that order (the
// list is paginated, so sorting a page in the browser would be wrong); aria-sort says the current one.
import { Link } from 'wouter';
import { SeverityBadge, StatusBadge, Time } from '../../components/badges.tsx';
import { whereOf } from '../../components/location.ts';
import type { Finding, Sort } from './model.ts';

type SortField = 'severity' | 'first_seen_at' | 'last_seen_at';

function SortHeader({ field, label, sort, onSort }: { field: SortField; label: string; sort: Sort | undefined; onSort(sort: Sort): void }) {
  const current = sort === field ? 'ascending' : sort === `-${field}` ? 'descending' : undefined;
  // First click: most severe / newest first; then the other way.
  const next = (current === 'descending' ? field : `-${field}`) as Sort;
  return (
    <th scope="col" aria-sort={current ?? 'none'}>
      <button type="button" onClick={() => onSort(next)}>
        {label}
        <span aria-hidden="true">{current === 'ascending' ? ' ▲' : current === 'descending' ? ' ▼' : ''}</span>
        <span className="visually-hidden">{current ? `, sorted ${current}` : ', sortable'}</span>
      </button>
    </th>
  );
}

export function FindingsTable({ rows, sort, onSort }: { rows: Finding[]; sort: Sort | undefined; onSort(sort: Sort): void }) {
  return (
    <div className="table-wrap">
      <table className="findings-table">
        <caption className="visually-hidden">Findings</caption>
        <thead>
          <tr>
            <SortHeader field="severity" label="Severity" sort={sort} onSort={onSort} />
            <th scope="col">Finding</th>
            <th scope="col">Status</th>
            <th scope="col">Type</th>
            <SortHeader field="first_seen_at" label="First seen" sort={sort} onSort={onSort} />
            <SortHeader field="last_seen_at" label="Last seen" sort={sort} onSort={onSort} />
          </tr>
        </thead>
        <tbody>
          {rows.map((f) => (
            <tr key={f.id} data-testid="finding-row">
              <td><SeverityBadge severity={f.severity} /></td>
              <td>
                <Link href={`/${f.id}`}>{f.title}</Link>
                <div className="muted finding-where">{whereOf(f.location)}</div>
                {f.cwe && <div className="muted">{f.cwe}</div>}
              </td>
              <td>
                <StatusBadge status={f.status} />
                {f.false_positive && <> <span className="badge">false positive</span></>}
              </td>
              <td>{f.scan_type}</td>
              <td><Time at={f.first_seen_at} /></td>
              <td><Time at={f.last_seen_at} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
