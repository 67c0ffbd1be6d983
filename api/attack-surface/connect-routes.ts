// Connecting an AWS account, in two steps (docs/attack-surface.md):
//   1. POST /api/v1/integrations/aws/connect {} → a pending connection with a generated external id,
//      and the trust and permissions policies of the role to create.
//   2. POST … {integration, role_arn} → Aegis assumes the role with that external id (STS); on
//      success the connection is active and its first discovery is queued.
// A static path: Fastify prefers it over the generic /api/v1/integrations/:provider/connect.
import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { auditRequest } from '../../platform/audit-log.ts';
import { principalOf } from '../accounts/auth/plugin.ts';
import type { IntegrationRow, IntegrationSettings } from '../../platform/db/schema.ts';
import { announceDeliveries, recordEvents } from '../../platform/events/event-store.ts';
import { ApiError, conflict, notFound, validationFailed } from '../../platform/http/errors.ts';
import { newId } from '../../platform/ids.ts';
import { ProviderAuthError, ProviderError, ProviderRequestError } from '../integrations/providers/errors.ts';
import { findIntegration, toIntegration } from '../integrations/connections/store.ts';
import { announceEnqueued } from '../../platform/jobs/signals.ts';
import { regionsOf } from './account.ts';
import type { CloudConnectors } from './providers/registry.ts';
import type { CloudIdentity } from './providers/types.ts';
import { AttackSurfaceRunResource, AwsConnectAnswer, AwsConnectBody, idParams } from './schemas.ts';
import { queueRun, toRun, unfinishedRun } from './store.ts';
import type { Db } from '../../platform/db/database.ts';

const newExternalId = (): string => `aegis-${randomBytes(16).toString('hex')}`;
const show = (row: IntegrationRow) => ({ ...toIntegration(row), settings: row.settings, webhook_url: null });

function awsFailure(err: unknown): never {
  if (err instanceof ProviderAuthError || err instanceof ProviderRequestError) {
    throw validationFailed(`AWS refused to let Aegis assume the role: ${err.message}`, { fields: [{ field: 'role_arn', message: err.message }] });
  }
  if (err instanceof ProviderError) throw new ApiError(502, 'provider_unavailable', `AWS could not be reached or answered with an error: ${err.message}`);
  throw err;
}

