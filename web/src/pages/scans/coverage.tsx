// What a scan covered: files read and skipped (code scans) or requests and items (URL scans), and
// what limited it.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../../api/client.ts';
import { Empty, ErrorMessage, Loading } from '../../components/status.tsx';
import type { Scan } from './model.ts';

const TYPES_SHOWN = 10;

export function ScanCoverage({ scan }: { scan: Scan }) {
  const coverage = useQuery({
    queryKey: ['scans', 'coverage', scan.id, scan.status],
    queryFn: () => ok(api.GET('/api/v1/scans/{id}/coverage', { params: { path: { id: scan.id } } })),
    enabled: scan.status === 'completed',
  });
  const c = coverage.data;
  return (
    <section aria-labelledby="scan-coverage">
      <h2 id="scan-coverage">Coverage</h2>
      {scan.status !== 'completed' ? (
        <Empty>Coverage is known once the scan completes.</Empty>
      ) : coverage.isPending ? (
        <Loading label="Loading coverage" />
      ) : coverage.isError ? (
        <ErrorMessage error={coverage.error} title="Coverage could not be loaded" />
      ) : c ? (
        <>
          <dl className="facts" data-testid="scan-coverage">
            {c.files_scanned !== undefined && <><dt>Files scanned</dt><dd>{c.files_scanned}</dd></>}
            {c.bytes_scanned !== undefined && <><dt>Bytes scanned</dt><dd>{c.bytes_scanned.toLocaleString()}</dd></>}
            {c.skipped !== undefined && <><dt>Files skipped</dt><dd>{c.skipped.length}</dd></>}
            {c.requests !== undefined && <><dt>Requests sent</dt><dd>{c.requests}</dd></>}
            {c.items !== undefined && <><dt>Pages, operations or templates covered</dt><dd>{c.items}</dd></>}
          </dl>
          {c.skipped_by_type && c.skipped_by_type.length > 0 && (
            <div className="table-wrap">
              <table>
                <caption>Skipped files by type</caption>
                <thead>
                  <tr><th scope="col">Type</th><th scope="col">Reason</th><th scope="col" className="num">Files</th></tr>
                </thead>
                <tbody>
                  {c.skipped_by_type.slice(0, TYPES_SHOWN).map((row) => (
                    <tr key={`${row.type}-${row.reason}`}><td>{row.type}</td><td>{row.reason.replace(/_/g, ' ')}</td><td className="num">{row.files}</td></tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {c.notes.length > 0 && (
            <>
              <h3>What limited the scan</h3>
              <ul>{c.notes.map((note, i) => <li key={i}>{note}</li>)}</ul>
            </>
          )}
        </>
      ) : null}
    </section>
  );
}
