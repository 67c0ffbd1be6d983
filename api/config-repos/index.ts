// The config-repos module's hooks into the job system: the sync job kind and the poller.
import type { JobHandlers, JobKindDefinition } from '../../platform/jobs/types.ts';
import { CONFIG_SYNC_JOB_KIND } from './store.ts';
import { configSyncJobKind, type SyncJobOptions } from './sync-job.ts';

export { ConfigRepoPoller } from './poller.ts';
export type { ConfigSync } from '../../schemas/config-sync.ts';
export { CONFIG_SYNC_JOB_KIND } from './store.ts';

/** The `config-repo-sync` kind, bound to this database and the API its syncs talk to. */
export function configRepoJobHandlers(options: SyncJobOptions): JobHandlers {
  return { [CONFIG_SYNC_JOB_KIND]: configSyncJobKind(options) as unknown as JobKindDefinition };
}
