// POST /api/v1/webhooks/github and /api/v1/webhooks/gitlab (spec 4.10, inbound from source
// control): a push queues a sync of every config repository that follows the pushed branch of the
// pushed repository and whose webhook secret the delivery proves.
//
// Public routes — the provider has no API key — so the delivery authenticates itself: without a
// signature (GitHub) or token (GitLab), or when it verifies with no matching repository's secret,
// the answer is 401 and nothing is queued. The same 401 whether no repository matches or the
// signature is wrong, so a caller learns nothing about which repositories are registered. A
// delivery id already acted on is answered again without queueing anything (providers redeliver),
// and a push of the commit a repository already synced is skipped for that repository.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { recordAudit } from '../../platform/audit-log.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { Db } from '../../platform/db/database.ts';
import { ApiError, badRequest } from '../../platform/http/errors.ts';
import { announceEnqueued } from '../../platform/jobs/signals.ts';
import { readDelivery, readPush, verifyDelivery, type Provider } from '../integrations/providers/push-deliveries.ts';
import { openWebhookSecret, requestSync } from './store.ts';
import { InboundAnswerSchema, integrationIdOf, type InboundWebhookReceiver } from '../integrations/webhooks.ts';

export interface PushRoutesOptions {
  db: Db;
  secretBox: SecretBox;
  allowLocalSources: boolean;
  /** Deliveries for a provider connection (`?integration=<id>`: pull requests, issues) go there. */
  integrations: InboundWebhookReceiver;
}

/** GitHub caps payloads at 25 MB; pushes are far smaller. Bounded because the route is public. */
const BODY_LIMIT = 5 * 1024 * 1024;

const unauthorized = (message: string) => new ApiError(401, 'unauthorized', message);

const PushAnswer = {
  type: 'object',
  required: ['status'],
  properties: {
    status: { type: 'string', enum: ['queued', 'duplicate', 'ignored'] },
    delivery_id: { type: ['string', 'null'] },
    event: { type: 'string' },
    syncs: { type: 'array', items: { type: 'object', required: ['repo_id', 'sync_id'], properties: { repo_id: { type: 'string' }, sync_id: { type: 'string' } } } },
    skipped: { type: 'array', items: { type: 'object', required: ['repo_id', 'reason'], properties: { repo_id: { type: 'string' }, reason: { type: 'string' } } } },
  },
} as const;

const DESCRIPTIONS: Record<Provider, string> = {
  github:
    'GitHub push webhook of config repositories, or (with `?integration=`) any webhook of a GitHub connection. Push: GitHub push webhook (content type JSON or form). Verified with `X-Hub-Signature-256` against the webhook secret of each config repository whose URL matches the pushed repository (clone, HTML, SSH or git URL); idempotent by `X-GitHub-Delivery`. A signed `ping` is answered `ignored`.',
  gitlab:
    "GitLab push webhook (`Push Hook`). Verified with `X-Gitlab-Token` against the webhook secret of each config repository whose URL matches the project's HTTP, SSH or web URL; idempotent by `Idempotency-Key` (or `X-Gitlab-Event-UUID`).",
};

