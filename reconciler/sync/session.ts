// What plan and apply share: load and check the config, read live state, compute the plan and the
// warnings and errors that go with it.
import { createAegisClient } from '../../client/client.ts';
import { validateSource } from '../config/validate-command.ts';
import { readLiveState } from '../live/read.ts';
import { restResources } from '../live/rest-resources.ts';
import type { ResourceApi } from '../live/resources.ts';
import { formatProblem } from '../model.ts';
import { restImpactPreviewer, type ImpactPreviewer, type PlanImpact } from '../plan/impact.ts';
import { computePlan, type Plan } from '../plan/plan.ts';
import { weakeningWarnings } from '../plan/safety.ts';

export interface Connection {
  api: ResourceApi;
  /** Where the key works: a `svc_test_` key talks to the organisation's sandbox (the key decides). */
  environment: 'live' | 'test';
  /** The impact preview, on a client that gives up quickly: a preview is advice, and a plan should not wait a minute for it. */
  impact: ImpactPreviewer;
}

export function connect(env: NodeJS.ProcessEnv = process.env, signal?: AbortSignal): Connection {
  const baseUrl = env.AEGIS_API_URL;
  const apiKey = env.AEGIS_API_KEY;
  if (!baseUrl || !apiKey) throw new Error('set AEGIS_API_URL (e.g. http://localhost:3000) and AEGIS_API_KEY');
  const options = { baseUrl, apiKey, userAgent: 'aegis-reconciler/0.1', ...(signal ? { signal } : {}) };
  return {
    api: restResources(createAegisClient(options)),
    environment: apiKey.startsWith('svc_test_') ? 'test' : 'live',
    impact: restImpactPreviewer(createAegisClient({ ...options, maxRetries: 1, maxRetryDelayMs: 2_000 })),
  };
}

export interface PlanSession {
  plan: Plan;
  warnings: string[];
  errors: string[];
  /** What the changes would have done to recorded traffic, once previewed (reconciler/plan/impact.ts). */
  impact?: PlanImpact;
}

export interface PlanInputs {
  /** A config directory, or a Terraform JSON file (`cdktf synth` output). */
  path: string;
  source: string;
  adopt: boolean;
  prune: boolean;
  denyWeakening: boolean;
}

/** The problems instead of a plan when the config itself is invalid: then nothing is written. */
export async function preparePlan(api: ResourceApi, inputs: PlanInputs): Promise<PlanSession | { configErrors: string[]; warnings: string[] }> {
  // Live state is read while the config is loaded and checked: the server answers on its own time
  // while this process parses YAML (a third of a cold `aegis plan`). Invalid config still changes
  // nothing; the read is then dropped.
  const liveRead = readLiveState(api);
  liveRead.catch(() => undefined);
  const report = await validateSource(inputs.path);
  const lint = report.warnings.map(formatProblem);
  if (report.errors.length > 0) return { configErrors: report.errors.map(formatProblem), warnings: lint };
  const live = await liveRead;
  const plan = computePlan(report.objects, live, { source: inputs.source, adopt: inputs.adopt, prune: inputs.prune });
  const weakening = weakeningWarnings(plan);
  const errors = [
    ...plan.conflicts.map((c) => `${c.location ? formatProblem({ location: c.location, kind: c.kind, name: c.name, message: c.message }) : `${c.kind}/${c.name}: ${c.message}`}`),
    ...plan.incomplete.map((i) => `could not read ${i.collection} (${i.error}); no deletions planned there`),
    ...(inputs.denyWeakening ? weakening.map((w) => `${w} (--deny-weakening)`) : []),
  ];
  return { plan, warnings: [...lint, ...(inputs.denyWeakening ? [] : weakening)], errors };
}
