// Start a scan: one tab per kind (each its own URL, /scans/new/<kind>), each with only the fields
// its API takes. A started scan opens its detail page, which follows its progress.
import { Link, useLocation } from 'wouter';
import { useCan } from '../../api/session.ts';
import { PageHeader, SubNav } from '../../components/page.tsx';
import { ErrorMessage } from '../../components/status.tsx';
import { CodeScanForm } from './code-scan-form.tsx';
import { SCAN_KINDS, type Scan, type ScanKind } from './model.ts';
import { ApiScanForm, CveScanForm, DastScanForm } from './url-scan-forms.tsx';

export function NewScan({ kind }: { kind: string | undefined }) {
  const canWrite = useCan('scans:write');
  const [, navigate] = useLocation();
  const chosen = SCAN_KINDS.find((k) => k.kind === kind);
  const started = (scan: Scan) => navigate(`/${scan.id}`);
  if (!canWrite) return <ErrorMessage error={new Error('Your role may read scans but not start them.')} title="Not allowed" />;
  return (
    <>
      <PageHeader title={chosen ? `New ${chosen.label} scan` : 'Start a scan'} actions={<Link href="/">Back to scans</Link>} />
      <SubNav label="Kind of scan" items={SCAN_KINDS.map((k) => ({ href: `/scans/new/${k.kind}`, label: k.label }))} />
      {!chosen ? (
        <ul>
          {SCAN_KINDS.map((k) => (
            <li key={k.kind}>
              <Link href={`/new/${k.kind}`}>{k.label}</Link>: {k.what}
            </li>
          ))}
        </ul>
      ) : (
        <section aria-labelledby="scan-kind-heading">
          <h2 id="scan-kind-heading" className="visually-hidden">{chosen.label} scan</h2>
          <p className="kind-what">{chosen.what}</p>
          <KindForm kind={chosen.kind} onStarted={started} />
        </section>
      )}
    </>
  );
}

function KindForm({ kind, onStarted }: { kind: ScanKind; onStarted(scan: Scan): void }) {
  switch (kind) {
    case 'secrets':
    case 'sast':
    case 'sca':
      // Keyed by kind: switching tabs starts a clean form.
      return <CodeScanForm key={kind} kind={kind} onStarted={onStarted} />;
    case 'dast':
      return <DastScanForm onStarted={onStarted} />;
    case 'api':
      return <ApiScanForm onStarted={onStarted} />;
    case 'cve':
      return <CveScanForm onStarted={onStarted} />;
  }
}
