// The reconciler's side of a config-repo sync: it implements the API's port
// (schemas/config-sync.ts; the API never imports this) with one reconciliation pass over a
// checked-out directory, through the REST API with the repository's key — exactly as `aegis apply` would.
import type { ConfigSyncRequest } from '../../schemas/config-sync.ts';
import { createAegisClient } from '../../client/client.ts';
import { restResources } from '../live/rest-resources.ts';
import { normaliseSource } from '../plan/ownership.ts';
import { PROJECT_FILE, readProjectFile } from '../project/project-file.ts';
import { reconcile, type ReconcileOutcome } from './reconcile.ts';

export async function syncConfigDirectory(request: ConfigSyncRequest): Promise<ReconcileOutcome> {
  const client = createAegisClient({ baseUrl: request.apiUrl, apiKey: request.apiKey, userAgent: request.userAgent });
  const { path, source, prune, apply, force, thresholds, denyWeakening } = request;
  const outcome = await reconcile({ api: restResources(client), path, source, prune, apply, force, thresholds, denyWeakening });
  // The repository's registered source decides (it is fixed once created); a project file that
  // names another one is most likely a dump meant for this repository: say so rather than guess.
  const project = await readProjectFile(path).catch(() => undefined);
  if (project?.source !== undefined && normaliseSource(project.source) !== source) {
    outcome.warnings.push(`${PROJECT_FILE} names source "${project.source}", but this repository syncs as "${source}" (its source setting, fixed when it was registered)`);
  }
  return outcome;
}
