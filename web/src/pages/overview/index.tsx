// Overview: open findings by severity and by age, the latest scans, and Shield blocks over the last
// 24 hours — one request (GET /api/v1/overview) whose counts the server makes. Each number links to
// the findings list filtered to what it counts. A new organisation sees how to start instead.
import { useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import { api, ok } from '../../api/client.ts';
import type { Answer } from '../../api/types.ts';
import { PageHeader } from '../../components/page.tsx';
import { ErrorMessage, Loading } from '../../components/status.tsx';
import { FindingCards } from './findings.tsx';
import { RecentScans } from './scans.tsx';
import { ShieldBlocks } from './shield.tsx';
import './overview.css';

export type Overview = Answer<'/api/v1/overview'>;

function GetStarted() {
  return (
    <section className="card get-started" aria-labelledby="start-heading">
      <h2 id="start-heading">Get started</h2>
      <p>Nothing here yet. Scan a repository or a web application to see its findings, or put a site behind Shield to block attacks.</p>
      <div className="actions">
        <Link href="/scans" className="button button-primary">Start a scan</Link>
        <Link href="/shield" className="button">Add a Shield site</Link>
      </div>
    </section>
  );
}

export default function OverviewPage() {
  const overview = useQuery({ queryKey: ['overview'], queryFn: () => ok(api.GET('/api/v1/overview')), refetchInterval: 30_000 });
  const data = overview.data;
  const fresh = data && (data.findings?.total ?? 0) === 0 && (data.scans?.total ?? 0) === 0 && (data.shield?.sites_total ?? 0) === 0;
  return (
    <>
      <PageHeader title="Overview" />
      {overview.isPending ? (
        <Loading label="Loading the overview" />
      ) : overview.error ? (
        <ErrorMessage error={overview.error} title="The overview could not be loaded" />
      ) : data ? (
        <>
          {fresh && <GetStarted />}
          {data.findings && <FindingCards findings={data.findings} />}
          <div className="overview-columns">
            {data.scans && <RecentScans scans={data.scans} />}
            {data.shield && <ShieldBlocks shield={data.shield} />}
          </div>
        </>
      ) : null}
    </>
  );
}
