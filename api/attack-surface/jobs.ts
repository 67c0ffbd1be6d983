// `attack_surface.discover` (payload { run_id }): one discovery of one cloud connection.
//   - The role cannot be assumed (revoked, wrong external id): the connection goes to `error` with
//     AWS's reason (and an `integration.error` event), the run fails, the inventory is untouched,
//     and the job is not retried — only a fixed role helps.
//   - Anything else (AWS down, a timeout): retried with backoff; the last attempt fails the run.
//   - Success: the inventory is merged and the run completed in the one transaction that completes
//     the job; a connection in `error` that works again goes back to `active`.
import type { Db } from '../../platform/db/database.ts';
import type { IntegrationRow } from '../../platform/db/schema.ts';
import { ProviderAuthError, ProviderError } from '../integrations/providers/errors.ts';
import { setIntegrationStatus } from '../integrations/connections/store.ts';
import { announceEnqueued } from '../../platform/jobs/signals.ts';
import { LeaseLostError, PermanentJobError, type JobHandlers, type JobKindDefinition } from '../../platform/jobs/types.ts';
import { cloudAccountOf } from './account.ts';
import { recordDiscovery, scopeErrors } from './inventory.ts';
import { createCloudConnectors, type CloudConnectors } from './providers/registry.ts';
import type { CloudSettings } from './providers/settings.ts';
import type { CloudProviderName } from './providers/types.ts';
import { DISCOVER_JOB, findRun, moveRun, type DiscoverPayload } from './store.ts';
import { errorMessage } from '../../schemas/json-value.ts';

export interface DiscoveryJobDeps {
  db: Db;
  cloud: CloudSettings;
  /** Built from `cloud` unless given. */
  connectors?: CloudConnectors | undefined;
}

const BACKOFF = { baseMs: 5_000, maxMs: 10 * 60_000 };

/** Why this connection cannot be discovered by this run, or null. A manual run may retry a connection in `error`. */
function unusable(row: IntegrationRow | undefined, trigger: string): string | null {
  if (!row) return 'the connection was removed';
  if (row.kind !== 'cloud') return `${row.provider} is not a cloud connection`;
  if (row.status === 'active') return null;
  if (row.status === 'error' && trigger === 'manual') return null;
  return `the connection is ${row.status}${row.error ? `: ${row.error}` : ''}`;
}

export function discoveryKind(deps: DiscoveryJobDeps): JobKindDefinition<DiscoverPayload> {
  const connectors = deps.connectors ?? createCloudConnectors(deps.cloud);
  const { db } = deps;
  return {
    concurrency: 2,
    backoff: BACKOFF,
    async run(job, ctx) {
      const run = await findRun(db, job.payload.run_id);
      // Deleted with its connection, or finished by an earlier attempt.
      if (!run || run.status === 'completed' || run.status === 'failed') return { skipped: true };
      const integration = await db.selectFrom('integrations').selectAll().where('id', '=', run.integration_id).where('org_id', '=', run.org_id).executeTakeFirst();
      const refusal = unusable(integration, run.trigger);
      const account = integration ? cloudAccountOf(integration) : null;
      if (refusal || !integration || !account) {
        const reason = refusal ?? 'the connection has no role';
        await moveRun(db, run.id, 'failed', { error: reason });
        throw new PermanentJobError(reason);
      }
      const connector = connectors[integration.provider as CloudProviderName];
      if (!connector) {
        await moveRun(db, run.id, 'failed', { error: `unknown cloud ${integration.provider}` });
        throw new PermanentJobError(`unknown cloud ${integration.provider}`);
      }
      await moveRun(db, run.id, 'running', { error: null });
      const startedAt = new Date();
      try {
        const results = await connector.discover(account, { signal: ctx.signal, onScope: (done, total) => ctx.progress(total > 0 ? done / total : 1) });
        const cloudMs = Date.now() - startedAt.getTime();
        const errors = scopeErrors(results);
        // The role works again: the connection is active before the run reads as completed, so
        // whoever waits for the run sees both.
        if (integration.status === 'error') {
          const updated = await setIntegrationStatus(db, integration, 'active', null);
          if (updated !== integration) announceEnqueued(db);
        }
        // The job's result (written with it): the counts and the split between the cloud and the inventory (bench/discovery.ts reads it).
        const outcome = await ctx.completeWith(async (trx) => {
          const writing = Date.now();
          const counts = await recordDiscovery(trx, { orgId: integration.org_id, integrationId: integration.id, provider: integration.provider }, results, startedAt);
          await moveRun(trx, run.id, 'completed', { counts, errors, error: null });
          return { ...counts, scope_errors: errors.length, timings: { cloud_ms: cloudMs, inventory_ms: Date.now() - writing } };
        });
        return outcome;
      } catch (err) {
        if (ctx.signal.aborted || err instanceof LeaseLostError) throw err;
        if (err instanceof ProviderAuthError) {
          const updated = await setIntegrationStatus(db, integration, 'error', err.message);
          // The event's webhook deliveries are jobs: wake the workers.
          if (updated !== integration) announceEnqueued(db);
          await moveRun(db, run.id, 'failed', { error: err.message });
          throw new PermanentJobError(err.message);
        }
        const last = job.attempts >= job.max_attempts;
        // Back to `queued` with the reason while it waits for the next attempt.
        await moveRun(db, run.id, last ? 'failed' : 'queued', { error: err instanceof ProviderError ? err.message : `discovery failed: ${errorMessage(err)}` });
        ctx.log.warn({ err, run: run.id, integration: integration.id }, 'attack surface: discovery failed');
        throw err;
      }
    },
  };
}

export function discoveryJobHandlers(deps: DiscoveryJobDeps): JobHandlers {
  return { [DISCOVER_JOB]: discoveryKind(deps) };
}
