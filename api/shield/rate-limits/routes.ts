// /api/v1/shield/sites/:id/rate-limits: list, get, create, update, delete.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { RateLimitRuleResource, RateLimitRuleSpec, RateLimitRuleUpdate } from '../../../schemas/index.ts';
import { auditRequest } from '../../../platform/audit-log.ts';
import { principalOf } from '../../accounts/auth/plugin.ts';
import type { Db } from '../../../platform/db/database.ts';
import { notFound } from '../../../platform/http/errors.ts';
import { decodeCursor, pageLimit, toPage } from '../../../platform/http/pagination.ts';
import { listResponseSchema, pageQueryProperties } from '../../../platform/http/schemas.ts';
import { labelQueryProperty, parseLabelFilter } from '../../../platform/resources/labels.ts';
import { siteParams, siteRuleParams } from '../params.ts';
import { requireSite } from '../sites/store.ts';
import { deleteRateLimit, findRateLimit, insertRateLimit, listRateLimits, newRateLimitFrom, toRateLimit, updateRateLimit } from './store.ts';

export const rateLimitRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db } }> = async (app, { db }) => {
  const tags = ['Rate-limit rules'];
  const base = '/api/v1/shield/sites/:id/rate-limits';

  app.get(
    base,
    {
      config: { auth: 'shield:read' },
      schema: { tags, summary: 'List rate-limit rules of a site', params: siteParams, querystring: { type: 'object', properties: { ...pageQueryProperties, ...labelQueryProperty } }, response: { 200: listResponseSchema(RateLimitRuleResource) } },
    },
    async (request) => {
      const site = await requireSite(db, principalOf(request).orgId, request.params.id);
      const limit = pageLimit(request.query);
      const rows = await listRateLimits(db, { siteId: site.id, after: decodeCursor(request.query.cursor), limit, labels: parseLabelFilter(request.query.label) });
      return toPage(rows, limit, toRateLimit);
    },
  );

  app.get(
    `${base}/:rule_id`,
    { config: { auth: 'shield:read' }, schema: { tags, summary: 'Get a rate-limit rule', params: siteRuleParams, response: { 200: RateLimitRuleResource } } },
    async (request) => {
      const site = await requireSite(db, principalOf(request).orgId, request.params.id);
      const rule = await findRateLimit(db, site.id, request.params.rule_id);
      if (!rule) throw notFound('rate-limit rule');
      return toRateLimit(rule);
    },
  );

  app.post(
    base,
    { config: { auth: 'shield:write' }, schema: { tags, summary: 'Create a rate-limit rule', params: siteParams, body: RateLimitRuleSpec, response: { 201: RateLimitRuleResource } } },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      const rule = await db.transaction().execute(async (trx) => {
        const site = await requireSite(trx, orgId, request.params.id);
        const created = await insertRateLimit(trx, orgId, site.id, newRateLimitFrom(request.body));
        await auditRequest(trx, request, { action: 'rate_limit_rule.created', target: { type: 'rate_limit_rule', id: created.id }, metadata: { site_id: site.id } });
        return created;
      });
      return reply.code(201).send(toRateLimit(rule));
    },
  );

  app.patch(
    `${base}/:rule_id`,
    { config: { auth: 'shield:write' }, schema: { tags, summary: 'Update a rate-limit rule', params: siteRuleParams, body: RateLimitRuleUpdate, response: { 200: RateLimitRuleResource } } },
    async (request) => {
      const site = await requireSite(db, principalOf(request).orgId, request.params.id);
      const rule = await updateRateLimit(db, site.id, request.params.rule_id, request.body);
      if (!rule) throw notFound('rate-limit rule');
      return toRateLimit(rule);
    },
  );

  app.delete(
    `${base}/:rule_id`,
    { config: { auth: 'shield:write' }, schema: { tags, summary: 'Delete a rate-limit rule', params: siteRuleParams, response: { 204: { type: 'null', description: 'Deleted.' } } } },
    async (request, reply) => {
      const site = await requireSite(db, principalOf(request).orgId, request.params.id);
      if (!(await deleteRateLimit(db, site.id, request.params.rule_id))) throw notFound('rate-limit rule');
      return reply.code(204).send(null);
    },
  );
};
