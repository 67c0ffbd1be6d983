// /api/v1/scan-schedules: list, get, create, update, delete (spec 4.7). Schedules are stored with
// their next run time; running them is the scheduler's job, not this module's.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { SCAN_TYPES, ScanScheduleResource, ScanScheduleSpec, ScanScheduleUpdate } from '../../schemas/index.ts';
import { auditRequest } from '../../platform/audit-log.ts';
import { principalOf } from '../accounts/auth/plugin.ts';
import type { Db } from '../../platform/db/database.ts';
import { notFound, validationFailed } from '../../platform/http/errors.ts';
import { parseEnumList } from '../../platform/http/filters.ts';
import { decodeCursor, pageLimit, toPage } from '../../platform/http/pagination.ts';
import { filterParam, listResponseSchema, pageQueryProperties } from '../../platform/http/schemas.ts';
import { labelQueryProperty, parseLabelFilter } from '../../platform/resources/labels.ts';
import { deleteSchedule, findSchedule, insertSchedule, listSchedules, toSchedule, updateSchedule, type ScheduleFields } from './store.ts';
import { nextRunAt, scheduleIssues, type FieldIssue, type ScanType } from '../../schemas/checks/schedule.ts';

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;

/** Same envelope and message shape as a schema failure, so clients handle both alike. */
function rejectFields(issues: FieldIssue[]): void {
  if (issues.length === 0) return;
  throw validationFailed(`request body is invalid: ${issues.map((i) => `${i.field} ${i.message}`).join('; ')}`, { fields: issues });
}

const nextRun = (fields: Pick<ScheduleFields, 'cron' | 'timezone' | 'enabled'>): Date | null => (fields.enabled ? nextRunAt(fields) : null);

export const scheduleRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db } }> = async (app, { db }) => {
  const tags = ['Scan schedules'];

  app.get(
    '/api/v1/scan-schedules',
    {
      config: { auth: 'scans:read' },
      schema: {
        tags,
        summary: 'List scan schedules',
        querystring: {
          type: 'object',
          properties: {
            ...pageQueryProperties,
            ...labelQueryProperty,
            scan_type: filterParam('Filter by scan type.'),
            enabled: { type: 'boolean', description: 'Only enabled (`true`) or only disabled (`false`) schedules.' },
          },
        },
        response: { 200: listResponseSchema(ScanScheduleResource) },
      },
    },
    async (request) => {
      const limit = pageLimit(request.query);
      const rows = await listSchedules(db, {
        orgId: principalOf(request).orgId,
        after: decodeCursor(request.query.cursor),
        limit,
        labels: parseLabelFilter(request.query.label),
        scanTypes: parseEnumList('scan_type', request.query.scan_type, SCAN_TYPES),
        enabled: request.query.enabled,
      });
      return toPage(rows, limit, toSchedule);
    },
  );

  app.get(
    '/api/v1/scan-schedules/:id',
    { config: { auth: 'scans:read' }, schema: { tags, summary: 'Get a scan schedule', params: idParams, response: { 200: ScanScheduleResource } } },
    async (request) => {
      const schedule = await findSchedule(db, principalOf(request).orgId, request.params.id);
      if (!schedule) throw notFound('scan schedule');
      return toSchedule(schedule);
    },
  );

  app.post(
    '/api/v1/scan-schedules',
    {
      config: { auth: 'scans:write' },
      schema: {
        tags,
        summary: 'Create a scan schedule',
        description: '`cron` is a 5-field expression read in `timezone`; `next_run_at` is computed from them (null while disabled).',
        body: ScanScheduleSpec,
        response: { 201: ScanScheduleResource },
      },
    },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      const { name, scan_type, target, cron, timezone = 'UTC', enabled = true, config = {}, labels = {} } = request.body;
      rejectFields(scheduleIssues({ scan_type, target, cron, timezone }));
      const fields: ScheduleFields = { name, scan_type, target, cron, timezone, enabled, config, labels, next_run_at: nextRun({ cron, timezone, enabled }) };
      const schedule = await db.transaction().execute(async (trx) => {
        const created = await insertSchedule(trx, orgId, fields);
        // No target in the trail: git URLs can carry access tokens.
        await auditRequest(trx, request, { action: 'scan_schedule.created', target: { type: 'scan_schedule', id: created.id }, metadata: { name, scan_type, enabled } });
        return created;
      });
      return reply.code(201).send(toSchedule(schedule));
    },
  );

  app.patch(
    '/api/v1/scan-schedules/:id',
    {
      config: { auth: 'scans:write' },
      schema: {
        tags,
        summary: 'Update a scan schedule',
        description: 'Changes the fields given and leaves the others. Changing `cron`, `timezone` or `enabled` recomputes `next_run_at`.',
        params: idParams,
        body: ScanScheduleUpdate,
        response: { 200: ScanScheduleResource },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const { id } = request.params;
      const body = request.body;
      const schedule = await db.transaction().execute(async (trx) => {
        const before = await findSchedule(trx, orgId, id, { forUpdate: true });
        if (!before) throw notFound('scan schedule');
        const merged = {
          scan_type: body.scan_type ?? (before.scan_type as ScanType),
          target: body.target ?? before.target,
          cron: body.cron ?? before.cron,
          timezone: body.timezone ?? before.timezone,
          enabled: body.enabled ?? before.enabled,
        };
        const timing = body.cron !== undefined || body.timezone !== undefined || body.enabled !== undefined;
        rejectFields(scheduleIssues(merged, { timing: body.cron !== undefined || body.timezone !== undefined, target: body.target !== undefined || body.scan_type !== undefined }));
        const changes: Partial<ScheduleFields> = { ...body, ...(timing ? { next_run_at: nextRun(merged) } : {}) };
        const after = await updateSchedule(trx, orgId, id, changes);
        if (!after) throw notFound('scan schedule');
        await auditRequest(trx, request, { action: 'scan_schedule.updated', target: { type: 'scan_schedule', id }, metadata: { fields: Object.keys(body).sort() } });
        return after;
      });
      return toSchedule(schedule);
    },
  );

  app.delete(
    '/api/v1/scan-schedules/:id',
    {
      config: { auth: 'scans:write' },
      schema: { tags, summary: 'Delete a scan schedule', params: idParams, response: { 204: { type: 'null', description: 'Deleted.' } } },
    },
    async (request, reply) => {
      const { id } = request.params;
      await db.transaction().execute(async (trx) => {
        const deleted = await deleteSchedule(trx, principalOf(request).orgId, id);
        if (!deleted) throw notFound('scan schedule');
        await auditRequest(trx, request, { action: 'scan_schedule.deleted', target: { type: 'scan_schedule', id }, metadata: { name: deleted.name } });
      });
      return reply.code(204).send(null);
    },
  );
};