export const pushRoutes: FastifyPluginAsync<PushRoutesOptions> = async (app, { db, secretBox, allowLocalSources, integrations }) => {
  // Signatures cover the body as sent: keep the bytes (this plugin's scope only).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json', 'application/x-www-form-urlencoded'], { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, body, done) => done(null, body));

  async function receive(provider: Provider, request: FastifyRequest) {
    const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const delivery = readDelivery(provider, request.headers);
    if (!delivery.credential) throw unauthorized(provider === 'github' ? 'unsigned delivery: X-Hub-Signature-256 is missing' : 'unauthenticated delivery: X-Gitlab-Token is missing');
    const push = readPush(provider, rawBody, request.headers['content-type'], allowLocalSources);
    if (typeof push === 'string') throw badRequest(`cannot read the delivery: ${push}`);

    const candidates = await db.selectFrom('config_repos').selectAll().where('repo_key', 'in', push.repoKeys).execute();
    const verified = candidates.filter((repo) => verifyDelivery(delivery, rawBody, openWebhookSecret(secretBox, repo)));
    if (verified.length === 0) throw unauthorized('the delivery does not verify with the webhook secret of any config repository for this repository');
    if (delivery.event !== 'push' || push.ref === null) return { status: 'ignored' as const, delivery_id: delivery.id, event: delivery.event };
    if (!delivery.id) throw badRequest(provider === 'github' ? 'X-GitHub-Delivery is missing' : 'Idempotency-Key (or X-Gitlab-Event-UUID) is missing');
    const deliveryId = delivery.id.slice(0, 200);

    const answer = await db.transaction().execute(async (trx) => {
      const first = await trx
        .insertInto('source_control_deliveries')
        .values({ provider, delivery_id: deliveryId, sync_ids: '[]' })
        .onConflict((oc) => oc.columns(['provider', 'delivery_id']).doNothing())
        .returning('delivery_id')
        .executeTakeFirst();
      if (!first) return { status: 'duplicate' as const, delivery_id: deliveryId, event: 'push', syncs: [], skipped: [] };
      const syncs: { repo_id: string; sync_id: string }[] = [];
      const skipped: { repo_id: string; reason: string }[] = [];
      for (const repo of verified) {
        if (push.ref !== `refs/heads/${repo.branch}`) skipped.push({ repo_id: repo.id, reason: `follows ${repo.branch}` });
        else if (push.after === null) skipped.push({ repo_id: repo.id, reason: 'the branch was deleted' });
        else if (repo.status === 'synced' && repo.last_synced_commit === push.after) skipped.push({ repo_id: repo.id, reason: 'commit already synced' });
        else {
          const { syncId } = await requestSync(trx, repo, { trigger: 'push', deliveryId, withRecord: true, dedupeKey: `config-repo:${repo.id}:push:${provider}:${deliveryId}` });
          if (syncId) syncs.push({ repo_id: repo.id, sync_id: syncId });
        }
        await recordAudit(trx, {
          orgId: repo.org_id,
          actor: { type: 'system', id: `webhook:${provider}` },
          ip: request.ip,
          action: 'config_repo.push_received',
          target: { type: 'config_repo', id: repo.id },
          metadata: { delivery_id: deliveryId, ref: push.ref, after: push.after },
        });
      }
      await trx.updateTable('source_control_deliveries').set({ sync_ids: JSON.stringify(syncs.map((s) => s.sync_id)) }).where('provider', '=', provider).where('delivery_id', '=', deliveryId).execute();
      return { status: 'queued' as const, delivery_id: deliveryId, event: 'push', syncs, skipped };
    });
    if (answer.syncs.length > 0) announceEnqueued(db);
    return answer;
  }

  for (const provider of ['github', 'gitlab'] as const) {
    app.post(
      `/api/v1/webhooks/${provider}`,
      {
        config: { auth: 'public' },
        bodyLimit: BODY_LIMIT,
        schema: {
          tags: ['Webhooks'],
          summary: `Inbound: ${provider === 'github' ? 'GitHub' : 'GitLab'} push, pull-request and issue events`,
          description: DESCRIPTIONS[provider],
          querystring: { type: 'object', properties: { integration: { type: 'string', minLength: 1, maxLength: 64, description: 'A provider connection: the delivery is verified with its secret and may be a `pull_request` / `merge_request` or `issues` event (docs/integrations.md).' } } },
          response: { 200: { anyOf: [InboundAnswerSchema, PushAnswer] }, 202: { anyOf: [InboundAnswerSchema, PushAnswer] } },
        },
      },
      async (request, reply) => {
        const integrationId = integrationIdOf(request);
        if (integrationId !== undefined) {
          const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
          const answer = await integrations.receive(provider, integrationId, request.headers, rawBody, request.headers['content-type']);
          return reply.code(answer.status === 'queued' ? 202 : 200).send(answer);
        }
        const answer = await receive(provider, request);
        return reply.code(answer.status === 'queued' ? 202 : 200).send(answer);
      },
    );
  }
};
