// One config repository: its settings and status, Sync now, Remove, and its sync history a page at
// a time (polled while a sync is queued or running), each sync linking to its plan.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, ok } from '../../api/client.ts';
import { StatusBadge, Time } from '../../components/badges.tsx';
import { ConfirmDialog } from '../../components/dialog.tsx';
import { useWrite } from '../../components/forms.tsx';
import { Pager, usePagedList } from '../../components/list.tsx';
import { PageHeader } from '../../components/page.tsx';
import { Empty, ErrorMessage, Loading } from '../../components/status.tsx';
import { formatDuration } from '../scans/model.ts';
import { LIVE_INTERVAL_MS, isMoving, syncOutcome, type ConfigRepo, type Sync } from './model.ts';
import { WatchSummary } from './repo-list.tsx';
import { SyncNowButton } from './sync-now.tsx';
import { ImpactSettings } from './repo-form.tsx';

export function RepoDetail({ id }: { id: string }) {
  // A sync on screen still moving, or a repository not synced yet (its first sync leaves a record
  // only once it runs): status and history are polled until things settle.
  const [syncMoving, setSyncMoving] = useState(false);
  const repo = useQuery({
    queryKey: ['config-repos', 'detail', id],
    queryFn: () => ok(api.GET('/api/v1/config-repos/{id}', { params: { path: { id } } })),
    refetchInterval: (query) => (syncMoving || query.state.data?.status === 'unknown' ? LIVE_INTERVAL_MS : false),
  });
  if (repo.isPending) return <><PageHeader title="Config repository" /><Loading label="Loading the repository" /></>;
  if (repo.isError) return <><PageHeader title="Config repository" /><ErrorMessage error={repo.error} title="The repository could not be loaded" /></>;
  const r = repo.data;
  return (
    <>
      <PageHeader title={r.name} actions={<><Link href="/">All repositories</Link><SyncNowButton repo={r} /><RemoveRepo repo={r} /></>}>
        <p className="muted scan-target">{r.url}</p>
      </PageHeader>
      <RepoFacts repo={r} />
      <section aria-labelledby="repo-impact">
        <h2 id="repo-impact">Impact preview</h2>
        <ImpactSettings key={`${r.impact_window}:${r.max_new_blocks}`} repo={r} />
      </section>
      <SyncHistory repo={r} live={syncMoving || r.status === 'unknown'} onMoving={setSyncMoving} />
    </>
  );
}

function RepoFacts({ repo }: { repo: ConfigRepo }) {
  return (
    <section aria-labelledby="repo-status">
      <h2 id="repo-status">Status</h2>
      <dl className="facts">
        <dt>Status</dt>
        <dd><StatusBadge status={repo.status} />{repo.status_message && <> {repo.status_message}</>}</dd>
        <dt>Last synced</dt>
        <dd><Time at={repo.last_synced_at} />{repo.last_synced_commit && <> at <code>{repo.last_synced_commit.slice(0, 12)}</code></>}</dd>
        <dt>Last checked</dt>
        <dd><Time at={repo.last_checked_at} /></dd>
        <dt>Next check</dt>
        <dd><Time at={repo.next_poll_at} /></dd>
        <dt>Branch and directory</dt>
        <dd>{repo.branch} · {repo.path || '(root)'}</dd>
        <dt>Source id</dt>
        <dd><code>{repo.source}</code> (the <code>aegis.dev/source</code> label on the objects it manages)</dd>
        <dt>Watch</dt>
        <dd><WatchSummary repo={repo} />{repo.deny_weakening ? ' · holds back weakening' : ''}</dd>
        <dt>Change limits</dt>
        <dd>
          {repo.max_changes} changes or {repo.max_change_percent} % of its objects
          {repo.max_new_blocks !== null && <> · at most {repo.max_new_blocks} newly blocked requests per site</>}
        </dd>
        <dt>Impact preview</dt>
        <dd>{repo.impact_window ? `each plan against the last ${repo.impact_window} of recorded traffic` : 'off'}</dd>
        <dt>Webhook secret</dt>
        <dd>…{repo.webhook_secret_last4}</dd>
        {repo.connection && <><dt>Connection</dt><dd><code>{repo.connection}</code></dd></>}
      </dl>
    </section>
  );
}

