// Webhook: outbound event deliveries. Top-level; `dump` writes all webhooks to one file. Its
// signing secret is returned once, on creation (a sensitive computed attribute in Terraform).
import { webhookMeta } from '../../schemas/index.ts';
import { asFields, collectionEndpoints, defineKind, identityFields, type Body, type Fields, type FieldNote } from './kind.ts';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Deliveries over plain http:// leave the machine unencrypted (loopback receivers are fine). */
function lint(spec: Fields): FieldNote[] {
  let url: URL;
  try {
    url = new URL(String(spec.url));
  } catch {
    return [];
  }
  return url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname) ? [{ path: ['url'], message: 'deliveries (findings, blocked requests) travel unencrypted over http://; use https://' }] : [];
}

const COLLECTION = '/api/v1/webhooks';
const ITEM = '/api/v1/webhooks/{id}';

export const webhook = defineKind({
  kind: 'Webhook',
  order: 2,
  singleton: false,
  protective: false,
  identity: identityFields(webhookMeta.identity),
  describe: ({ fields }) => String(fields.url),
  endpoints: collectionEndpoints(COLLECTION, ITEM),
  operations: {
    list: async (client) => (await client.listAll(COLLECTION)).items.map(asFields),
    get: async (client, id) => asFields(await client.GET(ITEM, { params: { path: { id } } })),
    create: async (client, fields) => asFields(await client.POST(COLLECTION, { body: fields as Body<typeof COLLECTION, 'post'> })),
    update: async (client, id, changes) => asFields(await client.PATCH(ITEM, { params: { path: { id } }, body: changes as Body<typeof ITEM, 'patch'> })),
    remove: async (client, id) => void (await client.DELETE(ITEM, { params: { path: { id } } })),
  },
  config: {},
  lint,
  dump: { placement: 'shared-file', file: 'webhooks.yaml', namePrefix: 'webhook' },
  provider: { subcategory: 'Notifications' },
});
