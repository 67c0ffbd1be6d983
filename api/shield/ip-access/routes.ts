// /api/v1/shield/sites/:id/ip-access: list, get, create, update (action, note, expires_at, labels),
// delete, and the all-or-nothing CSV import.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { IP_RULE_ACTIONS, IP_RULE_TYPES, IpAccessRuleResource, IpAccessRuleSpec, IpAccessRuleUpdate } from '../../../schemas/index.ts';
import { auditRequest } from '../../../platform/audit-log.ts';
import { principalOf } from '../../accounts/auth/plugin.ts';
import { transactionWithCopy } from '../../../platform/db/copy.ts';
import type { Db } from '../../../platform/db/database.ts';
import { ApiError, conflict, notFound, validationFailed } from '../../../platform/http/errors.ts';
import { parseEnumList } from '../../../platform/http/filters.ts';
import { decodeCursor, pageLimit, toPage } from '../../../platform/http/pagination.ts';
import { filterParam, listResponseSchema, pageQueryProperties } from '../../../platform/http/schemas.ts';
import { labelQueryProperty, parseLabelFilter } from '../../../platform/resources/labels.ts';
import { siteParams, siteRuleParams } from '../params.ts';
import { requireSite } from '../sites/store.ts';
import { MAX_IMPORT_BYTES, MAX_IMPORT_ROWS, parseIpRulesCsv, separateConflicts, type RowProblem } from './csv-import.ts';
import { checkIpRule, checkIpRuleExpiry } from '../../../schemas/checks/ip-rule.ts';
import { deleteIpRule, existingRuleKeys, findIpRule, insertIpRule, insertIpRulesBulk, listIpRules, ruleKey, toIpRule, updateIpRule } from './store.ts';

const importResultSchema = {
  type: 'object',
  required: ['created', 'skipped', 'skipped_rows'],
  properties: {
    created: { type: 'integer', description: 'Rules created.' },
    skipped: { type: 'integer', description: 'Rows skipped as duplicates (only with `on_conflict=skip`).' },
    skipped_rows: {
      type: 'array',
      items: { type: 'object', required: ['line', 'reason'], properties: { line: { type: 'integer' }, reason: { type: 'string' } } },
    },
  },
} as const;

