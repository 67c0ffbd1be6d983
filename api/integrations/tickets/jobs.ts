// The ticket jobs. `ticket.create` first looks for a ticket an earlier attempt may have created
// before it crashed (idempotent by finding), then creates one; `ticket.close` comments on and
// closes the ticket of a finding resolved in Aegis. Provider failures map onto the queue: a rate
// limit retries after the provider's Retry-After, an outage with the queue's backoff, a refusal
// (credential, unknown project) fails the job at once and says why on the ticket.
import { LeaseLostError, PermanentJobError, RetryLaterError, type Job, type JobHandlers, type JobKindDefinition } from '../../../platform/jobs/types.ts';
import type { IntegrationRow, VulnerabilityTicketRow } from '../../../platform/db/schema.ts';
import type { VulnerabilityRow } from '../../findings/store.ts';
import { ProviderAuthError, ProviderRateLimitError, ProviderRequestError } from '../providers/errors.ts';
import type { TicketTrackerClient } from '../providers/types.ts';
import { IntegrationUnavailableError, withProviderSession, type IntegrationDeps } from '../connections/sessions.ts';
import { closingComment, findingUrl, ticketDescription, ticketLabels, ticketTitle } from './content.ts';
import { enqueueTicketClose, TICKET_CLOSE_JOB, TICKET_CREATE_JOB, type TicketJobPayload } from './queue.ts';
import { moveTicket, noteTicketError, type TicketRequest } from './store.ts';
import { announceEnqueued } from '../../../platform/jobs/signals.ts';
import { errorMessage } from '../../../schemas/json-value.ts';

export type TicketJobDeps = IntegrationDeps & { publicUrl: () => string };

const BACKOFF = { baseMs: 2_000, maxMs: 5 * 60_000 };
/** Per worker: mostly waiting on the trackers' APIs, but their rate limits are per account, so only a few at once. */
const CONCURRENCY = 2;


/** Retrying cannot help: the provider refused, or the connection is gone or not active. */
const isPermanent = (err: unknown): boolean => err instanceof ProviderAuthError || err instanceof ProviderRequestError || err instanceof IntegrationUnavailableError;

/**
 * The queue's view of a failure: a rate limit waits as long as the provider asked, a refusal ends
 * the job; an outage (or anything unexpected) goes back with the queue's backoff.
 */
function forQueue(err: unknown): unknown {
  if (err instanceof ProviderRateLimitError) return new RetryLaterError(err.message, err.retryAfterMs);
  if (isPermanent(err)) return new PermanentJobError(errorMessage(err));
  return err;
}

/** Whether this failure ends the job (a refusal, or the last attempt), so the ticket should say so. */
const isFinal = (err: unknown, job: Job<TicketJobPayload>): boolean => isPermanent(err) || job.attempts >= job.max_attempts;

interface Loaded {
  ticket: VulnerabilityTicketRow;
  finding: VulnerabilityRow;
  integration: IntegrationRow | undefined;
}

async function load(deps: TicketJobDeps, vulnerabilityId: string): Promise<Loaded | null> {
  const ticket = await deps.db.selectFrom('vulnerability_tickets').selectAll().where('vulnerability_id', '=', vulnerabilityId).executeTakeFirst();
  if (!ticket) return null;
  const finding = await deps.db.selectFrom('vulnerabilities').selectAll().where('id', '=', vulnerabilityId).executeTakeFirst();
  if (!finding) return null;
  const integration = ticket.integration_id ? await deps.db.selectFrom('integrations').selectAll().where('id', '=', ticket.integration_id).where('org_id', '=', ticket.org_id).executeTakeFirst() : undefined;
  return { ticket, finding, integration };
}

function trackerOf(provider: string, tickets: TicketTrackerClient | undefined): TicketTrackerClient {
  if (!tickets) throw new IntegrationUnavailableError(`${provider} connections cannot create tickets`);
  return tickets;
}

