// /api/v1/shield/sites: list, get, create, update (mode, origin_url, labels), delete.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { ShieldSiteResource, ShieldSiteSpec, ShieldSiteUpdate } from '../../../schemas/index.ts';
import { auditRequest } from '../../audit/audit-log.ts';
import { principalOf } from '../../auth/plugin.ts';
import type { Db } from '../../db/database.ts';
import { conflict, notFound } from '../../http/errors.ts';
import { parseEnumList, parseList } from '../../http/filters.ts';
import { decodeCursor, pageLimit, toPage } from '../../http/pagination.ts';
import { filterParam, listResponseSchema, pageQueryProperties } from '../../http/schemas.ts';
import { labelQueryProperty, parseLabelFilter } from '../../resources/labels.ts';
import { deleteSite, domainTaken, findSite, insertSite, listSites, toSite, updateSite } from './store.ts';

import { siteParams as siteIdParams } from '../params.ts';
const MODES = ShieldSiteSpec.properties.mode.enum;

export const siteRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db } }> = async (app, { db }) => {
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
      return toPage(rows, limit, toSite);
    },
  );

  app.get(
    '/api/v1/shield/sites/:id',
    { config: { auth: 'shield:read' }, schema: { tags, summary: 'Get a Shield site', params: siteIdParams, response: { 200: ShieldSiteResource } } },
    async (request) => {
      const site = await findSite(db, principalOf(request).orgId, request.params.id);
      if (!site) throw notFound('Shield site');
      return toSite(site);
    },
  );

  app.post(
    '/api/v1/shield/sites',
    { config: { auth: 'shield:write' }, schema: { tags, summary: 'Create a Shield site', body: ShieldSiteSpec, response: { 201: ShieldSiteResource } } },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      const { domain, origin_url, mode, labels = {} } = request.body;
      const site = await db.transaction().execute(async (trx) => {
        if (await domainTaken(trx, orgId, domain)) throw conflict(`a Shield site for ${domain} already exists`, { field: 'domain' });
        const created = await insertSite(trx, orgId, { domain, origin_url, mode, labels });
        await auditRequest(trx, request, { action: 'shield_site.created', target: { type: 'shield_site', id: created.id }, metadata: { domain, mode } });
        return created;
      });
      return reply.code(201).send(toSite(site));
    },
  );

  app.patch(
    '/api/v1/shield/sites/:id',
    {
      config: { auth: 'shield:write' },
      schema: { tags, summary: 'Update a Shield site', description: 'Changes `mode`, `origin_url` or `labels`. Mode changes are audited.', params: siteIdParams, body: ShieldSiteUpdate, response: { 200: ShieldSiteResource } },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const { id } = request.params;
      const site = await db.transaction().execute(async (trx) => {
        const before = await findSite(trx, orgId, id);
        if (!before) throw notFound('Shield site');
        const after = await updateSite(trx, orgId, id, request.body);
        if (!after) throw notFound('Shield site');
        if (after.mode !== before.mode) {
          await auditRequest(trx, request, { action: 'shield_site.mode_changed', target: { type: 'shield_site', id }, metadata: { from: before.mode, to: after.mode } });
        }
        return after;
      });
      return toSite(site);
    },
  );

  app.delete(
    '/api/v1/shield/sites/:id',
    {
      config: { auth: 'shield:write' },
      schema: { tags, summary: 'Delete a Shield site', description: 'Deletes the site with all its rules and its schema.', params: siteIdParams, response: { 204: { type: 'null', description: 'Deleted.' } } },
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
