// /api/v1/attack-surface: the inventory of public endpoints cloud discovery found, whether each is
// covered, the discovery runs, and the one-call suggestions: a DAST schedule or a Shield site for
// an uncovered host, made through the same stores and checks as their own routes.
import { isIP } from 'node:net';
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { ScanScheduleResource, ShieldSiteResource, ShieldSiteSpec } from '../../schemas/index.ts';
import { auditRequest } from '../../platform/audit-log.ts';
import { principalOf } from '../accounts/auth/plugin.ts';
import type { Db } from '../../platform/db/database.ts';
import { conflict, notFound, validationFailed } from '../../platform/http/errors.ts';
import { parseEnumList, parseList } from '../../platform/http/filters.ts';
import { decodeCursor, pageLimit, toPage } from '../../platform/http/pagination.ts';
import { listResponseSchema } from '../../platform/http/schemas.ts';
import type { OriginPolicy } from '../../platform/net/origin-policy.ts';
import { insertSchedule, toSchedule, type ScheduleFields } from '../schedules/store.ts';
import { nextRunAt, scheduleIssues, type FieldIssue } from '../../schemas/checks/schedule.ts';
import { checkOrigin } from '../shield/sites/routes.ts';
import { domainTaken, insertSite, MANAGED_RULES_DEFAULT } from '../shield/sites/store.ts';
import type { EdgeSettings } from '../shield/sites/edge-settings.ts';
import { defaultTls } from '../shield/sites/tls.ts';
import { siteResource } from '../shield/sites/view.ts';
import { coveringScheduleCondition } from './coverage.ts';
import { ASSET_KINDS } from './providers/types.ts';
import { AssetListQuery, AttackSurfaceAssetResource, AttackSurfaceRunResource, idParams, RunListQuery, ScanScheduleFromAsset, ShieldSiteFromAsset } from './schemas.ts';
import { findAsset, listAssets, listRuns, toAsset, toRun, type AssetWithCoverage } from './store.ts';

const DOMAIN = new RegExp(ShieldSiteSpec.properties.domain.pattern);

/** Same envelope and message shape as a schema failure (as the schedules routes report). */
function rejectFields(issues: FieldIssue[]): void {
  if (issues.length === 0) return;
  throw validationFailed(`request body is invalid: ${issues.map((i) => `${i.field} ${i.message}`).join('; ')}`, { fields: issues });
}

/** The host as a URL authority (IPv6 in brackets). */
const authority = (host: string): string => (isIP(host) === 6 ? `[${host}]` : host);

/** Daily at 03:xx UTC, the minute spread by host so that many suggested schedules do not start together. */
function defaultCron(host: string): string {
  let h = 0;
  for (const ch of host) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return `${h % 60} 3 * * *`;
}

function activeAsset(asset: AssetWithCoverage | undefined): AssetWithCoverage {
  if (!asset) throw notFound('attack surface asset');
  if (asset.gone_at !== null) throw validationFailed(`${asset.host} is no longer discovered (gone since ${asset.gone_at.toISOString()}); nothing to cover`);
  return asset;
}

