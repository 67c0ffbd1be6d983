// One sync and its plan: what it would create, update, replace and delete (with the fields an
// update changes), its errors and warnings, and what the changes would have done to recorded
// traffic (the impact preview's lines); polled until it completes. A refused sync can be applied
// anyway after review (force).
import { useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import { api, ok } from '../../api/client.ts';
import { StatusBadge, Time } from '../../components/badges.tsx';
import { PageHeader } from '../../components/page.tsx';
import { Empty, ErrorMessage, Loading } from '../../components/status.tsx';
import { formatDuration } from '../scans/model.ts';
import { CHANGE_SIGN, LIVE_INTERVAL_MS, isMoving, parseChange, syncOutcome, type Sync } from './model.ts';
import { PlanCounts } from './repo-detail.tsx';
import { SyncNowButton } from './sync-now.tsx';

const VERB: Record<string, string> = { create: 'Create', update: 'Update', replace: 'Replace', delete: 'Delete', other: '' };

export function SyncPlan({ repoId, syncId }: { repoId: string; syncId: string }) {
  const repo = useQuery({ queryKey: ['config-repos', 'detail', repoId], queryFn: () => ok(api.GET('/api/v1/config-repos/{id}', { params: { path: { id: repoId } } })) });
  const sync = useQuery({
    queryKey: ['config-repos', repoId, 'syncs', 'detail', syncId],
    queryFn: () => ok(api.GET('/api/v1/config-repos/{id}/syncs/{syncId}', { params: { path: { id: repoId, syncId } } })),
    refetchInterval: (query) => (query.state.data && isMoving(query.state.data) ? LIVE_INTERVAL_MS : false),
  });
  const name = repo.data?.name ?? 'repository';
  const back = <Link href={`/repos/${repoId}`}>Back to {name}</Link>;
  if (sync.isPending) return <><PageHeader title="Sync" actions={back} /><Loading label="Loading the sync" /></>;
  if (sync.isError) return <><PageHeader title="Sync" actions={back} /><ErrorMessage error={sync.error} title="The sync could not be loaded" /></>;
  const s = sync.data;
  return (
    <>
      <PageHeader title={`Sync of ${name}`} actions={<>{back}{s.result === 'refused' && repo.data && <SyncNowButton repo={repo.data} force label="Apply anyway (force)" />}</>}>
        <p className="muted"><Time at={s.created_at} /> · {s.trigger}{s.forced ? ' · forced' : ''}</p>
      </PageHeader>
      <dl className="facts">
        <dt>Result</dt>
        <dd data-testid="sync-result"><StatusBadge status={syncOutcome(s)} />{s.failure_stage && <> at {s.failure_stage}</>}</dd>
        <dt>Commit</dt>
        <dd>{s.commit_sha ? <code>{s.commit_sha}</code> : '—'}</dd>
        <dt>Duration</dt>
        <dd>{formatDuration(s.duration_ms)}</dd>
        <dt>Planned</dt>
        <dd><PlanCounts sync={s} />{s.summary?.unchanged !== undefined && <span className="muted">{s.summary.unchanged} unchanged</span>}</dd>
      </dl>
      {s.result === 'refused' && (
        <p className="notice">This sync was held back by the change limits, the weakening rule or the limit on newly blocked requests. Review the plan below; “Apply anyway” syncs again past them.</p>
      )}
      {s.result === 'planned' && (
        <p className="notice">These changes were found but not applied (plan only, or drift without self-heal). Sync now applies them.</p>
      )}
      <Problems title="Errors" lines={s.errors} />
      <Problems title="Warnings" lines={s.warnings} />
      <Plan sync={s} />
      <Impact lines={s.impact} />
    </>
  );
}

/** The impact preview as the sync recorded it: changes with their impact indented under them, per-site totals, notes. */
function Impact({ lines }: { lines: string[] }) {
  if (lines.length === 0) return null;
  return (
    <section aria-labelledby="sync-impact-heading" data-testid="sync-impact">
      <h2 id="sync-impact-heading">Impact on recorded traffic</h2>
      <pre className="impact-lines">{lines.join('\n')}</pre>
    </section>
  );
}

function Problems({ title, lines }: { title: string; lines: string[] }) {
  if (lines.length === 0) return null;
  return (
    <section aria-label={title} className={title === 'Errors' ? 'error' : 'notice'}>
      <h2>{title}</h2>
      <ul>{lines.map((line, i) => <li key={i}>{line}</li>)}</ul>
    </section>
  );
}

function Plan({ sync }: { sync: Sync }) {
  return (
    <section aria-labelledby="sync-plan">
      <h2 id="sync-plan">Plan</h2>
      {isMoving(sync) ? (
        <Loading label={`The sync is ${sync.status}`} />
      ) : sync.changes.length === 0 ? (
        <Empty>{sync.result === 'failed' ? 'No plan: the sync failed before planning.' : 'Nothing to change: live state matches the repository.'}</Empty>
      ) : (
        <>
          <ul className="plan" aria-label="Planned changes" data-testid="sync-changes">
            {sync.changes.map((line, i) => {
              const change = parseChange(line);
              return (
                <li key={i} className={`change-${change.action}`}>
                  <span className="sign" aria-hidden="true">{CHANGE_SIGN[change.action]}</span>
                  {change.action === 'other' ? (
                    line
                  ) : (
                    <>
                      {VERB[change.action]} <strong>{change.kind}</strong> {change.name}
                      {change.fields.length > 0 && <span className="muted"> — changes {change.fields.join(', ')}</span>}
                    </>
                  )}
                </li>
              );
            })}
          </ul>
          {sync.changes.length >= 200 && <p className="muted">The record keeps the first 200 changes.</p>}
        </>
      )}
    </section>
  );
}
