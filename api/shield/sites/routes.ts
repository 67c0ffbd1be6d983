// /api/v1/shield/sites: list, get, create, update (mode, origin_url, path_case, managed_rules, tls, labels), delete.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { ShieldSiteResource, ShieldSiteSpec, ShieldSiteUpdate } from '../../../schemas/index.ts';
import { auditRequest } from '../../../platform/audit-log.ts';
import { principalOf } from '../../accounts/auth/plugin.ts';
import type { Db } from '../../../platform/db/database.ts';
import { conflict, notFound, validationFailed } from '../../../platform/http/errors.ts';
import { unknownRuleRefs } from '../../../gateway/rules/managed/index.ts';
import type { ManagedRulesSettings } from '../../../platform/db/schema.ts';
import { parseEnumList, parseList } from '../../../platform/http/filters.ts';
import { decodeCursor, pageLimit, toPage } from '../../../platform/http/pagination.ts';
import { filterParam, listResponseSchema, pageQueryProperties } from '../../../platform/http/schemas.ts';
import { labelQueryProperty, parseLabelFilter } from '../../../platform/resources/labels.ts';
import { originRefusal, type OriginPolicy } from '../../../platform/net/origin-policy.ts';
import { deleteSite, domainTaken, findSite, insertSite, listSites, MANAGED_RULES_DEFAULT, updateSite } from './store.ts';
import type { EdgeSettings } from './edge-settings.ts';
import { checkTls, defaultTls, mergeTls } from './tls.ts';
import { siteResource, siteResources } from './view.ts';

import { siteParams as siteIdParams } from '../params.ts';
const MODES = ShieldSiteSpec.properties.mode.enum;

/** Exclusions must name rules that exist: a typo would otherwise silently exclude nothing. */
export function checkManagedRules(settings: Partial<ManagedRulesSettings> | undefined): void {
  const fields = (settings?.exclusions ?? []).flatMap((exclusion, i) =>
    unknownRuleRefs(exclusion.rules).map((ref) => ({ field: `managed_rules.exclusions[${i}].rules[${exclusion.rules.indexOf(ref)}]`, message: `${JSON.stringify(ref)} is not a managed rule id or category (GET /api/v1/shield/managed-rules)` })),
  );
  if (fields.length > 0) throw validationFailed(`request body is invalid: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}`, { fields });
}

/** An origin_url that is, or resolves to, a cloud metadata or link-local address is refused (net/origin-policy.ts). */
export async function checkOrigin(originUrl: string | undefined, policy: OriginPolicy): Promise<void> {
  const reason = originUrl === undefined ? null : await originRefusal(originUrl, policy);
  if (reason) throw validationFailed(`request body is invalid: origin_url ${reason}`, { fields: [{ field: 'origin_url', message: reason }] });
}

