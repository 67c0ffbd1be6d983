// POST/GET /api/v1/vulnerabilities/:id/ticket: a ticket in a connected tracker (Jira, Linear,
// GitHub Issues) made from a finding. One per finding: the row is written with the job that
// creates the ticket, in one transaction, and its primary key refuses a second (409 with the
// link). A `failed` one may be requested again; the same row is reused.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { auditRequest } from '../../../platform/audit-log.ts';
import { principalOf } from '../../accounts/auth/plugin.ts';
import type { VulnerabilityTicketRow } from '../../../platform/db/schema.ts';
import { conflict, notFound, validationFailed } from '../../../platform/http/errors.ts';
import { announceEnqueued } from '../../../platform/jobs/signals.ts';
import { findVulnerability } from '../../findings/store.ts';
import type { ProviderName } from '../providers/types.ts';
import type { IntegrationDeps } from '../connections/sessions.ts';
import { findIntegration } from '../connections/store.ts';
import { enqueueTicketCreate } from './queue.ts';
import { TicketRequestBody, TicketResource } from './schemas.ts';
import { findTicket, insertTicket, retryFailedTicket, toTicket, type NewTicket } from './store.ts';

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;

const isUniqueViolation = (err: unknown): boolean => typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';

/** The 409 for a finding that has a ticket already, carrying its link. */
function alreadyTicketed(row: VulnerabilityTicketRow) {
  const where = row.url ? `: ${row.url}` : row.state === 'creating' ? ' (being created)' : '';
  return conflict(`this finding already has a ticket${where}`, { ticket: toTicket(row) });
}

export const ticketRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: IntegrationDeps & { publicUrl: () => string } }> = async (app, { db, connectors }) => {
  const tags = ['Vulnerabilities'];

  app.post(
    '/api/v1/vulnerabilities/:id/ticket',
    {
      config: { auth: 'vulnerabilities:write' },
      schema: {
        tags,
        summary: 'Create a ticket from a finding',
        description:
          'Creates an issue for the finding in a connected tracker — a Jira project, a GitHub repository’s issues or a Linear team — as a job: follow `state` (`creating → open`, or `failed` with `error`). ' +
          'The ticket links back to the finding; closing it at the tracker resolves the finding, and resolving the finding in Aegis closes it with a comment. ' +
          'One ticket per finding: a second request is a 409 carrying the existing ticket (a `failed` one may be requested again).',
        params: idParams,
        body: TicketRequestBody,
        response: { 202: TicketResource },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { orgId } = principal;
      const body = request.body;
      const finding = await findVulnerability(db, orgId, request.params.id);
      if (!finding) throw notFound('vulnerability');
      const integration = await findIntegration(db, orgId, body.connection);
      if (!integration) throw validationFailed(`connection ${body.connection} does not exist in this organisation`, { fields: [{ field: 'connection', message: 'not found' }] });
      if (integration.status !== 'active') {
        throw validationFailed(`connection ${integration.id} is ${integration.status}${integration.error ? ` (${integration.error})` : ''}; connect it again first`, { fields: [{ field: 'connection', message: `is ${integration.status}` }] });
      }
      if (!connectors[integration.provider as ProviderName]?.tickets) {
        throw validationFailed(`${integration.provider} connections cannot create tickets; use a Jira, Linear or GitHub connection`, { fields: [{ field: 'connection', message: 'has no ticket tracker' }] });
      }
      const ticket: NewTicket = {
        orgId,
        vulnerabilityId: finding.id,
        integrationId: integration.id,
        provider: integration.provider,
        request: { connection: integration.id, project: body.project, ...(body.assignee ? { assignee: body.assignee } : {}), ...(body.labels ? { labels: body.labels } : {}) },
        createdBy: principal.actor.id,
      };
      let row: VulnerabilityTicketRow;
      try {
        row = await db.transaction().execute(async (trx) => {
          const existing = await findTicket(trx, orgId, finding.id, { forUpdate: true });
          if (existing && existing.state !== 'failed') throw alreadyTicketed(existing);
          const written = existing ? await retryFailedTicket(trx, ticket) : await insertTicket(trx, ticket);
          const jobId = await enqueueTicketCreate(trx, orgId, finding.id);
          await auditRequest(trx, request, {
            action: 'vulnerability.ticket_requested',
            target: { type: 'vulnerability', id: finding.id },
            metadata: { connection: integration.id, provider: integration.provider, project: body.project, job_id: jobId, ...(existing ? { retry: true } : {}) },
          });
          return written;
        });
      } catch (err) {
        // A concurrent request inserted first: its row is the ticket.
        if (!isUniqueViolation(err)) throw err;
        const winner = await findTicket(db, orgId, finding.id);
        if (!winner) throw err;
        throw alreadyTicketed(winner);
      }
      announceEnqueued(db);
      return reply.code(202).send(toTicket(row));
    },
  );

  app.get(
    '/api/v1/vulnerabilities/:id/ticket',
    { config: { auth: 'vulnerabilities:read' }, schema: { tags, summary: 'Get the ticket of a finding', params: idParams, response: { 200: TicketResource } } },
    async (request) => {
      const row = await findTicket(db, principalOf(request).orgId, request.params.id);
      if (!row) throw notFound('ticket');
      return toTicket(row);
    },
  );
};
