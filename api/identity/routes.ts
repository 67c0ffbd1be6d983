// Who is calling: GET /api/v1/me and GET /api/v1/orgs/current. Any valid key may ask. Both answer
// from the authenticated principal, which carries its organisation: no query on the hot path.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { principalOf } from '../auth/plugin.ts';
import { SCOPES } from '../auth/scopes.ts';
import { timestampSchema } from '../http/schemas.ts';

const organizationSchema = {
  type: 'object',
  required: ['id', 'slug', 'name', 'plan', 'created_at'],
  properties: {
    id: { type: 'string' },
    slug: { type: 'string', description: 'Short unique name, e.g. `default`.' },
    name: { type: 'string' },
    plan: { type: 'string', description: 'Billing plan.' },
    created_at: timestampSchema,
  },
} as const;

const meSchema = {
  type: 'object',
  required: ['type', 'api_key', 'user', 'organization'],
  properties: {
    type: { type: 'string', enum: ['api_key'], description: 'How the caller authenticated.' },
    api_key: {
      type: 'object',
      required: ['id', 'name', 'scopes'],
      properties: { id: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'array', items: { type: 'string', enum: SCOPES } } },
    },
    user: {
      type: ['object', 'null'],
      description: 'The person behind the session; null for API keys.',
      required: ['id', 'email'],
      properties: { id: { type: 'string' }, email: { type: 'string' } },
    },
    organization: organizationSchema,
  },
} as const;

export const identityRoutes: FastifyPluginAsyncJsonSchemaToTs = async (app) => {
  const tags = ['Identity'];

  app.get(
    '/api/v1/me',
    { config: { auth: 'authenticated' }, schema: { tags, summary: 'The caller', response: { 200: meSchema } } },
    async (request) => {
      const principal = principalOf(request);
      return {
        type: 'api_key' as const,
        api_key: { id: principal.keyId, name: principal.keyName, scopes: [...principal.scopes] },
        user: null,
        organization: principal.organization,
      };
    },
  );

  app.get(
    '/api/v1/orgs/current',
    { config: { auth: 'authenticated' }, schema: { tags, summary: "The caller's organisation", response: { 200: organizationSchema } } },
    async (request) => principalOf(request).organization,
  );
};
