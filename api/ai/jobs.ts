// The `triage.run` job: runs the triage a finding carries as `pending` and stores how it ended,
// with the tokens spent added to the month's usage in the same transaction. Provider failures map
// onto the queue as for tickets: a rate limit retries after the provider's Retry-After, an outage
// with the queue's backoff; a refused key or request fails the triage at once and says why.
import { ProviderAuthError, ProviderRateLimitError, ProviderRequestError } from '../integrations/providers/errors.ts';
import { IntegrationUnavailableError } from '../integrations/connections/sessions.ts';
import { LeaseLostError, PermanentJobError, RetryLaterError, type Job, type JobContext, type JobHandlers, type JobKindDefinition } from '../../platform/jobs/types.ts';
import type { TriageDeps } from './index.ts';
import { budgetExhaustedMessage } from './limits.ts';
import { storeTriage, TRIAGE_JOB, triageOf, type TriageJobPayload } from './queue.ts';
import { askModel, completedTriage, engineOf, failedTriage, fallbackOutcome, loadFinding, tokensOf, toTriageFinding } from './triage.ts';
import type { StoredTriage } from './types.ts';
import { addUsage, readUsage, tokenBudgetOf } from './usage.ts';
import { errorMessage } from '../../schemas/json-value.ts';

const BACKOFF = { baseMs: 2_000, maxMs: 5 * 60_000 };
/** Per worker: each triage mostly waits on the provider, whose rate limits are per key. */
const CONCURRENCY = 4;


/** Retrying cannot help: the provider refused the key or the request, or the connection is gone. */
const isPermanent = (err: unknown): boolean => err instanceof ProviderAuthError || err instanceof ProviderRequestError || err instanceof IntegrationUnavailableError;

function reasonOf(err: unknown): string {
  if (err instanceof ProviderAuthError) return `the provider refused the API key (${err.message}); the connection is now in error — connect it again`;
  if (err instanceof IntegrationUnavailableError) return `the AI connection cannot be used: ${err.message}`;
  return errorMessage(err);
}

function forQueue(err: unknown): unknown {
  if (err instanceof ProviderRateLimitError) return new RetryLaterError(err.message, err.retryAfterMs);
  if (isPermanent(err)) return new PermanentJobError(reasonOf(err));
  return err;
}

async function runTriage(deps: TriageDeps, job: Job<TriageJobPayload>, ctx: JobContext): Promise<Record<string, unknown>> {
  const orgId = job.org_id ?? job.payload.org_id;
  if (!orgId) throw new PermanentJobError('triage job without an organisation');
  const row = await loadFinding(deps.db, orgId, job.payload.vulnerability_id);
  const pending = row ? triageOf(row) : null;
  // Deleted, or no longer this job's triage (finished by an earlier run of it, or requested again).
  if (!row || !pending || pending.status !== 'pending' || pending.job_id !== job.id) return { skipped: true };
  const finding = toTriageFinding(row);
  const finish = (triage: StoredTriage, tokens = 0, triages = 0) =>
    ctx.completeWith(async (trx) => {
      await storeTriage(trx, row.id, job.id, triage);
      if (tokens > 0 || triages > 0) await addUsage(trx, orgId, { tokens, triages });
      return { status: triage.status, engine: triage.engine?.provider ?? null, ...(triage.error ? { error: triage.error } : {}) };
    });

  if (job.payload.engine === 'fallback') {
    // Counted against the month's fallback triages when it was requested (the quota is reserved there).
    try {
      return await finish(completedTriage(pending, fallbackOutcome(finding)));
    } catch (err) {
      if (ctx.signal.aborted || err instanceof LeaseLostError) throw err;
      if (job.attempts >= job.max_attempts) await storeTriage(deps.db, row.id, job.id, failedTriage(pending, `the fallback engine failed: ${errorMessage(err)}`));
      throw err;
    }
  }

  const integration = job.payload.integration_id
    ? await deps.db.selectFrom('integrations').selectAll().where('id', '=', job.payload.integration_id).where('org_id', '=', orgId).executeTakeFirst()
    : undefined;
  if (!integration || integration.kind !== 'ai') return finish(failedTriage(pending, 'the AI connection this triage was requested with was removed; request the triage again'));
  if (integration.status !== 'active') {
    return finish(failedTriage(pending, `the ${integration.provider} connection is ${integration.status}${integration.error ? ` (${integration.error})` : ''}; connect it again, then request the triage again`));
  }
  const budget = tokenBudgetOf(integration, deps.limits);
  const usage = await readUsage(deps.db, orgId);
  if (usage.tokens >= budget) return finish(failedTriage(pending, budgetExhaustedMessage(integration, budget, usage.tokens)));

  try {
    const outcome = await askModel(deps, integration, finding, ctx.signal);
    const spent = { engine: outcome.engine, usage: outcome.usage, attempts: outcome.attempts, redactions: outcome.redactions };
    const triage = outcome.ok ? completedTriage(pending, { answer: outcome.answer, ...spent }) : failedTriage(pending, outcome.error, spent);
    return await finish(triage, tokensOf(outcome.usage), outcome.ok ? 1 : 0);
  } catch (err) {
    // Stopped, or another run of this job owns it now: that run says how it ends.
    if (ctx.signal.aborted || err instanceof LeaseLostError) throw err;
    if (isPermanent(err) || job.attempts >= job.max_attempts) {
      await storeTriage(deps.db, row.id, job.id, failedTriage(pending, reasonOf(err), { engine: engineOf(deps, integration) }));
    }
    ctx.log.warn({ err, vulnerability_id: row.id, provider: integration.provider }, 'triage: the model call failed');
    throw forQueue(err);
  }
}

function triageKind(deps: TriageDeps): JobKindDefinition<TriageJobPayload> {
  return { concurrency: CONCURRENCY, backoff: BACKOFF, run: (job, ctx) => runTriage(deps, job, ctx) };
}

/** The triage kind, for startJobs. */
export function triageJobs(deps: TriageDeps): JobHandlers {
  return { [TRIAGE_JOB]: triageKind(deps) };
}
