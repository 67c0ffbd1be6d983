// The latest scans with their status; the Scans page has the rest.
import { Link } from 'wouter';
import { StatusBadge, Time } from '../../components/badges.tsx';
import { Empty } from '../../components/status.tsx';
import type { Overview } from './index.tsx';

type Scans = NonNullable<Overview['scans']>;

export function RecentScans({ scans }: { scans: Scans }) {
  return (
    <section aria-labelledby="recent-scans-heading" className="overview-panel">
      <h2 id="recent-scans-heading">Recent scans</h2>
      {scans.active > 0 && <p className="muted">{scans.active} queued or running.</p>}
      {scans.recent.length === 0 ? (
        <Empty>No scans yet. <Link href="/scans">Start a scan</Link>.</Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Recent scans</caption>
            <thead>
              <tr>
                <th scope="col">Scan</th>
                <th scope="col">Status</th>
                <th scope="col">Started</th>
              </tr>
            </thead>
            <tbody>
              {scans.recent.map((s) => (
                <tr key={s.id} data-testid="recent-scan">
                  <td>
                    <Link href={`/scans/${s.id}`}>{s.scan_type}</Link>
                    <div className="muted overview-target">{s.target}</div>
                  </td>
                  <td>
                    <StatusBadge status={s.status} />
                    {s.status === 'running' && <> {Math.round(s.progress * 100)}%</>}
                  </td>
                  <td><Time at={s.created_at} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p><Link href="/scans">All scans</Link></p>
    </section>
  );
}
