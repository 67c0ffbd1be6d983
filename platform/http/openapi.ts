// The OpenAPI 3.1 document, built from the schemas every route declares, served at
// /api/v1/openapi.json, with a browsable reference at /docs. Routes declare their success
// responses; the security requirement and the error responses are added here from `config.auth`,
// so the two cannot drift apart. What the document says beyond the routes — the webhook section,
// the operations' names — the API gives as options (this plugin knows no feature).
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyPluginAsync, RouteOptions } from 'fastify';
import { errorEnvelopeSchema } from './schemas.ts';

type Responses = Record<string, unknown>;

const errorResponse = (description: string) => ({ ...errorEnvelopeSchema, description });

function withErrorResponses(responses: Responses, route: RouteOptions): Responses {
  const auth = route.config?.auth ?? 'public';
  const result: Responses = { ...responses };
  const add = (status: string, description: string) => {
    if (!(status in result)) result[status] = errorResponse(description);
  };
  add('400', 'Malformed request: bad JSON, bad query parameters or cursor.');
  if (auth !== 'public') add('401', 'Missing, unknown or revoked API key.');
  if (auth !== 'public' && auth !== 'authenticated') add('403', `The API key lacks the scope \`${auth}\`.`);
  if (route.url.includes('/:')) add('404', 'No such object in this organisation.');
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (methods.some((m) => m !== 'GET' && m !== 'HEAD')) {
    add('409', 'Conflict with existing state, or the same Idempotency-Key is still in flight.');
    add('422', 'Validation failed (`details.fields`), or the Idempotency-Key was used for another request.');
  }
  if (route.url.startsWith('/api/')) add('429', 'Rate limit exceeded; see Retry-After.');
  add('500', 'Internal error.');
  return result;
}

export interface OpenApiOptions {
  version: string;
  /** The document's `webhooks` section: what the API sends to webhook endpoints. */
  webhooks: Record<string, unknown>;
  /** Fields an operation adds to its entry (`operationId`, `x-aegis-model`), by method and route url. */
  operationFields: (method: string, url: string) => Record<string, unknown>;
}

const openApiPlugin: FastifyPluginAsync<OpenApiOptions> = async (app, { version, webhooks, operationFields }) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Aegis API',
        version,
        description:
          'Application-security platform managed as code. Authenticate with `Authorization: Bearer <API key>`. ' +
          'Every mutating route accepts `Idempotency-Key`. Lists page by cursor (`limit`, `cursor`, `pagination.next`).',
      },
      components: {
        securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: `svc_live_…`.' } },
      },
      // What Aegis sends to webhook endpoints: one entry per event type of the catalogue.
      webhooks,
    } as Record<string, unknown>,
    transform: ({ schema, url, route }) => {
      const base = (schema ?? {}) as Record<string, unknown>;
      const auth = route.config?.auth ?? 'public';
      const method = [route.method].flat().find((m) => m !== 'HEAD') ?? 'GET';
      const transformed: Record<string, unknown> = {
        ...base,
        ...operationFields(method, url),
        response: withErrorResponses((base.response as Responses | undefined) ?? {}, route),
        ...(auth === 'public' ? {} : { security: [{ apiKey: [] }] }),
      };
      if (auth !== 'public' && auth !== 'authenticated') transformed['x-required-scope'] = auth;
      return { schema: transformed as typeof schema, url };
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/api/v1/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async () => app.swagger());
};

export default fp(openApiPlugin, { name: 'aegis-openapi' });
