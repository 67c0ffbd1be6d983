// All scans of the organisation, newest first, a page at a time, filtered as the API filters
// (type, status, target). While any scan on the page is queued or running the page polls, so
// progress and results appear without a reload.
import { useState } from 'react';
import { Link } from 'wouter';
import { api, ok } from '../../api/client.ts';
import { useCan } from '../../api/session.ts';
import { SeverityBadge, Time } from '../../components/badges.tsx';
import { Field } from '../../components/forms.tsx';
import { Pager, usePagedList } from '../../components/list.tsx';
import { PageHeader } from '../../components/page.tsx';
import { Empty, ErrorMessage, Loading } from '../../components/status.tsx';
import { LIVE_INTERVAL_MS, SCAN_KINDS, SCAN_STATUSES, formatDuration, isActive, kindLabel, type Scan } from './model.ts';
import { ScanProgress } from './progress.tsx';

interface Filters {
  scan_type: string;
  status: string;
  target: string;
}

export function ScanList() {
  const canWrite = useCan('scans:write');
  const [filters, setFilters] = useState<Filters>({ scan_type: '', status: '', target: '' });
  const [live, setLive] = useState(false);
  const query = {
    ...(filters.scan_type ? { scan_type: filters.scan_type } : {}),
    ...(filters.status ? { status: filters.status } : {}),
    ...(filters.target.trim() ? { target: filters.target.trim() } : {}),
  };
  const list = usePagedList(['scans', query], (cursor) => ok(api.GET('/api/v1/scans', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } } })), {
    refetchInterval: live ? LIVE_INTERVAL_MS : false,
  });
  // Poll only while something on this page can still change (adjusted during render).
  const moving = list.rows.some((s) => isActive(s.status));
  if (moving !== live) setLive(moving);

  return (
    <>
      <PageHeader
        title="Scans"
        actions={canWrite && <Link href="/new" className="button button-primary">Start a scan</Link>}
      >
        <p className="muted">Code scans (secrets, SAST, SCA) and URL scans (DAST, API, CVE) of this organisation.</p>
      </PageHeader>
      <form className="filters" role="search" aria-label="Filter scans" onSubmit={(e) => e.preventDefault()}>
        <Field label="Type">
          {(props) => (
            <select {...props} value={filters.scan_type} onChange={(e) => setFilters({ ...filters, scan_type: e.target.value })}>
              <option value="">All types</option>
              {SCAN_KINDS.map((k) => <option key={k.kind} value={k.kind}>{k.label}</option>)}
            </select>
          )}
        </Field>
        <Field label="Status">
          {(props) => (
            <select {...props} value={filters.status} onChange={(e) => setFilters({ ...filters, status: e.target.value })}>
              <option value="">All statuses</option>
              {SCAN_STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
            </select>
          )}
        </Field>
        <Field label="Target">
          {(props) => <input {...props} type="search" placeholder="exact target" value={filters.target} onChange={(e) => setFilters({ ...filters, target: e.target.value })} />}
        </Field>
      </form>
      {list.error ? (
        <ErrorMessage error={list.error} title="Scans could not be loaded" />
      ) : list.isPending ? (
        <Loading label="Loading scans" />
      ) : list.rows.length === 0 ? (
        <Empty>{Object.keys(query).length ? 'No scan matches these filters.' : 'No scans yet.'}{canWrite && !Object.keys(query).length && <> <Link href="/new">Start a scan</Link>.</>}</Empty>
      ) : (
        <ScanTable scans={list.rows} />
      )}
      <Pager list={list} label="Pages of scans" />
    </>
  );
}

function ScanTable({ scans }: { scans: Scan[] }) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">Scans, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Target</th>
            <th scope="col">Type</th>
            <th scope="col">Status</th>
            <th scope="col">Findings</th>
            <th scope="col">Created</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {scans.map((scan) => (
            <tr key={scan.id} data-testid="scan-row">
              <td className="scan-target">
                <Link href={`/${scan.id}`}>{scan.target}</Link>
              </td>
              <td>{kindLabel(scan.scan_type)}</td>
              <td><ScanProgress scan={scan} /></td>
              <td><SeverityCounts summary={scan.summary} /></td>
              <td><Time at={scan.created_at} /></td>
              <td>{formatDuration(scan.duration_ms)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The non-zero severities of a scan's summary, most severe first, and the total. */
export function SeverityCounts({ summary }: { summary: Scan['summary'] }) {
  const counts = (['critical', 'high', 'medium', 'low', 'info'] as const).filter((s) => (summary[s] ?? 0) > 0);
  if (summary.total === undefined) return <span className="muted">—</span>;
  return (
    <ul className="severity-counts" aria-label={`${summary.total} findings`}>
      <li><strong>{summary.total}</strong></li>
      {counts.map((s) => (
        <li key={s}><SeverityBadge severity={s} /> {summary[s]}</li>
      ))}
    </ul>
  );
}
