// The reconciler's side of a config-repo sync (the API's port is api/config-repos/config-sync.ts,
// matched structurally so neither side imports the other): one reconciliation pass over a checked-out
// directory, through the REST API with the repository's key — exactly as `aegis apply` would.
import { createAegisClient } from '../client/client.ts';
import { restResources } from '../live/rest-resources.ts';
import { normaliseSource } from '../plan/ownership.ts';
import type { Thresholds } from '../plan/safety.ts';
import { PROJECT_FILE, readProjectFile } from '../project/project-file.ts';
import { reconcile, type ReconcileOutcome } from './reconcile.ts';

export interface DirectorySyncRequest {
  apiUrl: string;
  apiKey: string;
  userAgent: string;
  path: string;
  source: string;
  prune: boolean;
  apply: boolean;
  force: boolean;
  thresholds: Thresholds;
  denyWeakening: boolean;
}

export async function syncConfigDirectory(request: DirectorySyncRequest): Promise<ReconcileOutcome> {
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
