// A scan against its baseline (the previous completed scan of the same target): findings new,
// fixed and unchanged. Counts first; a few of the new and fixed ones, linked to the findings page.
import { useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import { api, ok } from '../../api/client.ts';
import type { Answer } from '../../api/types.ts';
import { SeverityBadge } from '../../components/badges.tsx';
import { Empty, ErrorMessage, Loading } from '../../components/status.tsx';
import { whereOf } from '../../components/location.ts';
import type { Scan } from './model.ts';

type Diff = Answer<'/api/v1/scans/{id}/diff'>;
const SHOWN = 10;

export function ScanDiff({ scan }: { scan: Scan }) {
  const diff = useQuery({
    queryKey: ['scans', 'diff', scan.id, scan.status],
    queryFn: () => ok(api.GET('/api/v1/scans/{id}/diff', { params: { path: { id: scan.id } } })),
    enabled: scan.status === 'completed',
  });
  return (
    <section aria-labelledby="scan-diff">
      <h2 id="scan-diff">Against the baseline</h2>
      {scan.status !== 'completed' ? (
        <Empty>The comparison is made once the scan completes.</Empty>
      ) : diff.isPending ? (
        <Loading label="Comparing with the baseline" />
      ) : diff.isError ? (
        <ErrorMessage error={diff.error} title="The comparison could not be loaded" />
      ) : (
        <DiffBody diff={diff.data} />
      )}
    </section>
  );
}

function DiffBody({ diff }: { diff: Diff }) {
  return (
    <>
      <p>
        {diff.baseline_id ? (
          <>Compared with <Link href={`/${diff.baseline_id}`}>the previous scan of this target</Link>.</>
        ) : (
          <>No earlier completed scan of this target: every finding is new.</>
        )}
      </p>
      <div className="cards">
        <div className="card"><h3>New</h3><p className="stat" data-testid="diff-new">{diff.counts.new}</p></div>
        <div className="card"><h3>Fixed</h3><p className="stat" data-testid="diff-fixed">{diff.counts.fixed}</p></div>
        <div className="card"><h3>Unchanged</h3><p className="stat">{diff.counts.unchanged}</p></div>
      </div>
      {diff.baseline_id && <DiffList title="New since the baseline" rows={diff.new} />}
      <DiffList title="Fixed since the baseline" rows={diff.fixed} />
    </>
  );
}

function DiffList({ title, rows }: { title: string; rows: Diff['new'] }) {
  if (rows.length === 0) return null;
  return (
    <>
      <h3>{title}</h3>
      <ul>
        {rows.slice(0, SHOWN).map((f) => (
          <li key={f.id}>
            <SeverityBadge severity={f.severity} /> <Link href={`~/findings/${f.id}`}>{f.title}</Link> <span className="muted">{whereOf(f.location)}</span>
          </li>
        ))}
      </ul>
      {rows.length > SHOWN && <p className="muted">and {rows.length - SHOWN} more.</p>}
    </>
  );
}
