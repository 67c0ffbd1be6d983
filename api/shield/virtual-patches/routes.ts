// /api/v1/shield/sites/:id/virtual-patches: list, get, create, update (labels), delete.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { VirtualPatchResource, VirtualPatchSpec, VirtualPatchUpdate } from '../../../schemas/index.ts';
import { auditRequest } from '../../../platform/audit-log.ts';
import { principalOf } from '../../accounts/auth/plugin.ts';
import type { Db } from '../../../platform/db/database.ts';
import { notFound, validationFailed } from '../../../platform/http/errors.ts';
import { parseEnumList } from '../../../platform/http/filters.ts';
import { decodeCursor, pageLimit, toPage } from '../../../platform/http/pagination.ts';
import { filterParam, listResponseSchema, pageQueryProperties } from '../../../platform/http/schemas.ts';
import { labelQueryProperty, parseLabelFilter } from '../../../platform/resources/labels.ts';
import { sitePatchParams, siteParams } from '../params.ts';
import { compileUserRegex } from '../../../schemas/checks/regex.ts';
import { requireSite } from '../sites/store.ts';
import { deletePatch, findPatch, insertPatch, listPatches, newPatchFrom, toPatch, updatePatchLabels } from './store.ts';

const ACTIONS = VirtualPatchSpec.properties.action.enum;

export const virtualPatchRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db } }> = async (app, { db }) => {
  const tags = ['Virtual patches'];
  const base = '/api/v1/shield/sites/:id/virtual-patches';

  app.get(
    base,
    {
      config: { auth: 'shield:read' },
      schema: {
        tags,
        summary: 'List virtual patches of a site',
        params: siteParams,
        querystring: { type: 'object', properties: { ...pageQueryProperties, ...labelQueryProperty, action: filterParam('Filter by action.') } },
        response: { 200: listResponseSchema(VirtualPatchResource) },
      },
    },
    async (request) => {
      const site = await requireSite(db, principalOf(request).orgId, request.params.id);
      const limit = pageLimit(request.query);
      const rows = await listPatches(db, {
        siteId: site.id,
        after: decodeCursor(request.query.cursor),
        limit,
        labels: parseLabelFilter(request.query.label),
        actions: parseEnumList('action', request.query.action, ACTIONS),
      });
      return toPage(rows, limit, toPatch);
    },
  );

  app.get(
    `${base}/:patch_id`,
    { config: { auth: 'shield:read' }, schema: { tags, summary: 'Get a virtual patch', params: sitePatchParams, response: { 200: VirtualPatchResource } } },
    async (request) => {
      const site = await requireSite(db, principalOf(request).orgId, request.params.id);
      const patch = await findPatch(db, site.id, request.params.patch_id);
      if (!patch) throw notFound('virtual patch');
      return toPatch(patch);
    },
  );

  app.post(
    base,
    {
      config: { auth: 'shield:write' },
      schema: {
        tags,
        summary: 'Create a virtual patch',
        description: '`match_regex` must compile under RE2 (linear-time matching); otherwise 422 naming the field.',
        params: siteParams,
        body: VirtualPatchSpec,
        response: { 201: VirtualPatchResource },
      },
    },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      const body = request.body;
      const regex = compileUserRegex(body.match_regex);
      if (!regex.ok) throw validationFailed(`match_regex ${regex.reason}`, { fields: [{ field: 'match_regex', message: regex.reason }] });
      const patch = await db.transaction().execute(async (trx) => {
        const site = await requireSite(trx, orgId, request.params.id);
        const created = await insertPatch(trx, orgId, site.id, newPatchFrom(body));
        await auditRequest(trx, request, { action: 'virtual_patch.created', target: { type: 'virtual_patch', id: created.id }, metadata: { site_id: site.id, url_pattern: body.url_pattern, match_param: body.match_param } });
        return created;
      });
      return reply.code(201).send(toPatch(patch));
    },
  );

  app.patch(
    `${base}/:patch_id`,
    {
      config: { auth: 'shield:write' },
      schema: { tags, summary: 'Update a virtual patch', description: 'Only `labels` can change; a different match is a different patch.', params: sitePatchParams, body: VirtualPatchUpdate, response: { 200: VirtualPatchResource } },
    },
    async (request) => {
      const site = await requireSite(db, principalOf(request).orgId, request.params.id);
      const patch = await updatePatchLabels(db, site.id, request.params.patch_id, request.body.labels ?? {});
      if (!patch) throw notFound('virtual patch');
      return toPatch(patch);
    },
  );

  app.delete(
    `${base}/:patch_id`,
    { config: { auth: 'shield:write' }, schema: { tags, summary: 'Delete a virtual patch', params: sitePatchParams, response: { 204: { type: 'null', description: 'Deleted.' } } } },
    async (request, reply) => {
      const { patch_id } = request.params;
      await db.transaction().execute(async (trx) => {
        const site = await requireSite(trx, principalOf(request).orgId, request.params.id);
        if (!(await deletePatch(trx, site.id, patch_id))) throw notFound('virtual patch');
        await auditRequest(trx, request, { action: 'virtual_patch.deleted', target: { type: 'virtual_patch', id: patch_id }, metadata: { site_id: site.id } });
      });
      return reply.code(204).send(null);
    },
  );
};
