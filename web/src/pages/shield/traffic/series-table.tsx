// The chart's numbers as a table: the accessible alternative to the canvas, collapsed by default.
import { ACTION_LABEL, ACTIONS, type Analytics } from './actions.ts';

function bucketLabel(start: string, granularity: Analytics['granularity']): string {
  const date = new Date(start);
  if (granularity === 'day') return date.toLocaleDateString(undefined, { timeZone: 'UTC' });
  return date.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' });
}

export function SeriesTable({ data }: { data: Analytics }) {
  return (
    <details className="traffic-details">
      <summary>Show the chart's data as a table</summary>
      <div className="table-wrap">
        <table>
          <caption>Requests by action, one row per {data.granularity}</caption>
          <thead>
            <tr>
              <th scope="col">{data.granularity === 'day' ? 'Day (UTC)' : 'Starting at'}</th>
              <th scope="col" className="num">
                Requests
              </th>
              {ACTIONS.map((action) => (
                <th key={action} scope="col" className="num">
                  {ACTION_LABEL[action]}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {data.timeseries.map((point) => (
              <tr key={point.start}>
                <th scope="row">
                  <time dateTime={point.start}>{bucketLabel(point.start, data.granularity)}</time>
                </th>
                <td className="num">{point.requests}</td>
                {ACTIONS.map((action) => (
                  <td key={action} className="num">
                    {point[action]}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}