function RemoveRepo({ repo }: { repo: ConfigRepo }) {
  const [, navigate] = useLocation();
  const [confirming, setConfirming] = useState(false);
  const remove = useWrite(() => ok(api.DELETE('/api/v1/config-repos/{id}', { params: { path: { id: repo.id } } })), [['config-repos']], () => navigate('/'));
  return (
    <>
      <button type="button" className="button-danger" onClick={() => setConfirming(true)}>Remove</button>
      <ConfirmDialog
        open={confirming}
        title={`Remove ${repo.name}?`}
        confirmLabel="Remove repository"
        danger
        busy={remove.isPending}
        onConfirm={() => remove.mutate(undefined)}
        onCancel={() => setConfirming(false)}
      >
        <p>Aegis stops following this repository and revokes its sync key. The objects it made stay, still labelled as its own.</p>
        <ErrorMessage error={remove.error} title="The repository was not removed" />
      </ConfirmDialog>
    </>
  );
}

function SyncHistory({ repo, live, onMoving }: { repo: ConfigRepo; live: boolean; onMoving(moving: boolean): void }) {
  const list = usePagedList(
    ['config-repos', repo.id, 'syncs'],
    (cursor) => ok(api.GET('/api/v1/config-repos/{id}/syncs', { params: { path: { id: repo.id }, query: cursor ? { cursor } : {} } })),
    { refetchInterval: live ? LIVE_INTERVAL_MS : false },
  );
  const moving = list.rows.some(isMoving);
  useEffect(() => onMoving(moving), [moving, onMoving]);
  // The repository's status moved on (a sync finished): its record is in the history now.
  const queries = useQueryClient();
  useEffect(() => {
    void queries.invalidateQueries({ queryKey: ['config-repos', repo.id, 'syncs'] });
  }, [queries, repo.id, repo.status, repo.last_checked_at, repo.last_synced_commit]);
  return (
    <section aria-labelledby="sync-history">
      <h2 id="sync-history">Sync history</h2>
      {list.error ? (
        <ErrorMessage error={list.error} title="The sync history could not be loaded" />
      ) : list.isPending ? (
        <Loading label="Loading syncs" />
      ) : list.rows.length === 0 ? (
        <Empty>No sync recorded yet.</Empty>
      ) : (
        <SyncTable repoId={repo.id} syncs={list.rows} />
      )}
      <Pager list={list} label="Pages of syncs" />
    </section>
  );
}

function SyncTable({ repoId, syncs }: { repoId: string; syncs: Sync[] }) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">Syncs, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Trigger</th>
            <th scope="col">Result</th>
            <th scope="col">Commit</th>
            <th scope="col">Plan</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {syncs.map((sync) => (
            <tr key={sync.id} data-testid="sync-row">
              <td><Link href={`/repos/${repoId}/syncs/${sync.id}`}><Time at={sync.created_at} /></Link></td>
              <td>{sync.trigger}{sync.forced ? ' (forced)' : ''}</td>
              <td><StatusBadge status={syncOutcome(sync)} />{sync.failure_stage && <span className="muted"> at {sync.failure_stage}</span>}</td>
              <td>{sync.commit_sha ? <code>{sync.commit_sha.slice(0, 10)}</code> : '—'}</td>
              <td><PlanCounts sync={sync} compact /></td>
              <td>{formatDuration(sync.duration_ms)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** +create ~update ±replace −delete, as counted by the sync's plan (compact in tables: signs, with the words for screen readers). */
export function PlanCounts({ sync, compact = false }: { sync: Sync; compact?: boolean }) {
  const s = sync.summary;
  if (!s) return <span className="muted">—</span>;
  const items = [
    { sign: '+', n: s.create ?? 0, words: 'to create' },
    { sign: '~', n: s.update ?? 0, words: 'to update' },
    ...((s.replace ?? 0) > 0 ? [{ sign: '±', n: s.replace ?? 0, words: 'to replace' }] : []),
    { sign: '−', n: s.delete ?? 0, words: 'to delete' },
  ];
  return (
    <ul className={compact ? 'plan-counts plan-counts-compact' : 'plan-counts'}>
      {items.map((item) => (
        <li key={item.words}>
          {compact && <span aria-hidden="true">{item.sign}</span>}
          {item.n}
          <span className={compact ? 'visually-hidden' : undefined}> {item.words}</span>
        </li>
      ))}
    </ul>
  );
}
