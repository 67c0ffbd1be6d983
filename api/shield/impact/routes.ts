// POST /api/v1/shield/sites/:id/impact: what a proposed configuration would have done to the
// traffic the site actually saw (docs/impact-preview.md). The proposal is checked as apply checks
// it and never stored (proposal.ts); the site's traffic record is replayed through the whole
// pipeline under the current and the proposed configuration (gateway/impact/replay.ts), and the
// differences are reported per changed object and in total. Rate-limited like analytics.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import type { Db } from '../../../platform/db/database.ts';
import type { SecretBox } from '../../../platform/crypto/secret-box.ts';
import { validationFailed } from '../../../platform/http/errors.ts';
import { AsnDatabase } from '../../../gateway/rules/asn-db.ts';
import { readTraffic, recordedSince } from '../../../gateway/traffic/traffic-reader.ts';
import { replayImpact } from '../../../gateway/impact/replay.ts';
import { principalOf } from '../../accounts/auth/plugin.ts';
import { siteParams } from '../params.ts';
import { proposedConfigs } from './proposal.ts';
import { impactBodySchema, impactResponseSchema } from './schema.ts';

const DEFAULT_WINDOW_MS = 24 * 3_600_000;

export interface ImpactRoutesOptions {
  db: Db;
  secretBox: SecretBox;
  /** The ASN database the gateway reads (ASN and country rules), when configured. */
  asnDbPath: string | undefined;
  perMinute: number;
  windowMs: number;
}

const instant = (value: string | undefined, field: string, fallback: number): number => {
  if (value === undefined) return fallback;
  const at = Date.parse(value);
  if (Number.isNaN(at)) throw validationFailed(`request body is invalid: ${field} is not a date-time`, { fields: [{ field, message: 'is not a date-time' }] });
  return at;
};

export const impactRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: ImpactRoutesOptions }> = async (app, { db, secretBox, asnDbPath, perMinute, windowMs }) => {
  let asnDb: AsnDatabase | undefined;
  app.post(
    '/api/v1/shield/sites/:id/impact',
    {
      config: { auth: 'shield:read', rateLimit: { max: perMinute, timeWindow: windowMs } },
      schema: {
        tags: ['Shield impact'],
        summary: 'Preview what a configuration change would have done to recorded traffic',
        description:
          'Replays the site’s recorded traffic (default: the last 24 hours) through the whole ordered pipeline under the current configuration and under the proposed one — ' +
          'site settings as PATCH /api/v1/shield/sites/{id} takes them and rule writes as POST …/rules/batch takes them, checked the same way (422 naming the field) and never stored — ' +
          'and reports, per changed object and in total, the requests that would newly be blocked, challenged or allowed: clients and networks, the statuses those requests actually got, ' +
          'sessions, first and last seen, an hourly histogram and redacted examples. Verdicts that read only metadata (IP rules, rate limits replayed over the recorded timestamps, the mode) are exact; ' +
          `those that read parameter values count only the sampled requests whose values were kept (\`coverage\`). Limited to ${perMinute} requests per minute per key.`,
        params: siteParams,
        body: impactBodySchema,
        response: { 200: impactResponseSchema },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const body = request.body ?? {};
      const until = instant(body.until, 'until', Date.now());
      const since = instant(body.since, 'since', until - DEFAULT_WINDOW_MS);
      if (since >= until) throw validationFailed('request body is invalid: since must be before until', { fields: [{ field: 'since', message: 'must be before until' }] });
      const { current, proposed, operationOf } = await proposedConfigs(db, orgId, request.params.id, { site: body.site, operations: body.operations, schema: body.schema });
      const siteId = current.site.id;
      if (asnDbPath && !asnDb) asnDb = AsnDatabase.load(asnDbPath);
      const first = await recordedSince(db, siteId);
      const report = await replayImpact({
        current,
        proposed,
        records: readTraffic(db, siteId, { since, until }, (sealed, site) => secretBox.open(sealed, site)),
        window: { since, until },
        ...(asnDb ? { asnDb } : {}),
      });
      const objects = report.objects.map((impact) => {
        const index = impact.object.id === null ? undefined : operationOf.get(impact.object.id);
        if (index === undefined) return impact;
        // A rule the proposal creates has no id yet: it is named by its operation.
        const created = body.operations?.[index]?.op === 'create';
        return { ...impact, object: { ...impact.object, id: created ? null : impact.object.id, operation: index } };
      });
      return {
        site_id: siteId,
        ...report,
        covered: { since: first === null || first >= until ? null : new Date(Math.max(since, first)).toISOString(), recorded_since: first === null ? null : new Date(first).toISOString() },
        objects,
      };
    },
  );
};