export const awsConnectRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db; connectors: CloudConnectors } }> = async (app, { db, connectors }) => {
  const tags = ['Attack surface'];
  const aws = connectors.aws;

  app.post(
    '/api/v1/integrations/aws/connect',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Connect an AWS account',
        description:
          'Two steps. Without `role_arn`: creates a pending connection with a generated external id and answers with the trust policy (Aegis’s principal, the external id) and the read-only permissions policy of the role to create (201). ' +
          'With `integration` (the pending id) and `role_arn`: Aegis assumes the role with that external id; on success the connection is active (`account`: the AWS account id) and its first discovery is queued (201, with the run). ' +
          'AWS refused to let the role be assumed: 422 with AWS’s reason; AWS unreachable: 502.',
        body: AwsConnectBody,
        response: { 201: AwsConnectAnswer },
      },
    },
    async (request, reply) => {
      const { orgId, actor } = principalOf(request);
      const body = request.body ?? {};
      const settings: IntegrationSettings = body.settings?.discovery ? { discovery: { ...body.settings.discovery } } : {};

      if (body.role_arn === undefined) {
        if (body.integration !== undefined) throw validationFailed('request body is invalid: role_arn is required with integration', { fields: [{ field: 'role_arn', message: 'is required with integration' }] });
        const externalId = newExternalId();
        const setup = aws.setup(externalId);
        const row = await db.transaction().execute(async (trx) => {
          const created = await trx
            .insertInto('integrations')
            .values({
              id: newId('int'),
              org_id: orgId,
              kind: 'cloud',
              provider: 'aws',
              auth_type: 'role',
              status: 'pending',
              metadata: JSON.stringify({ external_id: externalId }),
              settings: JSON.stringify(settings),
              connected_by: actor.id,
            })
            .returningAll()
            .executeTakeFirstOrThrow();
          await auditRequest(trx, request, { action: 'integration.connect_started', target: { type: 'integration', id: created.id }, metadata: { provider: 'aws', auth_type: 'role' } });
          return created;
        });
        return reply.code(201).send({ integration: show(row), setup: { external_id: externalId, principal: setup.principal, trust_policy: setup.trustPolicy, permissions_policy: setup.permissionsPolicy } });
      }

      if (body.integration === undefined) throw validationFailed('request body is invalid: integration is required with role_arn (the pending connection of step 1)', { fields: [{ field: 'integration', message: 'is required with role_arn' }] });
      const pending = await findIntegration(db, orgId, body.integration);
      if (!pending || pending.provider !== 'aws' || pending.kind !== 'cloud') throw notFound('integration');
      if (pending.status === 'active') throw conflict('this connection is already active; disconnect it to connect another role', { integration: pending.id });
      const externalId = (pending.metadata as { external_id?: unknown }).external_id;
      if (typeof externalId !== 'string') throw conflict('this connection has no external id; start again without role_arn');
      const merged: IntegrationSettings = { ...pending.settings, ...settings };
      let identity: CloudIdentity;
      try {
        identity = await aws.verify({ roleArn: body.role_arn, externalId, regions: regionsOf({ settings: merged }) });
      } catch (err) {
        awsFailure(err);
      }
      const { row, run, deliveries } = await db.transaction().execute(async (trx) => {
        const locked = await trx.selectFrom('integrations').selectAll().where('id', '=', pending.id).forUpdate().executeTakeFirst();
        if (!locked || locked.status === 'active') throw conflict('this connection was completed meanwhile', { integration: pending.id });
        const activated = await trx
          .updateTable('integrations')
          .set({
            status: 'active',
            error: null,
            account: identity.accountId,
            account_id: identity.accountId,
            metadata: JSON.stringify({ external_id: externalId, role_arn: body.role_arn, assumed_arn: identity.arn }),
            settings: JSON.stringify(merged),
            updated_at: new Date(),
          })
          .where('id', '=', pending.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await auditRequest(trx, request, { action: 'integration.connected', target: { type: 'integration', id: activated.id }, metadata: { provider: 'aws', auth_type: 'role', account: identity.accountId, role_arn: body.role_arn } });
        const { deliveries } = await recordEvents(trx, [{ orgId, type: 'integration.connected', object: toIntegration(activated) }]);
        const run = (await unfinishedRun(trx, activated.id)) ?? (await queueRun(trx, activated, 'connect'));
        return { row: activated, run, deliveries };
      });
      announceDeliveries(db, deliveries);
      announceEnqueued(db);
      return reply.code(201).send({ integration: show(row), ...(run ? { run: toRun(run) } : {}) });
    },
  );

  app.post(
    '/api/v1/integrations/:id/discover',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Discover now',
        description: 'Queues a discovery of this cloud connection (202, the run). A run already queued or running is answered instead of a second one. A connection in `error` may be retried this way: a discovery that works puts it back to `active`.',
        params: idParams,
        response: { 202: AttackSurfaceRunResource },
      },
    },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      const run = await db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('integrations').selectAll().where('org_id', '=', orgId).where('id', '=', request.params.id).forUpdate().executeTakeFirst();
        if (!row) throw notFound('integration');
        if (row.kind !== 'cloud') throw validationFailed(`${row.provider} is not a cloud connection; only cloud connections discover`);
        if (row.status === 'pending') throw conflict('this connection is not connected yet: finish POST /api/v1/integrations/aws/connect with role_arn');
        const existing = await unfinishedRun(trx, row.id);
        if (existing) return existing;
        const created = await queueRun(trx, row, 'manual');
        if (!created) throw new Error('discovery job was not created');
        await auditRequest(trx, request, { action: 'attack_surface.discovery_requested', target: { type: 'integration', id: row.id }, metadata: { run: created.id } });
        return created;
      });
      announceEnqueued(db);
      return reply.code(202).send(toRun(run));
    },
  );
};
