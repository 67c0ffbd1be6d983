// The reconciler's side of a config-repo sync: it implements the API's port
// (schemas/config-sync.ts; the API never imports this) with one reconciliation pass over a
// checked-out directory, through the REST API with the repository's key — exactly as `aegis apply` would,
// impact preview and --max-new-blocks gate included when the repository asks for them.
import type { ConfigSyncOutcome, ConfigSyncRequest } from '../../schemas/config-sync.ts';
import { createAegisClient } from '../../client/client.ts';
import { restResources } from '../live/rest-resources.ts';
import { DEFAULT_IMPACT_WINDOW, parseImpactWindow, restImpactPreviewer, type PlanImpact } from '../plan/impact.ts';
import { normaliseSource } from '../plan/ownership.ts';
import type { Plan } from '../plan/plan.ts';
import { impactLinesFor, siteImpactSection } from '../output/impact-text.ts';
import { PROJECT_FILE, readProjectFile } from '../project/project-file.ts';
import { describeChange, reconcile, type ReconcileImpact, type ReconcileOutcome } from './reconcile.ts';

type Preview = NonNullable<ReconcileImpact['previous']>;

/**
 * The last preview of each repository's plan (by API, source and window): polls of a repository
 * whose changes wait (auto_sync off, a refused plan) find the same plan again and again, and reuse
 * its preview for a while (reuseImpact) instead of replaying the traffic every poll — as a watcher
 * does. Bounded: the oldest entry goes first.
 */
const previews = new Map<string, Preview>();
const MAX_PREVIEWS = 500;

function remember(key: string, preview: Preview): void {
  previews.delete(key);
  previews.set(key, preview);
  if (previews.size > MAX_PREVIEWS) previews.delete(previews.keys().next().value!);
}

/**
 * The preview as the sync record keeps it: under each previewed change's line, its impact lines
 * (indented); then the per-site section; then why impact is missing where it is.
 */
export function impactRecordLines(plan: Plan, impact: PlanImpact): string[] {
  const perChange = plan.changes.flatMap((change) => {
    const lines = impactLinesFor(change, impact);
    return lines.length > 0 ? [describeChange(change), ...lines.map((line) => `    ${line}`)] : [];
  });
  return [...perChange, ...siteImpactSection(impact), ...impact.notes.map((note) => `note: ${note}`)];
}

export async function syncConfigDirectory(request: ConfigSyncRequest): Promise<ReconcileOutcome & ConfigSyncOutcome> {
  const clientOptions = { baseUrl: request.apiUrl, apiKey: request.apiKey, userAgent: request.userAgent };
  const client = createAegisClient(clientOptions);
  const { path, source, prune, apply, force, thresholds, denyWeakening } = request;
  const warnings: string[] = [];
  let impact: ReconcileImpact | undefined;
  let previewKey: string | undefined;
  if (request.impact) {
    // The API checks the setting; a row written otherwise previews the default window rather than none.
    const window = parseImpactWindow(request.impact.window) ?? parseImpactWindow(DEFAULT_IMPACT_WINDOW)!;
    if (window.flag !== request.impact.window) warnings.push(`impact_window "${request.impact.window}" is not a window; previewed the ${window.label}`);
    // A preview is advice: few retries, short waits (as `aegis plan` previews).
    const previewer = restImpactPreviewer(createAegisClient({ ...clientOptions, maxRetries: 1, maxRetryDelayMs: 2_000 }));
    previewKey = `${request.apiUrl} ${source} ${window.flag}`;
    const previous = previews.get(previewKey);
    impact = { previewer, window, ...(request.impact.maxNewBlocks !== null ? { maxNewBlocks: request.impact.maxNewBlocks } : {}), ...(previous ? { previous } : {}) };
  }
  const outcome = await reconcile({ api: restResources(client), path, source, prune, apply, force, thresholds, denyWeakening, ...(impact ? { impact } : {}) });
  outcome.warnings.push(...warnings);
  if (outcome.impact && outcome.plan && previewKey) {
    // A reused preview keeps its first time: it is not renewed by being reused.
    const previous = previews.get(previewKey);
    const reused = previous !== undefined && previous.impact.since === outcome.impact.since;
    if (!reused) remember(previewKey, { plan: outcome.plan, impact: outcome.impact, at: Date.now() });
  }
  // The gate's reasons name the CLI's flag; a repository's setting is max_new_blocks.
  outcome.errors = outcome.errors.map((e) => e.replace('--max-new-blocks', 'max_new_blocks'));
  // The repository's registered source decides (it is fixed once created); a project file that
  // names another one is most likely a dump meant for this repository: say so rather than guess.
  const project = await readProjectFile(path).catch(() => undefined);
  if (project?.source !== undefined && normaliseSource(project.source) !== source) {
    outcome.warnings.push(`${PROJECT_FILE} names source "${project.source}", but this repository syncs as "${source}" (its source setting, fixed when it was registered)`);
  }
  return { ...outcome, ...(outcome.impact && outcome.plan ? { impactLines: impactRecordLines(outcome.plan, outcome.impact) } : {}) };
}
