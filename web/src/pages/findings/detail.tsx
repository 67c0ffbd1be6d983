// One finding: what and where, its evidence (source → sink or request/response), verify-fix and AI
// triage results, the triage form and actions (for those who may write), and its history.
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link } from 'wouter';
import { api, ok } from '../../api/client.ts';
import { useCan } from '../../api/session.ts';
import { SeverityBadge, StatusBadge, Time } from '../../components/badges.tsx';
import { PageHeader } from '../../components/page.tsx';
import { ErrorMessage, Loading } from '../../components/status.tsx';
import { FindingActions } from './actions.tsx';
import { Facts } from '../../components/facts.tsx';
import { Evidence, Location, TriageVerdict, Verification } from './evidence.tsx';
import { FindingHistory } from './history.tsx';
import { findingKey, type Finding } from './model.ts';
import { TriageForm } from './triage-form.tsx';

const isWorking = (f: Finding) => f.verification?.status === 'queued' || f.verification?.status === 'running' || f.triage?.status === 'pending' || f.ticket?.state === 'creating';

function Summary({ f }: { f: Finding }) {
  return (
    <Facts
      layout="grid"
      items={[
        ['Status', <><StatusBadge status={f.status} />{f.resolution && <> ({f.resolution})</>}{f.false_positive && <> <span className="badge">false positive</span></>}</>],
        ['Scan type', f.scan_type],
        ['Rule', <code>{f.rule_id}</code>],
        ['CWE', f.cwe ?? '—'],
        ['Target', <code>{f.target}</code>],
        ['First seen', <><Time at={f.first_seen_at} /> in <Link href={`~/scans/${f.first_scan_id}`}>{f.first_scan_id}</Link></>],
        ['Last seen', <><Time at={f.last_seen_at} /> in <Link href={`~/scans/${f.last_scan_id}`}>{f.last_scan_id}</Link></>],
        ...(f.fixed_at ? [['Fixed', <Time at={f.fixed_at} />] as [string, ReactNode]] : []),
        ['Ticket', f.ticket ? (f.ticket.url ? <a href={f.ticket.url} target="_blank" rel="noreferrer">{f.ticket.key ?? f.ticket.url}</a> : `${f.ticket.state}`) : 'None'],
        ['Virtual patch', f.virtual_patch ? <code>{f.virtual_patch.id}</code> : 'None'],
        ...(f.notes ? [['Notes', <span className="finding-notes">{f.notes}</span>] as [string, ReactNode]] : []),
      ]}
    />
  );
}

export function FindingDetail({ id }: { id: string }) {
  const canWrite = useCan('vulnerabilities:write');
  const finding = useQuery({
    queryKey: findingKey(id),
    queryFn: () => ok(api.GET('/api/v1/vulnerabilities/{id}', { params: { path: { id } } })),
    // While a verify-fix or AI triage job runs, look again every few seconds for its result.
    refetchInterval: (query) => (query.state.data && isWorking(query.state.data) ? 2_000 : false),
  });
  if (finding.isPending) return <Loading label="Loading the finding" />;
  if (finding.error) {
    return (
      <>
        <PageHeader title="Finding" />
        <ErrorMessage error={finding.error} title="The finding could not be loaded" />
        <Link href="~/findings">All findings</Link>
      </>
    );
  }
  const f = finding.data;
  return (
    <article className="finding-detail">
      <p><Link href="~/findings">← All findings</Link></p>
      <PageHeader title={f.title}>
        <p className="finding-badges"><SeverityBadge severity={f.severity} /> <StatusBadge status={f.status} /></p>
      </PageHeader>
      <div className="finding-layout">
        <div className="finding-main">
          <Summary f={f} />
          <Location finding={f} />
          <Evidence finding={f} />
          <Verification finding={f} />
          <TriageVerdict finding={f} />
        </div>
        <aside className="finding-side" aria-label="Triage and history">
          {canWrite && <TriageForm finding={f} />}
          <FindingActions finding={f} />
          <FindingHistory id={f.id} />
        </aside>
      </div>
    </article>
  );
}
