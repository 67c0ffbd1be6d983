// One scan: what it scanned and how it went (polled while it moves), its findings, the diff against
// its baseline, its coverage, the SARIF report, and Cancel while it is queued or running.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { api, ok } from '../../api/client.ts';
import { useCan } from '../../api/session.ts';
import { SeverityBadge, Time } from '../../components/badges.tsx';
import { ConfirmDialog } from '../../components/dialog.tsx';
import { useWrite } from '../../components/forms.tsx';
import { PageHeader } from '../../components/page.tsx';
import { Empty, ErrorMessage, Loading } from '../../components/status.tsx';
import { whereOf } from '../../components/location.ts';
import { ScanCoverage } from './coverage.tsx';
import { ScanDiff } from './diff.tsx';
import { SeverityCounts } from './list.tsx';
import { LIVE_INTERVAL_MS, formatDuration, isActive, kindLabel, type Scan } from './model.ts';
import { ScanProgress } from './progress.tsx';

/** Findings listed here; the findings page pages through the rest. */
const FINDINGS_SHOWN = 10;

export function ScanDetail({ id }: { id: string }) {
  const scan = useQuery({
    queryKey: ['scans', 'detail', id],
    queryFn: () => ok(api.GET('/api/v1/scans/{id}', { params: { path: { id } } })),
    refetchInterval: (query) => (query.state.data && isActive(query.state.data.status) ? LIVE_INTERVAL_MS : false),
  });
  if (scan.isPending) return <><PageHeader title="Scan" /><Loading label="Loading the scan" /></>;
  if (scan.isError) return <><PageHeader title="Scan" /><ErrorMessage error={scan.error} title="The scan could not be loaded" /></>;
  const s = scan.data;
  return (
    <>
      <PageHeader title={`${kindLabel(s.scan_type)} scan`} actions={<ScanActions scan={s} />}>
        <p className="scan-target muted">{s.target}</p>
      </PageHeader>
      <Summary scan={s} />
      <Findings scan={s} />
      <ScanDiff scan={s} />
      <ScanCoverage scan={s} />
    </>
  );
}

function ScanActions({ scan }: { scan: Scan }) {
  const canWrite = useCan('scans:write');
  const [confirming, setConfirming] = useState(false);
  const cancel = useWrite(() => ok(api.DELETE('/api/v1/scans/{id}', { params: { path: { id: scan.id } } })), [['scans']], () => setConfirming(false));
  return (
    <>
      <Link href="/">All scans</Link>
      {scan.status === 'completed' && (
        <a className="button" href={`/api/v1/scans/${encodeURIComponent(scan.id)}/sarif`} download={`scan-${scan.id}.sarif.json`}>
          Download SARIF
        </a>
      )}
      {canWrite && isActive(scan.status) && (
        <button type="button" className="button-danger" onClick={() => setConfirming(true)}>Cancel scan</button>
      )}
      <ConfirmDialog
        open={confirming}
        title="Cancel this scan?"
        confirmLabel="Cancel scan"
        danger
        busy={cancel.isPending}
        onConfirm={() => cancel.mutate(undefined)}
        onCancel={() => setConfirming(false)}
      >
        <p>The scan stops within about a second and reports nothing. This cannot be undone; start a new scan to scan again.</p>
        <ErrorMessage error={cancel.error} title="The scan was not canceled" />
      </ConfirmDialog>
    </>
  );
}

function Summary({ scan }: { scan: Scan }) {
  const source = scan.source as Record<string, unknown>;
  const ref = typeof source.ref === 'string' ? source.ref : null;
  const commit = typeof source.commit === 'string' ? source.commit : null;
  return (
    <section aria-labelledby="scan-summary">
      <h2 id="scan-summary">Summary</h2>
      <dl className="facts">
        <dt>Status</dt>
        <dd><ScanProgress scan={scan} /></dd>
        <dt>Findings</dt>
        <dd>{scan.status === 'completed' ? <SeverityCounts summary={scan.summary} /> : <span className="muted">when the scan completes</span>}</dd>
        <dt>Target</dt>
        <dd>{scan.target}</dd>
        {ref && <><dt>Ref</dt><dd>{ref}</dd></>}
        {commit && <><dt>Commit</dt><dd><code>{commit.slice(0, 12)}</code></dd></>}
        <dt>Created</dt>
        <dd><Time at={scan.created_at} /></dd>
        <dt>Started</dt>
        <dd><Time at={scan.started_at} /></dd>
        <dt>Finished</dt>
        <dd><Time at={scan.finished_at} /></dd>
        <dt>Duration</dt>
        <dd>{formatDuration(scan.duration_ms)}</dd>
        {scan.schedule_id && <><dt>Schedule</dt><dd><code>{scan.schedule_id}</code></dd></>}
      </dl>
      {scan.error && <ErrorMessage error={new Error(scan.error)} title="The scan failed" />}
    </section>
  );
}

/** The first findings seen by the scan; the findings page has them all, filterable. */
function Findings({ scan }: { scan: Scan }) {
  const findings = useQuery({
    queryKey: ['scans', 'findings', scan.id, scan.status],
    queryFn: () => ok(api.GET('/api/v1/vulnerabilities', { params: { query: { scan_id: scan.id, limit: FINDINGS_SHOWN } } })),
    enabled: scan.status === 'completed',
  });
  const all = `~/findings?scan_id=${encodeURIComponent(scan.id)}`;
  return (
    <section aria-labelledby="scan-findings">
      <h2 id="scan-findings">Findings</h2>
      {scan.status !== 'completed' ? (
        <Empty>{isActive(scan.status) ? 'Findings appear when the scan completes.' : 'This scan did not complete: it reported no findings.'}</Empty>
      ) : findings.isPending ? (
        <Loading label="Loading findings" />
      ) : findings.isError ? (
        <ErrorMessage error={findings.error} title="Findings could not be loaded" />
      ) : findings.data.data.length === 0 ? (
        <Empty>This scan found nothing.</Empty>
      ) : (
        <>
          <div className="table-wrap">
            <table data-testid="scan-findings">
              <caption className="visually-hidden">First findings of this scan</caption>
              <thead>
                <tr>
                  <th scope="col">Severity</th>
                  <th scope="col">Finding</th>
                  <th scope="col">Where</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {findings.data.data.map((f) => (
                  <tr key={f.id}>
                    <td><SeverityBadge severity={f.severity} /></td>
                    <td><Link href={`~/findings/${f.id}`}>{f.title}</Link></td>
                    <td className="scan-target">{whereOf(f.location)}</td>
                    <td>{f.status.replace(/_/g, ' ')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <p>
            <Link href={all}>All {scan.summary.total ?? ''} findings of this scan</Link>
          </p>
        </>
      )}
    </section>
  );
}