export const siteRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db; originPolicy: OriginPolicy; edge: EdgeSettings } }> = async (app, { db, originPolicy, edge }) => {
  const tags = ['Shield sites'];

  app.get(
    '/api/v1/shield/sites',
    {
      config: { auth: 'shield:read' },
      schema: {
        tags,
        summary: 'List Shield sites',
        querystring: {
          type: 'object',
          properties: { ...pageQueryProperties, ...labelQueryProperty, mode: filterParam('Filter by mode.'), domain: filterParam('Filter by domain.') },
        },
        response: { 200: listResponseSchema(ShieldSiteResource) },
      },
    },
    async (request) => {
      const limit = pageLimit(request.query);
      const rows = await listSites(db, {
        orgId: principalOf(request).orgId,
        after: decodeCursor(request.query.cursor),
        limit,
        labels: parseLabelFilter(request.query.label),
        modes: parseEnumList('mode', request.query.mode, MODES),
        domains: parseList('domain', request.query.domain),
      });
      const page = toPage(rows, limit, (row) => row);
      return { ...page, data: await siteResources(db, page.data, edge) };
    },
  );

  app.get(
    '/api/v1/shield/sites/:id',
    { config: { auth: 'shield:read' }, schema: { tags, summary: 'Get a Shield site', params: siteIdParams, response: { 200: ShieldSiteResource } } },
    async (request) => {
      const site = await findSite(db, principalOf(request).orgId, request.params.id);
      if (!site) throw notFound('Shield site');
      return siteResource(db, site, edge);
    },
  );

  app.post(
    '/api/v1/shield/sites',
    { config: { auth: 'shield:write' }, schema: { tags, summary: 'Create a Shield site', body: ShieldSiteSpec, response: { 201: ShieldSiteResource } } },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      const { domain, origin_url, mode, path_case = 'insensitive', managed_rules = MANAGED_RULES_DEFAULT, tls: givenTls, labels = {} } = request.body;
      checkManagedRules(managed_rules);
      const tls = mergeTls(defaultTls(edge.tlsPort), givenTls);
      checkTls(tls);
      await checkOrigin(origin_url, originPolicy);
      const site = await db.transaction().execute(async (trx) => {
        if (await domainTaken(trx, orgId, domain)) throw conflict(`a Shield site for ${domain} already exists`, { field: 'domain' });
        const created = await insertSite(trx, orgId, { domain, origin_url, mode, path_case, managed_rules: { ...MANAGED_RULES_DEFAULT, ...managed_rules }, tls, labels });
        await auditRequest(trx, request, { action: 'shield_site.created', target: { type: 'shield_site', id: created.id }, metadata: { domain, mode, tls_mode: tls.mode } });
        return created;
      });
      return reply.code(201).send(await siteResource(db, site, edge));
    },
  );

  app.patch(
    '/api/v1/shield/sites/:id',
    {
      config: { auth: 'shield:write' },
      schema: {
        tags,
        summary: 'Update a Shield site',
        description:
          'Changes `mode`, `origin_url`, `path_case`, `managed_rules`, `tls` or `labels`. The fields of `managed_rules` and `tls` (and of `tls.hsts`) that are given replace the stored ones and the others stay. ' +
          'Mode, managed-rule and TLS changes are audited.',
        params: siteIdParams,
        body: ShieldSiteUpdate,
        response: { 200: ShieldSiteResource },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const { id } = request.params;
      await checkOrigin(request.body.origin_url, originPolicy);
      const site = await db.transaction().execute(async (trx) => {
        const before = await findSite(trx, orgId, id);
        if (!before) throw notFound('Shield site');
        const { managed_rules, tls: givenTls, ...rest } = request.body;
        checkManagedRules(managed_rules);
        const tls = givenTls ? mergeTls(before.tls, givenTls) : undefined;
        if (tls) checkTls(tls);
        const changes = { ...rest, ...(managed_rules ? { managed_rules: { ...before.managed_rules, ...managed_rules } } : {}), ...(tls ? { tls } : {}) };
        const after = await updateSite(trx, orgId, id, changes);
        if (!after) throw notFound('Shield site');
        if (after.mode !== before.mode) {
          await auditRequest(trx, request, { action: 'shield_site.mode_changed', target: { type: 'shield_site', id }, metadata: { from: before.mode, to: after.mode } });
        }
        if (managed_rules && JSON.stringify(after.managed_rules) !== JSON.stringify(before.managed_rules)) {
          await auditRequest(trx, request, { action: 'shield_site.managed_rules_changed', target: { type: 'shield_site', id }, metadata: { from: before.managed_rules, to: after.managed_rules } });
        }
        if (tls && JSON.stringify(after.tls) !== JSON.stringify(before.tls)) {
          await auditRequest(trx, request, { action: 'shield_site.tls_changed', target: { type: 'shield_site', id }, metadata: { from: before.tls, to: after.tls } });
        }
        return after;
      });
      return siteResource(db, site, edge);
    },
  );

  app.delete(
    '/api/v1/shield/sites/:id',
    {
      config: { auth: 'shield:write' },
      schema: { tags, summary: 'Delete a Shield site', description: 'Deletes the site with all its rules, its schema and its certificate. Its domain is then free: another organisation’s site for it can serve it.', params: siteIdParams, response: { 204: { type: 'null', description: 'Deleted.' } } },
    },
    async (request, reply) => {
      const { id } = request.params;
      await db.transaction().execute(async (trx) => {
        const deleted = await deleteSite(trx, principalOf(request).orgId, id);
        if (!deleted) throw notFound('Shield site');
        await auditRequest(trx, request, { action: 'shield_site.deleted', target: { type: 'shield_site', id }, metadata: { domain: deleted.domain } });
      });
      return reply.code(204).send(null);
    },
  );
};
