// POST/GET /api/v1/vulnerabilities/:id/triage and GET /api/v1/triage/usage (docs/triage.md). A
// triage is a job: the request checks the budget (AI connection) or reserves one of the month's
// fallback triages (without one), marks the finding's triage `pending` and queues the job, all in
// one transaction with the finding's row locked, so a second request while one is pending gets
// that one and concurrent requests cannot pass the quota.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { auditRequest } from '../../platform/audit-log.ts';
import { principalOf } from '../accounts/auth/plugin.ts';
import type { Db } from '../../platform/db/database.ts';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { errorEnvelopeSchema } from '../../platform/http/schemas.ts';
import { announceEnqueued } from '../../platform/jobs/signals.ts';
import { findVulnerability } from '../findings/store.ts';
import { chooseEngine } from './engine-choice.ts';
import type { TriageDeps } from './index.ts';
import { budgetExhausted, quotaExceeded } from './limits.ts';
import { enqueueTriage, pendingTriage, triageOf, triageView, type TriageJobPayload } from './queue.ts';
import { TriageRequestBody, TriageResource, TriageUsageResource } from './schemas.ts';
import type { StoredTriage } from './types.ts';
import { monthReset, readUsage, reserveFallbackTriage, secondsUntilReset, tokenBudgetOf } from './usage.ts';

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;

const toResource = (vulnerabilityId: string, triage: StoredTriage) => ({ object: 'triage' as const, vulnerability_id: vulnerabilityId, ...triageView(triage) });

/** Whether the job of a pending triage can still finish it (a job that died leaves it to be requested again). */
async function jobAlive(db: Db, jobId: string | null): Promise<boolean> {
  if (!jobId) return false;
  const job = await db.selectFrom('jobs').select('state').where('id', '=', jobId).executeTakeFirst();
  return job?.state === 'queued' || job?.state === 'running';
}

export const triageRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: TriageDeps }> = async (app, { db, limits }) => {
  const tags = ['Triage'];

  app.post(
    '/api/v1/vulnerabilities/:id/triage',
    {
      config: { auth: 'vulnerabilities:write' },
      schema: {
        tags,
        summary: 'Triage a finding with AI',
        description:
          'Asks the organisation’s AI provider (its active OpenAI-compatible or Anthropic connection) — or, without one, Aegis’s bundled fallback (rules per CWE and scanner evidence, no AI, no network) — ' +
          'whether the finding is likely real, with a confidence, an explanation and a suggested fix. Runs as a job: follow `status` (`pending → completed | failed`) here or on the finding (`triage`). ' +
          'Secrets are redacted before anything is sent. The verdict never changes the finding’s status. While a triage is pending, a new request answers with it (202) and queues nothing. ' +
          'The connection’s monthly token budget spent: 429 `ai_budget_exhausted` with Retry-After (seconds until the month resets). ' +
          'Without a connection, the fallback’s monthly quota used up: 402 `triage_quota_exceeded`. Both carry `details` {budget or quota, used, resets_at}.',
        params: idParams,
        body: TriageRequestBody,
        response: {
          202: TriageResource,
          402: { ...errorEnvelopeSchema, description: 'The fallback’s monthly triage quota is used up (`triage_quota_exceeded`); connecting an AI provider lifts it.' },
          429: { ...errorEnvelopeSchema, description: 'The AI connection’s monthly token budget is spent (`ai_budget_exhausted`, Retry-After: seconds until the month resets), or the API rate limit.' },
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { orgId } = principal;
      const requested = request.body?.engine ?? 'auto';
      const outcome = await db.transaction().execute(async (trx) => {
        const row = await findVulnerability(trx, orgId, request.params.id, { forUpdate: true });
        if (!row) throw notFound('vulnerability');
        const current = triageOf(row);
        if (current?.status === 'pending' && (await jobAlive(trx, current.job_id))) return { triage: current, queued: false };

        const now = new Date();
        const choice = await chooseEngine(trx, orgId, requested);
        let payload: TriageJobPayload;
        if (choice.kind === 'ai') {
          const budget = tokenBudgetOf(choice.integration, limits);
          const usage = await readUsage(trx, orgId, now);
          if (usage.tokens >= budget) {
            reply.header('retry-after', String(secondsUntilReset(now)));
            throw budgetExhausted(choice.integration, budget, usage, now);
          }
          payload = { vulnerability_id: row.id, org_id: orgId, engine: 'ai', integration_id: choice.integration.id };
        } else {
          // With a connection the fallback was asked for by name: counted, not limited.
          const quota = choice.connected ? null : limits.fallbackMonthlyQuota;
          const reserved = await reserveFallbackTriage(trx, orgId, quota, now);
          if (!reserved) throw quotaExceeded(quota ?? 0, await readUsage(trx, orgId, now), now);
          payload = { vulnerability_id: row.id, org_id: orgId, engine: 'fallback', integration_id: null };
        }
        const jobId = await enqueueTriage(trx, orgId, payload);
        const triage = pendingTriage({ trigger: 'manual', requestedBy: principal.actor.id, jobId, now });
        await trx.updateTable('vulnerabilities').set({ triage: JSON.stringify(triage) }).where('id', '=', row.id).where('org_id', '=', orgId).execute();
        await auditRequest(trx, request, {
          action: 'vulnerability.triage_requested',
          target: { type: 'vulnerability', id: row.id },
          metadata: { engine: payload.engine, integration_id: payload.integration_id ?? null, job_id: jobId },
        });
        return { triage, queued: true };
      });
      if (outcome.queued) announceEnqueued(db);
      return reply.code(202).send(toResource(request.params.id, outcome.triage));
    },
  );

  app.get(
    '/api/v1/vulnerabilities/:id/triage',
    {
      config: { auth: 'vulnerabilities:read' },
      schema: { tags, summary: 'Get the triage of a finding', description: 'The latest triage; 404 when the finding does not exist or has not been triaged yet.', params: idParams, response: { 200: TriageResource } },
    },
    async (request) => {
      const row = await findVulnerability(db, principalOf(request).orgId, request.params.id);
      if (!row) throw notFound('vulnerability');
      const triage = triageOf(row);
      if (!triage) throw new ApiError(404, 'not_found', 'this finding has not been triaged yet (POST /api/v1/vulnerabilities/:id/triage)');
      return toResource(row.id, triage);
    },
  );

  app.get(
    '/api/v1/triage/usage',
    {
      config: { auth: 'vulnerabilities:read' },
      schema: {
        tags,
        summary: 'Triage usage this month',
        description: 'What triage spent this month (UTC) and against which limit: the AI connection’s token budget, or — without a connection — the fallback’s triage quota.',
        response: { 200: TriageUsageResource },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const now = new Date();
      const [choice, usage] = await Promise.all([chooseEngine(db, orgId), readUsage(db, orgId, now)]);
      const ai = choice.kind === 'ai' ? choice.integration : null;
      return {
        object: 'triage_usage' as const,
        month: usage.month,
        engine: ai ? (ai.provider as 'openai' | 'anthropic') : ('fallback' as const),
        integration_id: ai?.id ?? null,
        tokens_used: usage.tokens,
        token_budget: ai ? tokenBudgetOf(ai, limits) : null,
        triages: usage.triages,
        fallback_triages: usage.fallback_triages,
        fallback_quota: ai ? null : limits.fallbackMonthlyQuota,
        resets_at: monthReset(now).toISOString(),
      };
    },
  );
};
