// The live decisions, newest first. Not a live region itself: a screen reader would be flooded;
// the status line above says what is happening.
import { ACTION_LABEL, RULE_LABEL } from './actions.ts';
import type { LiveDecision } from './stream.ts';

const timeOf = (at: string) => new Date(at).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

export function DecisionsTable({ rows, caption = 'Decisions, newest first', testId = 'live-decisions' }: { rows: readonly LiveDecision[]; caption?: string; testId?: string }) {
  return (
    <div className="table-wrap">
      <table className="traffic-live-table" data-testid={testId}>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Action</th>
            <th scope="col">Client IP</th>
            <th scope="col">Method</th>
            <th scope="col">Path</th>
            <th scope="col">Rule</th>
            <th scope="col" className="num">
              Status
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id}>
              <td>
                <time dateTime={row.time} title={row.time}>
                  {timeOf(row.time)}
                </time>
              </td>
              <td>
                <span className={`badge status-${row.action}`} title={ACTION_LABEL[row.action] ?? row.action}>
                  {row.action}
                </span>
                {row.would && <span className="muted"> (would {row.would})</span>}
              </td>
              <td>
                <code>{row.client_ip}</code>
              </td>
              <td>{row.method}</td>
              <td className="traffic-path-cell">
                <code>{row.path}</code>
              </td>
              <td>
                {row.rule_kind ? (
                  <>
                    {RULE_LABEL[row.rule_kind] ?? row.rule_kind} {row.rule_id && <code>{row.rule_id}</code>}
                  </>
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
              <td className="num">{row.status}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
