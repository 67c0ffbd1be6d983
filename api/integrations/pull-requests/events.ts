// A pull/merge-request event, verified and deduplicated by the inbound dispatcher
// (../webhooks.ts), becomes a `pull_request.check` job. One row per pull request remembers the
// check run and the summary comment: a push of a new head resets the row for that head (the comment
// carries over, to be edited in place; the check run belongs to the old head and does not), and the
// job's dedupe key (row, head) makes a redelivery or a second event for the same head a no-op.
import type { IntegrationRow, IntegrationSettings, PullRequestCheckRow } from '../../../platform/db/schema.ts';
import { newId } from '../../../platform/ids.ts';
import { enqueue } from '../../../platform/jobs/queue.ts';
import { announceEnqueued } from '../../../platform/jobs/signals.ts';
import type { PullRequestEvent } from '../providers/types.ts';
import type { IntegrationDeps } from '../connections/sessions.ts';

export const PULL_REQUEST_JOB_KIND = 'pull_request.check';

export type PullRequestSettingsValue = NonNullable<IntegrationSettings['pull_requests']>;

/** The defaults of PullRequestSettings (../schemas.ts), for connections that never set them. */
export const DEFAULT_PULL_REQUEST_SETTINGS: PullRequestSettingsValue = { enabled: true, scan_types: ['secrets', 'sast', 'sca'], fail_on: 'high' };

export function pullRequestSettings(integration: Pick<IntegrationRow, 'settings'>): PullRequestSettingsValue {
  const stored = integration.settings?.pull_requests;
  return {
    enabled: stored?.enabled ?? DEFAULT_PULL_REQUEST_SETTINGS.enabled,
    scan_types: stored?.scan_types && stored.scan_types.length > 0 ? stored.scan_types : DEFAULT_PULL_REQUEST_SETTINGS.scan_types,
    fail_on: stored?.fail_on ?? DEFAULT_PULL_REQUEST_SETTINGS.fail_on,
  };
}

/** What the job needs of the event; a type alias (not an interface) so it fits the queue's payload type. */
export type PullRequestJobPayload = {
  pull_request_check_id: string;
  integration_id: string;
  delivery_id: string;
  event: PullRequestEvent;
};

export interface PullRequestEventOutcome {
  status: 'queued' | 'ignored';
  check_id?: string;
  reason?: string;
}

/** Thrown inside the transaction to undo the row change when the head was already checked. */
class AlreadyChecked extends Error {
  constructor(readonly row: PullRequestCheckRow) {
    super('already checked');
  }
}

export const dedupeKeyOf = (checkId: string, headSha: string): string => `${PULL_REQUEST_JOB_KIND}:${checkId}:${headSha}`;

/**
 * Records the pull request's new head and enqueues its check, in one transaction; workers are told
 * after commit. Returns `ignored` (with the reason) for actions Aegis does not check and for
 * connections whose pull-request checks are off.
 */
export async function handlePullRequestEvent(deps: IntegrationDeps, integration: IntegrationRow, event: PullRequestEvent, deliveryId: string): Promise<PullRequestEventOutcome> {
  if (event.action === 'other') return { status: 'ignored', reason: 'action not checked' };
  if (!pullRequestSettings(integration).enabled) return { status: 'ignored', reason: 'pull-request checks are disabled for this integration' };
  if (integration.status !== 'active') return { status: 'ignored', reason: `integration is ${integration.status}` };
  if (!event.headSha) return { status: 'ignored', reason: 'the event has no head commit' };

  try {
    const row = await deps.db.transaction().execute(async (trx) => {
      // A new head resets the row; the same head (a reopened pull request, a redelivery under a
      // new id) leaves it as it is — its job, if any, is found by the dedupe key below.
      const upserted = await trx
        .insertInto('pull_request_checks')
        .values({
          id: newId('prc'),
          org_id: integration.org_id,
          integration_id: integration.id,
          provider: integration.provider,
          repository: event.repository,
          number: event.number,
          head_sha: event.headSha,
          base_sha: event.baseSha || null,
          status: 'queued',
        })
        .onConflict((oc) =>
          oc
            .columns(['integration_id', 'repository', 'number'])
            .doUpdateSet((eb) => ({
              head_sha: eb.ref('excluded.head_sha'),
              base_sha: eb.ref('excluded.base_sha'),
              status: 'queued',
              conclusion: null,
              check_id: null,
              error: null,
              updated_at: new Date(),
            }))
            .where('pull_request_checks.head_sha', '<>', event.headSha),
        )
        .returningAll()
        .executeTakeFirst();
      const current =
        upserted ??
        (await trx
          .selectFrom('pull_request_checks')
          .selectAll()
          .where('integration_id', '=', integration.id)
          .where('repository', '=', event.repository)
          .where('number', '=', event.number)
          .executeTakeFirstOrThrow());
      const payload: PullRequestJobPayload = { pull_request_check_id: current.id, integration_id: integration.id, delivery_id: deliveryId, event };
      const { created } = await enqueue(trx, { kind: PULL_REQUEST_JOB_KIND, orgId: integration.org_id, payload, dedupeKey: dedupeKeyOf(current.id, event.headSha) });
      // A head whose job already exists: an older head delivered again after a newer one must not
      // take the row back (its job would never run again to finish it).
      if (!created && upserted) throw new AlreadyChecked(current);
      return { current, created };
    });
    if (!row.created) return { status: 'ignored', check_id: row.current.id, reason: 'this head commit was already checked' };
    announceEnqueued(deps.db);
    return { status: 'queued', check_id: row.current.id };
  } catch (err) {
    if (err instanceof AlreadyChecked) return { status: 'ignored', check_id: err.row.id, reason: 'this head commit was already checked' };
    throw err;
  }
}