function createKind(deps: TicketJobDeps): JobKindDefinition<TicketJobPayload> {
  return {
    concurrency: CONCURRENCY,
    backoff: BACKOFF,
    async run(job, ctx) {
      const loaded = await load(deps, job.payload.vulnerability_id);
      // Deleted meanwhile, or already done by an earlier run.
      if (!loaded || loaded.ticket.state !== 'creating') return { skipped: true };
      const { ticket, finding, integration } = loaded;
      const request = ticket.request as TicketRequest;
      try {
        if (!integration) throw new IntegrationUnavailableError('the connection was removed');
        const link = findingUrl(deps.publicUrl(), finding.id);
        const ref = await withProviderSession(deps, integration, async (session, connector) => {
          const tracker = trackerOf(connector.name, connector.tickets);
          const existing = await tracker.findTicket(session, request.project, finding.id);
          if (existing) return existing;
          return tracker.createTicket(session, {
            project: request.project,
            title: ticketTitle(finding),
            description: ticketDescription(finding, link),
            labels: ticketLabels(request, finding),
            ...(request.assignee ? { assignee: request.assignee } : {}),
            findingId: finding.id,
          });
        });
        const result = await ctx.completeWith(async (trx) => {
          const opened = await moveTicket(trx, finding.id, ['creating'], 'open', { external_id: ref.externalId, key: ref.key, url: ref.url, error: null });
          // Resolved while the ticket was being created: nothing queued a close then (it was not open yet).
          const current = await trx.selectFrom('vulnerabilities').select('status').where('id', '=', finding.id).executeTakeFirst();
          const closeQueued = opened !== undefined && current?.status === 'resolved';
          if (closeQueued) await enqueueTicketClose(trx, opened);
          return { key: ref.key, close_queued: closeQueued };
        });
        if (result.close_queued) announceEnqueued(deps.db);
        return result;
      } catch (err) {
        // Stopped, or another run of this job owns it now: that run says how it ends.
        if (ctx.signal.aborted || err instanceof LeaseLostError) throw err;
        // Failed for good, or still `creating` with the reason it is being retried.
        await moveTicket(deps.db, finding.id, ['creating'], isFinal(err, job) ? 'failed' : 'creating', { error: errorMessage(err) });
        ctx.log.warn({ err, vulnerability_id: finding.id, provider: ticket.provider }, 'ticket: creation failed');
        throw forQueue(err);
      }
    },
  };
}

function closeKind(deps: TicketJobDeps): JobKindDefinition<TicketJobPayload> {
  return {
    concurrency: CONCURRENCY,
    backoff: BACKOFF,
    async run(job, ctx) {
      const loaded = await load(deps, job.payload.vulnerability_id);
      // Closed already (at the tracker, or by another run), or the finding was reopened meanwhile.
      if (!loaded || loaded.ticket.state !== 'open' || loaded.finding.status !== 'resolved') return { skipped: true };
      const { ticket, finding, integration } = loaded;
      const externalId = ticket.external_id;
      // A link whose connection was removed cannot be reached any more; it stays as it is.
      if (!integration || !externalId) return { skipped: true };
      try {
        await withProviderSession(deps, integration, (session, connector) =>
          trackerOf(connector.name, connector.tickets).closeTicket(session, { externalId }, closingComment(finding, findingUrl(deps.publicUrl(), finding.id))),
        );
        await ctx.completeWith((trx) => moveTicket(trx, finding.id, ['open'], 'closed', { error: null }));
        return { closed: ticket.key };
      } catch (err) {
        if (ctx.signal.aborted || err instanceof LeaseLostError) throw err;
        if (isFinal(err, job)) await noteTicketError(deps.db, finding.id, `closing failed: ${errorMessage(err)}`);
        ctx.log.warn({ err, vulnerability_id: finding.id, provider: ticket.provider }, 'ticket: closing failed');
        throw forQueue(err);
      }
    },
  };
}

/** The ticket kinds, for startJobs. */
export function ticketJobHandlers(deps: TicketJobDeps): JobHandlers {
  return { [TICKET_CREATE_JOB]: createKind(deps), [TICKET_CLOSE_JOB]: closeKind(deps) };
}
