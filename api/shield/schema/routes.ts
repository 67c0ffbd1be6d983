// /api/v1/shield/sites/:id/schema (the site's OpenAPI document: upload, get, delete) and
// /api/v1/shield/sites/:id/schema-config (strictness and labels of its enforcement). Spec 4.6;
// this stores and validates the configuration, enforcement on traffic comes later.
import { createHash } from 'node:crypto';
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyRequest } from 'fastify';
import { MAX_SCHEMA_BYTES, SchemaConfigResource, SchemaConfigUpdate, ShieldSchemaResource } from '../../../schemas/index.ts';
import { auditRequest } from '../../../platform/audit-log.ts';
import { principalOf } from '../../accounts/auth/plugin.ts';
import type { Db } from '../../../platform/db/database.ts';
import { notFound, validationFailed } from '../../../platform/http/errors.ts';
import { siteParams } from '../params.ts';
import { requireSite } from '../sites/store.ts';
import { analyseInWorker, type DocumentFormat } from '../../../schemas/openapi/document.ts';
import {
  deleteSchema,
  effectiveConfig,
  findSchema,
  findSchemaConfig,
  findSchemaHash,
  lockSchemaConfig,
  strictnessRank,
  toSchemaConfig,
  toShieldSchema,
  upsertSchema,
  upsertSchemaConfig,
  type Strictness,
} from './store.ts';

/** YAML media types in use (`application/vnd.oai.openapi` is the registered OpenAPI YAML type). */
const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'application/vnd.oai.openapi'];
const JSON_TYPES = ['application/json', 'application/vnd.oai.openapi+json'];

const formatOf = (contentType: string | undefined): DocumentFormat =>
  JSON_TYPES.includes((contentType ?? '').split(';')[0]!.trim().toLowerCase()) ? 'json' : 'yaml';

