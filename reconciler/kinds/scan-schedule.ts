// ScanSchedule: a scan run on a cron schedule. Top-level; its display `name` defaults to the
// config name, and `dump` writes all schedules to one file.
import { scanScheduleMeta } from '../../schemas/index.ts';
import { asFields, collectionEndpoints, defineKind, identityFields, type Body } from './kind.ts';

const COLLECTION = '/api/v1/scan-schedules';
const ITEM = '/api/v1/scan-schedules/{id}';

export const scanSchedule = defineKind({
  kind: 'ScanSchedule',
  // After the Shield kinds: nothing depends on it, and plans list it last.
  order: 2,
  singleton: false,
  protective: false,
  identity: identityFields(scanScheduleMeta.identity),
  describe: ({ fields }) => String(fields.name),
  endpoints: collectionEndpoints(COLLECTION, ITEM),
  operations: {
    list: async (client) => (await client.listAll(COLLECTION)).items.map(asFields),
    get: async (client, id) => asFields(await client.GET(ITEM, { params: { path: { id } } })),
    create: async (client, fields) => asFields(await client.POST(COLLECTION, { body: fields as Body<typeof COLLECTION, 'post'> })),
    update: async (client, id, changes) => asFields(await client.PATCH(ITEM, { params: { path: { id } }, body: changes as Body<typeof ITEM, 'patch'> })),
    remove: async (client, id) => void (await client.DELETE(ITEM, { params: { path: { id } } })),
  },
  config: { nameField: 'name' },
  dump: { placement: 'shared-file', file: 'scan-schedules.yaml', namePrefix: 'schedule' },
  provider: { subcategory: 'Scanning', dependsOn: { next_run_at: ['cron', 'timezone', 'enabled'] } },
});
