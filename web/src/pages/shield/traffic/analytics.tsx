// A Shield site's analytics: date range, totals, the time series of requests by action (chart +
// data table), and the top lists. Mounted by the site page under its h1, so headings start at h2.
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ok } from '../../../api/client.ts';
import { ErrorMessage, Loading } from '../../../components/status.tsx';
import { ACTION_LABEL, ACTIONS, type Analytics } from './actions.ts';
import { RequestsChart } from './chart.tsx';
import { DEFAULT_RANGE, labelOf, queryOf, type Range } from './range.ts';
import { RangePicker } from './range-picker.tsx';
import { SeriesTable } from './series-table.tsx';
import { TopTables } from './top-tables.tsx';
import './traffic.css';

export function SiteAnalytics({ siteId }: { siteId: string }) {
  const [range, setRange] = useState<Range>(DEFAULT_RANGE);
  const analytics = useQuery({
    queryKey: ['shield-analytics', siteId, range],
    // A preset is "up to now" when asked, so the instant is taken here, not when the range was picked.
    queryFn: () => ok(api.GET('/api/v1/shield/sites/{id}/analytics', { params: { path: { id: siteId }, query: queryOf(range) } })),
    // The previous range stays on screen (dimmed) while the next loads: no jump in the layout.
    placeholderData: keepPreviousData,
  });
  const data = analytics.data;

  return (
    <section className="traffic" aria-labelledby="traffic-analytics-heading">
      <div className="traffic-head">
        <h2 id="traffic-analytics-heading">Analytics</h2>
        <button type="button" onClick={() => void analytics.refetch()} disabled={analytics.isFetching}>
          Refresh
        </button>
      </div>
      <RangePicker value={range} onChange={setRange} />
      <p className="muted" aria-live="polite">
        {analytics.isFetching ? `Loading ${labelOf(range).toLowerCase()}…` : data ? <RangeNote data={data} range={range} /> : null}
      </p>
      {analytics.isError && <ErrorMessage error={analytics.error} title="The analytics could not be loaded" />}
      {!data && analytics.isPending && <Loading label="Loading analytics" />}
      {data && (
        <div className={analytics.isPlaceholderData ? 'traffic-stale' : undefined}>
          <Totals data={data} />
          <h3>Requests by action</h3>
          {data.totals.requests === 0 && <p className="empty">No requests reached this site in this range.</p>}
          <RequestsChart data={data} />
          <SeriesTable data={data} />
          <TopTables top={data.top} />
        </div>
      )}
    </section>
  );
}

function RangeNote({ data, range }: { data: Analytics; range: Range }) {
  const start = new Date(data.start).toLocaleString();
  const end = new Date(data.end).toLocaleString();
  return (
    <>
      {labelOf(range)}: {start} to {end}, one point per {data.granularity}.
    </>
  );
}

function Totals({ data }: { data: Analytics }) {
  return (
    <>
      <dl className="cards traffic-totals">
        <div className="card">
          <dt>Requests</dt>
          <dd className="stat">{data.totals.requests.toLocaleString()}</dd>
        </div>
        {ACTIONS.map((action) => (
          <div key={action} className="card">
            <dt>{ACTION_LABEL[action]}</dt>
            <dd className="stat">{data.totals[action].toLocaleString()}</dd>
          </div>
        ))}
      </dl>
      {data.sampled.length > 0 && (
        <p className="muted">
          The counts include every decision; the top lists count the {data.recorded.requests.toLocaleString()} stored events, of which {data.sampled.join(', ')} decisions
          are a sample.
        </p>
      )}
    </>
  );
}
