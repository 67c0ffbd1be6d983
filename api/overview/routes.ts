// GET /api/v1/overview: the dashboard's first page in one request — open findings by severity and
// by age, the latest scans, and Shield blocks over the last 24 hours — counted in SQL over the
// caller's data space (organisation and environment, as every store filters), never by listing.
// Any key or session may call it; each section is present only when the caller's scopes can read
// it (findings need `vulnerabilities:read`, scans `scans:read`, Shield `shield:read`), else null.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { principalOf } from '../accounts/auth/plugin.ts';
import { grants } from '../accounts/auth/scopes.ts';
import type { Db } from '../../platform/db/database.ts';
import { livemodeSchema } from '../../schemas/common.ts';
import { livemodeOf } from '../../platform/db/environments.ts';
import { ScanResource } from '../scans/schemas.ts';
import { toScan } from '../scans/store.ts';
import { findingCounts, RECENT_SCANS, recentScans, shieldBlocks } from './queries.ts';
import { OverviewFindings, OverviewShield } from './schemas.ts';

export const overviewRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db } }> = async (app, { db }) => {
  app.get(
    '/api/v1/overview',
    {
      config: { auth: 'authenticated' },
      schema: {
        tags: ['Overview'],
        summary: 'Overview of the organisation',
        description:
          'Counts for a dashboard, computed by the server for the caller’s organisation and environment: open findings (status `open` or `acknowledged`, not marked false positive) by severity and by age since first seen, ' +
          `the ${RECENT_SCANS} latest scans, and Shield blocks over the last 24 hours in total and per site (the sites with most blocks first). ` +
          'Any key or session may call it: a section the caller’s scopes cannot read (`vulnerabilities:read`, `scans:read`, `shield:read`) is null.',
        response: {
          200: {
            type: 'object',
            required: ['livemode', 'generated_at', 'findings', 'scans', 'shield'],
            properties: {
              livemode: livemodeSchema,
              generated_at: { type: 'string', format: 'date-time' },
              findings: OverviewFindings,
              scans: {
                type: ['object', 'null'],
                required: ['active', 'total', 'recent'],
                properties: {
                  active: { type: 'integer', minimum: 0, description: 'Scans queued or running.' },
                  total: { type: 'integer', minimum: 0 },
                  recent: { type: 'array', items: ScanResource, description: `The ${RECENT_SCANS} latest scans, newest first.` },
                },
              },
              shield: OverviewShield,
            },
          },
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const can = (scope: 'vulnerabilities:read' | 'scans:read' | 'shield:read') => grants(principal.scopes, scope);
      const now = new Date();
      const [findings, scans, shield] = await Promise.all([
        can('vulnerabilities:read') ? findingCounts(db, principal.orgId, now) : null,
        can('scans:read') ? recentScans(db, principal.orgId) : null,
        can('shield:read') ? shieldBlocks(db, principal.orgId, now) : null,
      ]);
      return {
        livemode: livemodeOf(principal.orgId),
        generated_at: now.toISOString(),
        findings,
        scans: scans && { active: scans.active, total: scans.total, recent: scans.recent.map(toScan) },
        shield,
      };
    },
  );
};