export const ipAccessRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db } }> = async (app, { db }) => {
  const tags = ['IP access rules'];
  const base = '/api/v1/shield/sites/:id/ip-access';

  app.addContentTypeParser('text/csv', { parseAs: 'string', bodyLimit: MAX_IMPORT_BYTES }, (_request, body, done) => done(null, body));

  app.get(
    base,
    {
      config: { auth: 'shield:read' },
      schema: {
        tags,
        summary: 'List IP access rules of a site',
        params: siteParams,
        querystring: {
          type: 'object',
          properties: { ...pageQueryProperties, ...labelQueryProperty, type: filterParam('Filter by type.'), action: filterParam('Filter by action.') },
        },
        response: { 200: listResponseSchema(IpAccessRuleResource) },
      },
    },
    async (request) => {
      const site = await requireSite(db, principalOf(request).orgId, request.params.id);
      const limit = pageLimit(request.query);
      const rows = await listIpRules(db, {
        siteId: site.id,
        after: decodeCursor(request.query.cursor),
        limit,
        labels: parseLabelFilter(request.query.label),
        types: parseEnumList('type', request.query.type, IP_RULE_TYPES),
        actions: parseEnumList('action', request.query.action, IP_RULE_ACTIONS),
      });
      return toPage(rows, limit, toIpRule);
    },
  );

  app.get(
    `${base}/:rule_id`,
    { config: { auth: 'shield:read' }, schema: { tags, summary: 'Get an IP access rule', params: siteRuleParams, response: { 200: IpAccessRuleResource } } },
    async (request) => {
      const site = await requireSite(db, principalOf(request).orgId, request.params.id);
      const rule = await findIpRule(db, site.id, request.params.rule_id);
      if (!rule) throw notFound('IP access rule');
      return toIpRule(rule);
    },
  );

  app.post(
    base,
    {
      config: { auth: 'shield:write' },
      schema: { tags, summary: 'Create an IP access rule', params: siteParams, body: IpAccessRuleSpec, response: { 201: IpAccessRuleResource } },
    },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      const body = request.body;
      const checked = checkIpRule(body);
      if (!checked.ok) throw validationFailed(`request body is invalid: ${checked.problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, { fields: checked.problems });
      const rule = await db.transaction().execute(async (trx) => {
        const site = await requireSite(trx, orgId, request.params.id);
        const taken = await existingRuleKeys(trx, site.id, [{ type: body.type, valueKey: checked.valueKey }]);
        if (taken.has(ruleKey(body.type, checked.valueKey))) throw conflict(`the site already has an IP access rule for ${body.type} ${body.value}`, { field: 'value' });
        const created = await insertIpRule(trx, orgId, site.id, {
          type: body.type,
          value: body.value,
          valueKey: checked.valueKey,
          action: body.action,
          note: body.note ?? '',
          expiresAt: checked.expiresAt,
          labels: body.labels ?? {},
        });
        await auditRequest(trx, request, { action: 'ip_access_rule.created', target: { type: 'ip_access_rule', id: created.id }, metadata: { site_id: site.id, type: body.type, value: body.value, rule_action: body.action } });
        return created;
      });
      return reply.code(201).send(toIpRule(rule));
    },
  );

  app.patch(
    `${base}/:rule_id`,
    {
      config: { auth: 'shield:write' },
      schema: { tags, summary: 'Update an IP access rule', description: 'Changes `action`, `note`, `expires_at` or `labels`; `type` and `value` cannot change.', params: siteRuleParams, body: IpAccessRuleUpdate, response: { 200: IpAccessRuleResource } },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const { action, note, expires_at, labels } = request.body;
      const expiry = checkIpRuleExpiry(expires_at);
      if (!expiry.ok) throw validationFailed('expires_at must be in the future', { fields: expiry.problems });
      const { expiresAt } = expiry;
      const site = await requireSite(db, orgId, request.params.id);
      const rule = await updateIpRule(db, site.id, request.params.rule_id, { action, note, expiresAt, labels });
      if (!rule) throw notFound('IP access rule');
      return toIpRule(rule);
    },
  );

  app.delete(
    `${base}/:rule_id`,
    { config: { auth: 'shield:write' }, schema: { tags, summary: 'Delete an IP access rule', params: siteRuleParams, response: { 204: { type: 'null', description: 'Deleted.' } } } },
    async (request, reply) => {
      const site = await requireSite(db, principalOf(request).orgId, request.params.id);
      if (!(await deleteIpRule(db, site.id, request.params.rule_id))) throw notFound('IP access rule');
      return reply.code(204).send(null);
    },
  );

  app.post(
    `${base}/import`,
    {
      config: { auth: 'shield:write' },
      bodyLimit: MAX_IMPORT_BYTES,
      schema: {
        tags,
        summary: 'Import IP access rules from CSV',
        description:
          'Content-Type `text/csv`; header `type,value,action,note` plus optional `expires_at`. All or nothing: any bad row rejects the file ' +
          `with 422 and \`details.rows\` (line, column, reason for every bad row). Duplicates (within the file or of existing rules) are errors too, ` +
          `unless \`on_conflict=skip\`. At most 10 MiB and ${MAX_IMPORT_ROWS} rows (413 beyond).`,
        params: siteParams,
        querystring: { type: 'object', properties: { on_conflict: { type: 'string', enum: ['error', 'skip'], default: 'error', description: 'What to do with duplicate rows.' } } },
        consumes: ['text/csv'],
        body: { type: 'string', description: 'The CSV file.' },
        response: { 201: importResultSchema },
      },
    },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      const parsed = parseIpRulesCsv(request.body);
      if (!parsed.ok) {
        if ('tooManyRows' in parsed) throw new ApiError(413, 'payload_too_large', `the file has more than ${MAX_IMPORT_ROWS} rows`, { max_rows: MAX_IMPORT_ROWS });
        throw validationFailed(`${parsed.problems.length} problem(s) in the file; nothing was imported`, { rows: parsed.problems });
      }
      const skip = request.query.on_conflict === 'skip';
      // Optimistic: the rows go in as they are, and the unique index refuses repeats within the file
      // as well as rules the site already has. Only then are the conflicts worked out (here, not
      // for every import): a key the site had before is one whose first line in the file clashed.
      const result = await transactionWithCopy(db, async (trx, copyIn) => {
        const site = await requireSite(trx, orgId, request.params.id);
        const { created, clashing } = await insertIpRulesBulk(trx, copyIn, orgId, site.id, parsed.rows.map((r) => ({ ref: r.index, rule: r.rule })));
        let conflicts: RowProblem[] = [];
        if (clashing.length > 0) {
          const clashed = new Set(clashing);
          const { accepted } = separateConflicts(parsed.rows, new Set(), parsed.lineOf);
          const existing = new Set(accepted.filter((r) => clashed.has(r.index)).map((r) => ruleKey(r.rule.type, r.rule.valueKey)));
          conflicts = separateConflicts(parsed.rows, existing, parsed.lineOf).conflicts;
        }
        // Thrown, so the transaction rolls back what went in.
        if (conflicts.length > 0 && !skip) throw validationFailed(`${conflicts.length} duplicate row(s); nothing was imported (on_conflict=skip skips them)`, { rows: conflicts });
        await auditRequest(trx, request, { action: 'ip_access_rule.imported', target: { type: 'shield_site', id: site.id }, metadata: { created, skipped: conflicts.length } });
        return { created, skipped: conflicts.length, skipped_rows: conflicts.map(({ line, reason }) => ({ line, reason })) };
      });
      return reply.code(201).send(result);
    },
  );
};
