// GET /api/v1/audit-log: paginated JSON, or the whole filtered log (up to CSV_MAX_ROWS) as CSV with
// Accept: text/csv or ?format=csv (the form a plain download link can ask for).
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import type { Db } from '../../platform/db/database.ts';
import type { AuditEventRow } from '../../platform/db/schema.ts';
import { principalOf } from '../accounts/auth/plugin.ts';
import { parseList } from '../../platform/http/filters.ts';
import { badRequest } from '../../platform/http/errors.ts';
import { decodeCursor, pageLimit, toPage } from '../../platform/http/pagination.ts';
import { filterParam, listResponseSchema, pageQueryProperties, timestampSchema } from '../../platform/http/schemas.ts';
import { listAudit, type AuditQuery } from '../../platform/audit-log.ts';
import { csvRow } from './csv.ts';
import { livemodeSchema } from '../../schemas/common.ts';
import { livemodeOf } from '../../platform/db/environments.ts';

const auditEventSchema = {
  type: 'object',
  required: ['livemode', 'id', 'actor', 'action', 'target', 'ip', 'metadata', 'created_at'],
  properties: {
    livemode: livemodeSchema,
    id: { type: 'string' },
    actor: {
      type: 'object',
      required: ['type', 'id'],
      properties: { type: { type: 'string', enum: ['api_key', 'user', 'system'] }, id: { type: 'string' } },
      description: 'Who acted.',
    },
    action: { type: 'string', description: 'What happened, e.g. `api_key.created`.' },
    target: {
      type: ['object', 'null'],
      required: ['type', 'id'],
      properties: { type: { type: 'string' }, id: { type: 'string' } },
      description: 'The object acted on.',
    },
    ip: { type: ['string', 'null'], description: 'Client IP of the request.' },
    metadata: { type: 'object', additionalProperties: true, description: 'Action-specific facts.' },
    created_at: timestampSchema,
  },
} as const;

const CSV_COLUMNS = ['id', 'created_at', 'actor_type', 'actor_id', 'action', 'target_type', 'target_id', 'ip', 'metadata'] as const;
const CSV_PAGE = 1000;
/** An export stops here (a last row says so): a sane bound for one download; narrow the filters for more. */
export const CSV_MAX_ROWS = 100_000;

function toAuditEvent(row: AuditEventRow) {
  return {
    id: row.id,
    livemode: livemodeOf(row.org_id),
    actor: { type: row.actor_type as 'api_key' | 'user' | 'system', id: row.actor_id },
    action: row.action,
    target: row.target_type && row.target_id ? { type: row.target_type, id: row.target_id } : null,
    ip: row.ip,
    metadata: row.metadata,
    created_at: row.created_at.toISOString(),
  };
}

async function* csvExport(db: Db, query: Omit<AuditQuery, 'limit'>, maxRows: number): AsyncGenerator<string> {
  yield csvRow(CSV_COLUMNS);
  let after = query.after;
  let written = 0;
  for (;;) {
    const rows = await listAudit(db, { ...query, after, limit: CSV_PAGE });
    for (const row of rows.slice(0, CSV_PAGE)) {
      if (written === maxRows) {
        // Truncation is said in the file itself, so a spreadsheet user sees it.
        yield csvRow(['', '', '', '', 'export.truncated', '', '', '', JSON.stringify({ max_rows: maxRows, next_cursor_id: row.id })]);
        return;
      }
      yield csvRow([row.id, row.created_at.toISOString(), row.actor_type, row.actor_id, row.action, row.target_type, row.target_id, row.ip, JSON.stringify(row.metadata)]);
      written += 1;
    }
    if (rows.length <= CSV_PAGE) return;
    after = rows[CSV_PAGE - 1]?.id ?? null;
  }
}

function parseTime(name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const time = new Date(value);
  if (Number.isNaN(time.getTime())) throw badRequest(`${name} must be an ISO 8601 date-time`, { field: name });
  return time;
}

const wantsCsv = (accept: string | undefined) => accept !== undefined && /(^|,)\s*text\/csv\b/i.test(accept);

export const auditRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db; csvMaxRows?: number } }> = async (app, { db, csvMaxRows = CSV_MAX_ROWS }) => {
  app.get(
    '/api/v1/audit-log',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['Audit log'],
        summary: 'List audit events',
        description: `Newest first. With \`Accept: text/csv\` or \`format=csv\`, the whole filtered log is streamed as CSV, up to ${CSV_MAX_ROWS.toLocaleString('en')} rows (a last row with action \`export.truncated\` says when it stopped; pagination parameters other than \`cursor\` are ignored). Cells starting with =, +, -, @, tab or CR are prefixed with \`'\` so spreadsheets do not run them as formulas.`,
        querystring: {
          type: 'object',
          properties: {
            ...pageQueryProperties,
            actor: filterParam('Filter by actor id (an API key id, a user id or `system`).'),
            action: filterParam('Filter by action, e.g. `api_key.created`.'),
            target: filterParam('Filter by target id (an API key id, a user id, an invite id, …).'),
            since: { type: 'string', format: 'date-time', description: 'Only events at or after this time.' },
            until: { type: 'string', format: 'date-time', description: 'Only events before this time (exclusive).' },
            format: { type: 'string', enum: ['json', 'csv'], description: '`csv` answers CSV as `Accept: text/csv` does (for download links, which cannot set headers).' },
          },
        },
        response: {
          200: {
            description: 'A page of audit events, or CSV.',
            content: {
              'application/json': { schema: listResponseSchema(auditEventSchema) },
              'text/csv': { schema: { type: 'string', description: `Columns: ${CSV_COLUMNS.join(', ')}` } },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const query = {
        orgId: principal.orgId,
        after: decodeCursor(request.query.cursor),
        actors: parseList('actor', request.query.actor),
        actions: parseList('action', request.query.action),
        targets: parseList('target', request.query.target),
        since: parseTime('since', request.query.since),
        until: parseTime('until', request.query.until),
      };
      if (request.query.format === 'csv' || (request.query.format === undefined && wantsCsv(request.headers.accept))) {
        // The typed reply only knows the JSON body; the CSV leaves as a stream.
        const raw: FastifyReply = reply;
        return raw
          .type('text/csv; charset=utf-8')
          .header('Content-Disposition', 'attachment; filename="audit-log.csv"')
          .send(Readable.from(csvExport(db, query, csvMaxRows)));
      }
      const limit = pageLimit(request.query);
      return toPage(await listAudit(db, { ...query, limit }), limit, toAuditEvent);
    },
  );
};
