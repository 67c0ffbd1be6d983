// Config repositories: each with its status (last sync, drift, what it watches and heals), a link
// to its history, and Sync now. An explanation of what "managed" means in Shield heads the page.
import { Link } from 'wouter';
import { api, ok } from '../../api/client.ts';
import { ManagedBadge, StatusBadge, Time } from '../../components/badges.tsx';
import { Pager, usePagedList } from '../../components/list.tsx';
import { PageHeader } from '../../components/page.tsx';
import { Empty, ErrorMessage, Loading } from '../../components/status.tsx';
import type { ConfigRepo } from './model.ts';
import { SyncNowButton } from './sync-now.tsx';

export function RepoList() {
  const list = usePagedList(['config-repos'], (cursor) => ok(api.GET('/api/v1/config-repos', { params: { query: cursor ? { cursor } : {} } })));
  return (
    <>
      <PageHeader title="Config as code" actions={<Link href="/new" className="button button-primary">Add a repository</Link>}>
        <p className="muted">Git repositories of YAML that Aegis keeps Shield, scan schedules and webhooks in step with.</p>
      </PageHeader>
      <ManagedExplanation />
      <h2>Repositories</h2>
      {list.error ? (
        <ErrorMessage error={list.error} title="Config repositories could not be loaded" />
      ) : list.isPending ? (
        <Loading label="Loading config repositories" />
      ) : list.rows.length === 0 ? (
        <Empty>No config repository yet. <Link href="/new">Add one</Link> to manage Shield from git.</Empty>
      ) : (
        <RepoTable repos={list.rows} />
      )}
      <Pager list={list} label="Pages of config repositories" />
    </>
  );
}

export function ManagedExplanation() {
  return (
    <section className="notice" aria-labelledby="managed-heading">
      <h2 id="managed-heading">Objects a repository manages</h2>
      <p>
        Every object a sync creates carries its repository's source id (the <code>aegis.dev/source</code> label). Shield shows such
        objects with a badge, e.g. <ManagedBadge by="github.com/acme/config" />, and warns before you edit one: the next sync puts
        back what the repository says (at once, if the repository heals drift). Change managed objects in git instead.
      </p>
    </section>
  );
}

function RepoTable({ repos }: { repos: ConfigRepo[] }) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">Config repositories</caption>
        <thead>
          <tr>
            <th scope="col">Repository</th>
            <th scope="col">Status</th>
            <th scope="col">Last sync</th>
            <th scope="col">Watch</th>
            <th scope="col"><span className="visually-hidden">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          {repos.map((repo) => (
            <tr key={repo.id} data-testid="config-repo-row">
              <td>
                <Link href={`/repos/${repo.id}`}><strong>{repo.name}</strong></Link>
                <div className="muted scan-target">{repo.url} · {repo.branch}{repo.path ? ` · ${repo.path}` : ''}</div>
              </td>
              <td>
                <StatusBadge status={repo.status} />
                {repo.status_message && <div className="muted">{repo.status_message}</div>}
              </td>
              <td>
                <Time at={repo.last_synced_at} />
                {repo.last_synced_commit && <div><code>{repo.last_synced_commit.slice(0, 10)}</code></div>}
              </td>
              <td><WatchSummary repo={repo} /></td>
              <td><SyncNowButton repo={repo} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** How the repository is followed: auto-sync, self-heal, prune, and the poll interval. */
export function WatchSummary({ repo }: { repo: ConfigRepo }) {
  return (
    <span>
      {repo.auto_sync ? 'auto-sync' : 'plan only'} · {repo.self_heal ? 'heals drift' : 'reports drift'}
      {repo.prune ? ' · prunes' : ''} · every {repo.poll_interval_seconds} s
    </span>
  );
}
