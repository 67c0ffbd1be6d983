// Shield blocks over the last 24 hours, in total and for the sites with most blocks.
import { Link } from 'wouter';
import { Empty } from '../../components/status.tsx';
import type { Overview } from './index.tsx';

type Shield = NonNullable<Overview['shield']>;

export function ShieldBlocks({ shield }: { shield: Shield }) {
  return (
    <section aria-labelledby="shield-blocks-heading" className="overview-panel">
      <h2 id="shield-blocks-heading">Shield blocks, last 24 hours</h2>
      <p>
        <span className="stat" data-testid="blocked-total">{shield.blocked}</span> blocked of {shield.requests} requests
      </p>
      {shield.sites.length === 0 ? (
        <Empty>No Shield sites yet. <Link href="/shield">Add a site</Link>.</Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Blocks per site</caption>
            <thead>
              <tr>
                <th scope="col">Site</th>
                <th scope="col">Mode</th>
                <th scope="col" className="num">Blocked</th>
                <th scope="col" className="num">Requests</th>
              </tr>
            </thead>
            <tbody>
              {shield.sites.map((s) => (
                <tr key={s.id} data-testid="site-blocks">
                  <td><Link href={`/shield/sites/${s.id}`}>{s.domain}</Link></td>
                  <td>{s.mode}</td>
                  <td className="num">{s.blocked}</td>
                  <td className="num">{s.requests}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {shield.sites_total > shield.sites.length && <p className="muted">{shield.sites_total - shield.sites.length} more sites.</p>}
    </section>
  );
}
