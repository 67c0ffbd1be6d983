// ShieldSchema: the OpenAPI document enforced on a site. A singleton of its site (its id is the
// site's), written as two REST resources: the document (PUT /schema, as text) and its settings
// (PATCH /schema-config). The API returns the document's hash rather than comparing documents, so
// the planner compares hashes; config may keep the document in a file of its own (`document_file`).
import { createHash } from 'node:crypto';
import { shieldSchemaMeta } from '../../schemas/index.ts';
import { AegisApiError, textBody, type AegisClient } from '../../client/client.ts';
import { asFields, defineKind, identityFields, requireSite, type Body, type Fields } from './kind.ts';
import { lowered, reasons } from './weakening.ts';

const STRICTNESS_RANK = { lenient: 0, standard: 1, strict: 2 };

export const documentHash = (text: string) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

const DOCUMENT = '/api/v1/shield/sites/{id}/schema';
const SETTINGS = '/api/v1/shield/sites/{id}/schema-config';

/** Create and update alike: the document when given, then the settings when given. */
async function putSchema(client: AegisClient, siteId: string, fields: Fields): Promise<Fields> {
  const { document, strictness, labels } = fields;
  const params = { path: { id: siteId } };
  let result: Fields = {};
  if (typeof document === 'string') result = asFields(await client.PUT(DOCUMENT, { params, ...textBody(document, 'application/yaml') }));
  if (strictness !== undefined || labels !== undefined) {
    const body = { ...(strictness !== undefined ? { strictness } : {}), ...(labels !== undefined ? { labels } : {}) } as Body<typeof SETTINGS, 'patch'>;
    await client.PATCH(SETTINGS, { params, body });
  }
  return { ...result, id: siteId };
}

export const shieldSchema = defineKind({
  kind: 'ShieldSchema',
  order: 1,
  singleton: true,
  protective: true,
  identity: identityFields(shieldSchemaMeta.identity),
  describe: ({ id }) => `schema of site ${id}`,
  weakened: (diff) => reasons(lowered(diff, 'strictness', STRICTNESS_RANK)),
  digest: { field: 'document', as: 'hash', of: (value) => documentHash(String(value ?? '')) },
  endpoints: [
    { method: 'get', path: DOCUMENT },
    { method: 'put', path: DOCUMENT },
    { method: 'delete', path: DOCUMENT },
    { method: 'patch', path: SETTINGS },
  ],
  operations: {
    // The site's schema with its settings (strictness, labels); a site without one answers 404.
    list: async (client, siteId) => {
      try {
        return [asFields(await client.GET(DOCUMENT, { params: { path: { id: requireSite(siteId) } } }))];
      } catch (err) {
        if (err instanceof AegisApiError && err.status === 404) return [];
        throw err;
      }
    },
    get: async (client, _id, siteId) => asFields(await client.GET(DOCUMENT, { params: { path: { id: requireSite(siteId) } } })),
    create: (client, fields, siteId) => putSchema(client, requireSite(siteId), fields),
    update: (client, id, changes) => putSchema(client, id, changes),
    remove: async (client, id) => void (await client.DELETE(DOCUMENT, { params: { path: { id } } })),
  },
  config: {
    nested: { form: 'single', field: 'schema', description: 'The OpenAPI schema enforced on this site.' },
    fileField: {
      field: 'document',
      fileField: 'document_file',
      description: 'Path of a file holding the OpenAPI document, relative to this YAML file; it must stay inside the config directory.',
    },
  },
  dump: { placement: 'with-parent', namePrefix: 'schema', sideFileSuffix: '.openapi.yaml' },
  provider: { subcategory: 'Shield', dependsOn: { hash: ['document'], openapi_version: ['document'], operations: ['document'] }, readBackAfterWrite: true },
});