export const inventoryRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db; originPolicy: OriginPolicy; edge: EdgeSettings } }> = async (app, { db, originPolicy, edge }) => {
  const tags = ['Attack surface'];

  app.get(
    '/api/v1/attack-surface',
    {
      config: { auth: 'scans:read' },
      schema: {
        tags,
        summary: 'List the attack surface',
        description: 'Public endpoints found by cloud discovery, newest first, each with whether a Shield site or a scan covers its host (computed at read time).',
        querystring: AssetListQuery,
        response: { 200: listResponseSchema(AttackSurfaceAssetResource) },
      },
    },
    async (request) => {
      const q = request.query;
      const limit = pageLimit(q);
      const rows = await listAssets(db, {
        orgId: principalOf(request).orgId,
        after: decodeCursor(q.cursor),
        limit,
        kinds: parseEnumList('kind', q.kind, ASSET_KINDS),
        hosts: parseList('host', q.host),
        integrationId: q.integration,
        status: q.status ?? 'active',
        covered: q.covered,
      });
      return toPage(rows, limit, toAsset);
    },
  );

  app.get(
    '/api/v1/attack-surface/runs',
    {
      config: { auth: 'scans:read' },
      schema: { tags, summary: 'List discovery runs', description: 'Discoveries of the organisation’s cloud connections, newest first.', querystring: RunListQuery, response: { 200: listResponseSchema(AttackSurfaceRunResource) } },
    },
    async (request) => {
      const limit = pageLimit(request.query);
      const rows = await listRuns(db, { orgId: principalOf(request).orgId, after: decodeCursor(request.query.cursor), limit, integrationId: request.query.integration });
      return toPage(rows, limit, toRun);
    },
  );

  app.get(
    '/api/v1/attack-surface/:id',
    { config: { auth: 'scans:read' }, schema: { tags, summary: 'Get an attack-surface asset', params: idParams, response: { 200: AttackSurfaceAssetResource } } },
    async (request) => {
      const asset = await findAsset(db, principalOf(request).orgId, request.params.id);
      if (!asset) throw notFound('attack surface asset');
      return toAsset(asset);
    },
  );

  app.post(
    '/api/v1/attack-surface/:id/scan-schedule',
    {
      config: { auth: 'scans:write' },
      schema: {
        tags,
        summary: 'Schedule a scan of an asset',
        description:
          'Creates a scan schedule (default: a daily DAST scan of `https://<host>/`) with the same checks as POST /api/v1/scan-schedules, and answers with it (201). 409 when an enabled schedule already covers the host (`details.scan_schedule_id`).',
        params: idParams,
        body: ScanScheduleFromAsset,
        response: { 201: ScanScheduleResource },
      },
    },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      const asset = activeAsset(await findAsset(db, orgId, request.params.id));
      const body = request.body ?? {};
      const scanType = body.scan_type ?? 'dast';
      const target = body.target ?? `https://${authority(asset.host)}/`;
      const cron = body.cron ?? defaultCron(asset.host);
      const timezone = body.timezone ?? 'UTC';
      rejectFields(scheduleIssues({ scan_type: scanType, target, cron, timezone }));
      const name = body.name ?? `${scanType === 'api' ? 'API' : 'DAST'} ${asset.host}`;
      const fields: ScheduleFields = { name, scan_type: scanType, target, cron, timezone, enabled: true, config: {}, labels: {}, next_run_at: nextRunAt({ cron, timezone }) };
      const schedule = await db.transaction().execute(async (trx) => {
        const covering = await trx.selectFrom('scan_schedules').select('id').where(coveringScheduleCondition(orgId, asset.host)).orderBy('id').limit(1).executeTakeFirst();
        if (covering) throw conflict(`scan schedule ${covering.id} already covers ${asset.host}`, { scan_schedule_id: covering.id });
        const created = await insertSchedule(trx, orgId, fields);
        await auditRequest(trx, request, { action: 'scan_schedule.created', target: { type: 'scan_schedule', id: created.id }, metadata: { name, scan_type: scanType, enabled: true, attack_surface_asset: asset.id } });
        return created;
      });
      return reply.code(201).send(toSchedule(schedule));
    },
  );

  app.post(
    '/api/v1/attack-surface/:id/shield-site',
    {
      config: { auth: 'shield:write' },
      schema: {
        tags,
        summary: 'Protect an asset with Shield',
        description:
          'Creates a Shield site (default: domain = the host, origin `https://<host>`, mode `log`) with the same origin check as POST /api/v1/shield/sites, and answers with it (201). An asset whose host is an IP address needs `domain`. 409 when the domain already has a site.',
        params: idParams,
        body: ShieldSiteFromAsset,
        response: { 201: ShieldSiteResource },
      },
    },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      const asset = activeAsset(await findAsset(db, orgId, request.params.id));
      const body = request.body ?? {};
      if (body.domain === undefined && isIP(asset.host) !== 0) {
        throw validationFailed(`request body is invalid: domain is required: ${asset.host} is an IP address and a Shield site protects a domain`, { fields: [{ field: 'domain', message: 'is required for an IP address asset' }] });
      }
      const domain = body.domain ?? asset.host;
      if (!DOMAIN.test(domain)) throw validationFailed(`request body is invalid: domain ${domain} is not a domain a Shield site can protect; give one`, { fields: [{ field: 'domain', message: 'is not a lower-case domain name' }] });
      const origin = body.origin_url ?? `https://${authority(asset.host)}`;
      const mode = body.mode ?? 'log';
      await checkOrigin(origin, originPolicy);
      const site = await db.transaction().execute(async (trx) => {
        if (await domainTaken(trx, orgId, domain)) throw conflict(`a Shield site for ${domain} already exists`, { field: 'domain' });
        const created = await insertSite(trx, orgId, { domain, origin_url: origin, mode, path_case: 'insensitive', managed_rules: { ...MANAGED_RULES_DEFAULT }, tls: defaultTls(edge.tlsPort), labels: {} });
        await auditRequest(trx, request, { action: 'shield_site.created', target: { type: 'shield_site', id: created.id }, metadata: { domain, mode, attack_surface_asset: asset.id } });
        return created;
      });
      return reply.code(201).send(await siteResource(db, site, edge));
    },
  );
};
