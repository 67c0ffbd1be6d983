// Findings: every filter of the API, server-side sort, one page at a time through the cursor.
import { Link } from 'wouter';
import { api, ok } from '../../api/client.ts';
import { Pager, usePagedList } from '../../components/list.tsx';
import { PageHeader } from '../../components/page.tsx';
import { Empty, ErrorMessage, Loading } from '../../components/status.tsx';
import { FindingFilters } from './filters.tsx';
import { findingsKey, type Sort } from './model.ts';
import { FindingsTable } from './table.tsx';
import { toApiQuery, useListState } from './url-state.ts';

export function FindingsList() {
  const [state, update] = useListState();
  const list = usePagedList([...findingsKey, 'list', state], (cursor) => ok(api.GET('/api/v1/vulnerabilities', { params: { query: toApiQuery(state, cursor) } })));
  const filtered = Object.keys(state).some((k) => k !== 'sort' && k !== 'limit');
  return (
    <>
      <PageHeader title="Findings">
        <p className="muted">Every finding of every scan, deduplicated per target.</p>
      </PageHeader>
      <FindingFilters state={state} onChange={update} />
      {list.isPending ? (
        <Loading label="Loading findings" />
      ) : list.error ? (
        <ErrorMessage error={list.error} title="The findings could not be loaded" />
      ) : list.rows.length === 0 ? (
        <Empty>{filtered ? 'No finding matches these filters.' : <>No findings yet. <Link href="~/scans">Start a scan</Link> to find some.</>}</Empty>
      ) : (
        <FindingsTable rows={list.rows} sort={state.sort as Sort | undefined} onSort={(sort) => update({ sort })} />
      )}
      <Pager list={list} label="Finding pages" />
    </>
  );
}
