// /api/v1/sandbox: what the caller's sandbox is (targets, demo target), which hosts test-mode scans
// may probe (set from live only: the sandbox cannot widen its own reach), and emptying it
// (from test only: a live key can never delete anything by this route). The demo target itself is
// served at /sandbox/demo (./demo-target.ts).
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { auditRequest } from '../../platform/audit-log.ts';
import { principalOf } from '../accounts/auth/plugin.ts';
import type { Db } from '../../platform/db/database.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { dataSpaceOf, ensureSandbox, ENVIRONMENTS } from '../../platform/db/environments.ts';
import { resetSandbox } from './reset.ts';
import { demoTargetUrl, sandboxTargets } from './target-policy.ts';

const HOST_PATTERN = '^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(:[0-9]{1,5})?$';

const SandboxResource = {
  type: 'object',
  required: ['organization_id', 'environment', 'targets', 'demo_target_url'],
  properties: {
    organization_id: { type: 'string' },
    environment: { type: 'string', enum: ENVIRONMENTS, description: "The caller's environment." },
    targets: { type: 'array', items: { type: 'string' }, description: 'Hosts (`name` or `name:port`) test-mode URL scans may probe.' },
    demo_target_url: { type: 'string', description: 'The deliberately vulnerable demo application Aegis serves: test-mode scans may always probe it.' },
  },
} as const;

export interface SandboxRoutesOptions {
  db: Db;
  publicUrl: () => string;
}

export const sandboxRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: SandboxRoutesOptions }> = async (app, { db, publicUrl }) => {
  const tags = ['Sandbox'];

  const describe = async (organizationId: string, environment: (typeof ENVIRONMENTS)[number]) => ({
    organization_id: organizationId,
    environment,
    targets: await sandboxTargets(db, dataSpaceOf(organizationId, 'test')),
    demo_target_url: demoTargetUrl(publicUrl()),
  });

  app.get('/api/v1/sandbox', { config: { auth: 'authenticated' }, schema: { tags, summary: 'The sandbox', response: { 200: SandboxResource } } }, async (request) => {
    const principal = principalOf(request);
    return describe(principal.organization.id, principal.environment);
  });

  app.put(
    '/api/v1/sandbox/targets',
    {
      config: { auth: 'admin', organizationLevel: true },
      schema: {
        tags,
        summary: 'Set the sandbox targets',
        description: 'Replaces the hosts test-mode URL scans may probe. Live keys and sessions only (403 `live_mode_required` from the sandbox).',
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['targets'],
          properties: { targets: { type: 'array', maxItems: 100, uniqueItems: true, items: { type: 'string', pattern: HOST_PATTERN, maxLength: 259 } } },
        },
        response: { 200: SandboxResource },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const targets = request.body.targets.map((t) => t.toLowerCase());
      await db.transaction().execute(async (trx) => {
        const id = await ensureSandbox(trx, principal.organization.id);
        await trx.updateTable('organizations').set({ sandbox_targets: JSON.stringify(targets) }).where('id', '=', id).execute();
        await auditRequest(trx, request, { action: 'sandbox.targets_set', metadata: { targets } });
      });
      return describe(principal.organization.id, principal.environment);
    },
  );

  app.delete(
    '/api/v1/sandbox/data',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Empty the sandbox',
        description:
          'Deletes every object of the test environment (Shield sites and rules, schedules, webhooks and deliveries, scans, findings, config repositories, events, audit entries) in one transaction. Keys and targets stay. Test keys and test sessions only: from live it is 403, so live data can never be emptied by it.',
        response: {
          200: {
            type: 'object',
            required: ['deleted'],
            properties: { deleted: { type: 'object', additionalProperties: { type: 'integer' }, description: 'Rows deleted, by table.' } },
          },
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      if (principal.environment !== 'test') throw new ApiError(403, 'forbidden', 'only a test key (svc_test_) or a session in test mode can empty the sandbox');
      const deleted = await db.transaction().execute(async (trx) => {
        const counts = await resetSandbox(trx, principal.orgId);
        // The emptied log starts with who emptied it.
        await auditRequest(trx, request, { action: 'sandbox.reset', metadata: { deleted: counts } });
        return counts;
      });
      return { deleted };
    },
  );
};