/** Fatal so that a document that is not UTF-8 is refused instead of stored with U+FFFD in it; the BOM is kept so that the text hashes to the uploaded bytes. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

const sha256 = (text: string): string => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

export const schemaRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db } }> = async (app, { db }) => {
  const tags = ['Shield schema'];
  const base = '/api/v1/shield/sites/:id/schema';

  // The upload gets a scope of its own: the document arrives as text (YAML or JSON) and is kept
  // byte for byte, so its parsers hand over the raw text and nothing else in the API sees them.
  await app.register(async (documents: typeof app) => {
    documents.removeAllContentTypeParsers();
    documents.addContentTypeParser([...YAML_TYPES, ...JSON_TYPES], { parseAs: 'buffer' }, async (_request: FastifyRequest, body: Buffer) => {
      try {
        return utf8.decode(body);
      } catch {
        throw validationFailed('the document is not valid UTF-8', { reasons: ['the document is not valid UTF-8'] });
      }
    });

    documents.put(
      base,
      {
        config: { auth: 'shield:write' },
        bodyLimit: MAX_SCHEMA_BYTES,
        schema: {
          tags,
          summary: "Upload a site's OpenAPI schema",
          description:
            'The body is an OpenAPI 3.0 or 3.1 document, as YAML (`application/yaml`, `application/x-yaml`, `text/yaml`, ' +
            '`application/vnd.oai.openapi`) or JSON (`application/json`, `application/vnd.oai.openapi+json`), UTF-8, at most 5 MiB (413 beyond). ' +
            'It replaces the previous document. A document that does not parse, is not OpenAPI 3.0/3.1, fails validation or has a `$ref` ' +
            'outside itself is refused with 422 and `details.reasons`. The text is stored as sent; `hash` is its SHA-256.',
          params: siteParams,
          consumes: [...YAML_TYPES, ...JSON_TYPES],
          body: { type: 'string', minLength: 1, description: 'The OpenAPI document.' },
          response: { 200: ShieldSchemaResource },
        },
      },
      async (request) => {
        const { orgId } = principalOf(request);
        // Answer a wrong site before spending a validation on its document.
        const site = await requireSite(db, orgId, request.params.id);
        const text = request.body;
        const analysis = await analyseInWorker(text, formatOf(request.headers['content-type']));
        if (!analysis.ok) {
          const [first, ...more] = analysis.reasons;
          throw validationFailed(`the OpenAPI document is not valid: ${first}${more.length > 0 ? ` (and ${more.length} more)` : ''}`, { reasons: analysis.reasons });
        }
        const { openapiVersion, operations } = analysis.document;
        const hash = sha256(text);
        const { row, config } = await db.transaction().execute(async (trx) => {
          await requireSite(trx, orgId, site.id);
          const previousHash = await findSchemaHash(trx, site.id);
          const stored = await upsertSchema(trx, orgId, site.id, { document: text, openapiVersion, hash, operations });
          await auditRequest(trx, request, {
            action: 'shield_schema.uploaded',
            target: { type: 'shield_site', id: site.id },
            metadata: { hash, previous_hash: previousHash, openapi_version: openapiVersion, operations: operations.length },
          });
          return { row: stored, config: await findSchemaConfig(trx, site.id) };
        });
        return toShieldSchema(row, config);
      },
    );
  });

  app.get(
    base,
    { config: { auth: 'shield:read' }, schema: { tags, summary: "Get a site's OpenAPI schema", description: '404 when the site has no schema.', params: siteParams, response: { 200: ShieldSchemaResource } } },
    async (request) => {
      const site = await requireSite(db, principalOf(request).orgId, request.params.id);
      const row = await findSchema(db, site.id);
      if (!row) throw notFound('schema');
      return toShieldSchema(row, await findSchemaConfig(db, site.id));
    },
  );

  app.delete(
    base,
    {
      config: { auth: 'shield:write' },
      schema: {
        tags,
        summary: "Delete a site's OpenAPI schema",
        description: 'Ends schema enforcement for the site. Strictness and labels are kept for the next upload.',
        params: siteParams,
        response: { 204: { type: 'null', description: 'Deleted.' } },
      },
    },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      await db.transaction().execute(async (trx) => {
        const site = await requireSite(trx, orgId, request.params.id);
        const deleted = await deleteSchema(trx, site.id);
        if (!deleted) throw notFound('schema');
        await auditRequest(trx, request, { action: 'shield_schema.deleted', target: { type: 'shield_site', id: site.id }, metadata: { hash: deleted.hash } });
      });
      return reply.code(204).send(null);
    },
  );

  app.get(
    `${base}-config`,
    {
      config: { auth: 'shield:read' },
      schema: {
        tags,
        summary: "Get a site's schema enforcement settings",
        description: 'Strictness `standard` and no labels until changed.',
        params: siteParams,
        response: { 200: SchemaConfigResource },
      },
    },
    async (request) => {
      const site = await requireSite(db, principalOf(request).orgId, request.params.id);
      return toSchemaConfig(site, await findSchemaConfig(db, site.id));
    },
  );

  app.patch(
    `${base}-config`,
    {
      config: { auth: 'shield:write' },
      schema: {
        tags,
        summary: "Change a site's schema enforcement settings",
        description: 'Changes `strictness` or `labels`; fields not sent keep their value. Every strictness change is audited.',
        params: siteParams,
        body: SchemaConfigUpdate,
        response: { 200: SchemaConfigResource },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const { site, config } = await db.transaction().execute(async (trx) => {
        const found = await requireSite(trx, orgId, request.params.id);
        await lockSchemaConfig(trx, found.id);
        const before = effectiveConfig(await findSchemaConfig(trx, found.id)).strictness;
        const after = await upsertSchemaConfig(trx, orgId, found.id, request.body);
        const to = after.strictness as Strictness;
        if (to !== before) {
          // Lowering is what weakens protection; say so, so that reviews can filter on it.
          await auditRequest(trx, request, {
            action: 'shield_schema.strictness_changed',
            target: { type: 'shield_site', id: found.id },
            metadata: { from: before, to, lowered: strictnessRank(to) < strictnessRank(before) },
          });
        }
        return { site: found, config: after };
      });
      return toSchemaConfig(site, config);
    },
  );
};
