// GET /api/v1/integrations/:id/pull-requests: the pull-request checks of a source-control
// connection, one per pull request (its latest head), newest first. Readable with `scans:read`:
// it says what the scans of pull requests found, nothing about the connection's credentials.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { principalOf } from '../../accounts/auth/plugin.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { PullRequestCheckRow } from '../../../platform/db/schema.ts';
import { notFound } from '../../../platform/http/errors.ts';
import { decodeCursor, pageLimit, toPage } from '../../../platform/http/pagination.ts';
import { listResponseSchema, pageQueryProperties, timestampSchema } from '../../../platform/http/schemas.ts';
import { livemodeOf } from '../../../platform/db/environments.ts';
import { iso } from '../../../platform/resources/timestamps.ts';

export interface PullRequestRoutesOptions {
  db: Db;
}

export const PullRequestCheckResource = {
  type: 'object',
  required: ['id', 'object', 'livemode', 'integration_id', 'provider', 'repository', 'number', 'head_sha', 'base_sha', 'status', 'conclusion', 'check_id', 'comment_id', 'summary', 'error', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['pull_request_check'] },
    livemode: { type: 'boolean' },
    integration_id: { type: 'string' },
    provider: { type: 'string' },
    repository: { type: 'string', description: '`owner/name` (GitHub) or the project path (GitLab).' },
    number: { type: 'integer', description: 'The pull request (GitHub) or merge request IID (GitLab).' },
    head_sha: { type: 'string', description: 'The head commit last checked (or being checked).' },
    base_sha: { type: ['string', 'null'] },
    status: { type: 'string', enum: ['queued', 'scanning', 'completed', 'failed'] },
    conclusion: { type: ['string', 'null'], enum: ['success', 'failure', 'neutral', null], description: '`failure` when a new finding reaches the connection’s `fail_on` severity.' },
    check_id: { type: ['string', 'null'], description: 'The provider’s check run on the head (GitHub through an OAuth connection), or its commit status (`status:Aegis`: GitHub with a pasted token, which cannot create check runs; GitLab).' },
    comment_id: { type: ['string', 'null'], description: 'The summary comment, edited on every push.' },
    summary: {
      type: 'object',
      additionalProperties: true,
      description: 'Once completed: `new` (head findings not in the base), `fixed` (base findings no longer in the head), `unchanged`, `new_by_severity`, and `timings` in ms.',
    },
    error: { type: ['string', 'null'] },
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
} as const;

export function toPullRequestCheck(row: PullRequestCheckRow) {
  return {
    id: row.id,
    object: 'pull_request_check' as const,
    livemode: livemodeOf(row.org_id),
    integration_id: row.integration_id,
    provider: row.provider,
    repository: row.repository,
    number: row.number,
    head_sha: row.head_sha,
    base_sha: row.base_sha,
    status: row.status,
    conclusion: row.conclusion as 'success' | 'failure' | 'neutral' | null,
    check_id: row.check_id,
    comment_id: row.comment_id,
    summary: row.summary,
    error: row.error,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export const pullRequestRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: PullRequestRoutesOptions }> = async (app, { db }) => {
  app.get(
    '/api/v1/integrations/:id/pull-requests',
    {
      config: { auth: 'scans:read' },
      schema: {
        tags: ['Integrations'],
        summary: 'List pull-request checks',
        description: 'The pull requests (merge requests) Aegis checked through this connection, newest first: the head last checked, the check’s status and conclusion, and what the scans found.',
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 64 } } },
        querystring: { type: 'object', properties: { ...pageQueryProperties, repository: { type: 'string', maxLength: 512, description: 'Only this repository (`owner/name`, or the GitLab project path).' } } },
        response: { 200: listResponseSchema(PullRequestCheckResource) },
      },
    },
    async (request) => {
      const orgId = principalOf(request).orgId;
      const integration = await db.selectFrom('integrations').select('id').where('org_id', '=', orgId).where('id', '=', request.params.id).executeTakeFirst();
      if (!integration) throw notFound('integration');
      const limit = pageLimit(request.query);
      const after = decodeCursor(request.query.cursor);
      let query = db.selectFrom('pull_request_checks').selectAll().where('org_id', '=', orgId).where('integration_id', '=', integration.id);
      if (after) query = query.where('id', '<', after);
      if (request.query.repository) query = query.where('repository', '=', request.query.repository);
      const rows = await query.orderBy('id', 'desc').limit(limit + 1).execute();
      return toPage(rows, limit, toPullRequestCheck);
    },
  );
};
