// "Sync now": queues a manual sync and opens its plan, where its progress is followed.
import { useLocation } from 'wouter';
import { api, ok } from '../../api/client.ts';
import { useWrite } from '../../components/forms.tsx';
import { ErrorMessage } from '../../components/status.tsx';
import type { ConfigRepo } from './model.ts';

export function SyncNowButton({ repo, force = false, label }: { repo: Pick<ConfigRepo, 'id' | 'name'>; force?: boolean; label?: string }) {
  const [, navigate] = useLocation();
  const sync = useWrite(
    () => ok(api.POST('/api/v1/config-repos/{id}/sync', { params: { path: { id: repo.id }, query: force ? { force: true } : {} } })),
    [['config-repos']],
    (record) => navigate(`/repos/${repo.id}/syncs/${record.id}`),
  );
  return (
    <>
      <button type="button" className={force ? 'button-danger' : undefined} disabled={sync.isPending} onClick={() => sync.mutate(undefined)}>
        {sync.isPending ? 'Queuing…' : label ?? 'Sync now'}
        {/* The repository in the name, for lists with one button per repository. */}
        <span className="visually-hidden"> {repo.name}</span>
      </button>
      <ErrorMessage error={sync.error} title="The sync was not queued" />
    </>
  );
}
