// Liveness (/healthz: the process answers) and readiness (/readyz: the database answers).
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { isReachable, type Db } from '../../platform/db/database.ts';

const statusSchema = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string', enum: ['ok', 'unavailable'] }, database: { type: 'string', enum: ['ok', 'unreachable'] } },
} as const;

export const healthRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db } }> = async (app, { db }) => {
  const tags = ['Health'];
  app.get('/healthz', { config: { auth: 'public' }, schema: { tags, summary: 'Process is up', response: { 200: statusSchema } } }, async () => ({
    status: 'ok' as const,
  }));
  app.get(
    '/readyz',
    { config: { auth: 'public' }, schema: { tags, summary: 'Database is reachable', response: { 200: statusSchema, 503: statusSchema } } },
    async (_request, reply) =>
      (await isReachable(db))
        ? { status: 'ok' as const, database: 'ok' as const }
        : reply.code(503).send({ status: 'unavailable' as const, database: 'unreachable' as const }),
  );
};
