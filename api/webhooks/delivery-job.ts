// The `webhook.deliver` job: one attempt per run. The delivery's own retry schedule decides when
// the next run happens (RetryLaterError with the jittered delay), not the queue's backoff, so the
// schedule is the same whichever worker runs it. The same attempt code serves redeliveries
// (trigger `manual`) and the synchronous test ping of POST /api/v1/webhooks/:id/test.
import type { ServerConfig } from '../config.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { Db } from '../../platform/db/database.ts';
import type { AttemptTrigger, DeliveryStatus } from '../../platform/db/schema.ts';
import { toEvent } from '../../platform/events/event-store.ts';
import { RetryLaterError, type JobHandlers, type JobKindDefinition } from '../../platform/jobs/types.ts';
import { DELIVERY_JOB_KIND, type DeliveryJobPayload } from './fanout.ts';
import { failForDisabledWebhook, loadDelivery, recordAttempt, type LoadedDelivery, type RecordedAttempt } from './delivery-store.ts';
import { retryDelayMs } from './retry-schedule.ts';
import { webhookSender, type WebhookSender } from './send.ts';
import { signatureHeader } from './signature.ts';
import { openWebhookSecret } from './store.ts';
import { webhookUrlPolicy } from './url-policy.ts';

export type DeliveryConfig = Pick<ServerConfig, 'webhookTimeoutMs' | 'webhookRetryDelaysMs' | 'webhookDisableAfterMs' | 'webhookDnsServers' | 'allowPrivateTargets'>;

export interface DeliveryDeps {
  db: Db;
  secretBox: SecretBox;
  config: DeliveryConfig;
  sender: WebhookSender;
}

export const USER_AGENT = 'Aegis-Webhooks/1';
/** Deliveries one worker makes at once: mostly waiting on the network, so more than the CPU-bound kinds. */
export const DELIVERY_CONCURRENCY = 16;

/** Sealing context of a rotated-out secret: distinct from the current one's, so the two cannot be swapped. */
export const previousSecretContext = (webhookId: string): string => `${webhookId}:previous`;

/** A sender configured as the settings say (one connection pool; make it once per process). */
export function senderFor(config: DeliveryConfig): WebhookSender {
  const policy = webhookUrlPolicy({ allowPrivateTargets: config.allowPrivateTargets, dnsServers: config.webhookDnsServers });
  return webhookSender({ allowPrivate: policy.allowPrivate, resolve: policy.resolve, timeoutMs: config.webhookTimeoutMs });
}

/** The secrets a delivery is signed with: the current one, and the previous one until it expires. */
function signingSecrets(box: SecretBox, webhook: LoadedDelivery['webhook'], now: Date): string[] {
  const secrets = [openWebhookSecret(box, webhook)];
  if (webhook.previous_secret_sealed && webhook.previous_secret_expires_at && webhook.previous_secret_expires_at > now) {
    secrets.push(box.open(webhook.previous_secret_sealed, previousSecretContext(webhook.id)));
  }
  return secrets;
}

/** The delivery's status after a failed attempt, and when the schedule tries again. */
function afterFailure(config: DeliveryConfig, loaded: LoadedDelivery, trigger: AttemptTrigger): { status: DeliveryStatus; retryInMs?: number } {
  const { delivery } = loaded;
  if (trigger === 'automatic') {
    const retryInMs = retryDelayMs({ delaysMs: config.webhookRetryDelaysMs }, delivery.attempts + 1);
    return retryInMs === undefined ? { status: 'failed' } : { status: 'pending', retryInMs };
  }
  // A redelivery or test that fails does not undo a success already made, nor cut short a
  // schedule still running (a retry is due).
  if (delivery.status === 'succeeded') return { status: 'succeeded' };
  if (delivery.next_attempt_at) return { status: 'pending' };
  return { status: 'failed' };
}

export interface AttemptOutcome extends RecordedAttempt {
  /** Set when the schedule retries this delivery after that many milliseconds. */
  retryInMs?: number;
  error: string | null;
}

/** Makes one attempt of a loaded delivery and records it. */
export async function attemptDelivery(deps: DeliveryDeps, loaded: LoadedDelivery, trigger: AttemptTrigger, signal?: AbortSignal): Promise<AttemptOutcome> {
  const { delivery, event, webhook } = loaded;
  const startedAt = new Date();
  const body = JSON.stringify(toEvent(event));
  const headers = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-service-signature': signatureHeader(body, signingSecrets(deps.secretBox, webhook, startedAt)),
    'x-service-event-id': event.id,
    'x-service-event-type': event.type,
    'x-service-delivery-id': delivery.id,
    'x-service-delivery-attempt': String(delivery.attempts + 1),
  };
  const result = await deps.sender.send(webhook.url, body, headers, signal);
  // Stopped by the worker (shutdown, lease lost, canceled), not by the endpoint: record nothing, so
  // the endpoint's failure clock does not move; the job runs again (here or elsewhere) as the queue says.
  signal?.throwIfAborted();
  const next = result.ok ? { status: 'succeeded' as const } : afterFailure(deps.config, loaded, trigger);
  const recorded = await recordAttempt(deps.db, {
    loaded,
    trigger,
    startedAt,
    result,
    status: next.status,
    nextAttemptAt: next.retryInMs !== undefined ? new Date(Date.now() + next.retryInMs) : null,
    disableAfterMs: deps.config.webhookDisableAfterMs,
  });
  return { ...recorded, error: result.error, ...(next.retryInMs !== undefined ? { retryInMs: next.retryInMs } : {}) };
}

/** The payload as a type alias: the registry's Record<string, unknown> takes aliases, not interfaces. */
type JobPayload = { [K in keyof DeliveryJobPayload]: DeliveryJobPayload[K] };

export interface WebhookJobOptions {
  db: Db;
  secretBox: SecretBox;
  config: DeliveryConfig;
}

/** The `webhook.deliver` kind, for startJobs. One sender (connection pool) per call. */
export function webhookJobHandlers({ db, secretBox, config }: WebhookJobOptions): JobHandlers {
  const deps: DeliveryDeps = { db, secretBox, config, sender: senderFor(config) };
  const definition: JobKindDefinition<JobPayload> = {
    concurrency: DELIVERY_CONCURRENCY,
    async run(job, ctx) {
      const trigger = job.payload.trigger;
      const loaded = await loadDelivery(db, job.payload.delivery_id);
      // The webhook was deleted or the event pruned: nothing left to deliver.
      if (!loaded) return;
      // Already delivered (by a redelivery meanwhile): the schedule has nothing left to do.
      if (trigger === 'automatic' && loaded.delivery.status === 'succeeded') return;
      if (!loaded.webhook.enabled) {
        await failForDisabledWebhook(db, loaded.delivery);
        return;
      }
      const outcome = await attemptDelivery(deps, loaded, trigger, ctx.signal);
      // Not recorded: another run of this job got there first; it owns what follows.
      if (!outcome.recorded) return;
      // A webhook this attempt disabled is retried too: the next run finds it disabled and ends the delivery.
      if (outcome.retryInMs !== undefined) throw new RetryLaterError(outcome.error ?? 'delivery failed', outcome.retryInMs);
    },
  };
  return { [DELIVERY_JOB_KIND]: definition };
}
