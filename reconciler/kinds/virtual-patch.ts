// VirtualPatch: a rule that blocks requests exploiting a known vulnerability, on one site. Nested
// in the site's config file under `virtual_patches`.
import { compileUserRegex } from '../../schemas/checks/regex.ts';
import { virtualPatchMeta } from '../../schemas/index.ts';
import { asFields, collectionEndpoints, defineKind, identityFields, requireSite, type Body } from './kind.ts';
import { lowered, reasons } from './weakening.ts';

const ACTION_RANK = { log: 0, challenge: 1, block: 2 };

const COLLECTION = '/api/v1/shield/sites/{id}/virtual-patches';
const ITEM = '/api/v1/shield/sites/{id}/virtual-patches/{patch_id}';

export const virtualPatch = defineKind({
  kind: 'VirtualPatch',
  order: 1,
  singleton: false,
  protective: true,
  identity: identityFields(virtualPatchMeta.identity),
  describe: ({ fields }) => `${String(fields.method)} ${String(fields.url_pattern)} ${String(fields.match_param)}`,
  weakened: (diff) => reasons(lowered(diff, 'action', ACTION_RANK)),
  endpoints: collectionEndpoints(COLLECTION, ITEM),
  operations: {
    list: async (client, siteId) => (await client.listAll(COLLECTION, { params: { path: { id: requireSite(siteId) } } })).items.map(asFields),
    get: async (client, id, siteId) => asFields(await client.GET(ITEM, { params: { path: { id: requireSite(siteId), patch_id: id } } })),
    create: async (client, fields, siteId) => asFields(await client.POST(COLLECTION, { params: { path: { id: requireSite(siteId) } }, body: fields as Body<typeof COLLECTION, 'post'> })),
    update: async (client, id, changes, siteId) =>
      asFields(await client.PATCH(ITEM, { params: { path: { id: requireSite(siteId), patch_id: id } }, body: changes as Body<typeof ITEM, 'patch'> })),
    remove: async (client, id, siteId) => void (await client.DELETE(ITEM, { params: { path: { id: requireSite(siteId), patch_id: id } } })),
  },
  config: { nested: { form: 'list', field: 'virtual_patches' } },
  lint: (spec) => (spec.action === 'log' ? [{ path: ['action'], message: 'virtual patch does not block: matching requests are only logged' }] : []),
  offlineChecks: (fields) => {
    const pattern = fields.match_regex;
    if (typeof pattern !== 'string') return [];
    const check = compileUserRegex(pattern);
    return check.ok ? [] : [{ path: ['match_regex'], message: `match_regex ${check.reason}` }];
  },
  dump: { placement: 'with-parent', namePrefix: 'patch' },
  provider: { subcategory: 'Shield rules', dependsOn: { expires_at: ['expires_in_days'], status: ['expires_in_days'] } },
});
