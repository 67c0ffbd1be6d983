// ResourceApi over the typed REST client: which endpoint serves which kind. Bodies come from
// config already validated against the same schemas the API uses, hence the casts to the generated
// body types at this one boundary.
import { AegisApiError, textBody, type AegisClient } from '../client/client.ts';
import type { paths } from '../client/api-types.ts';
import type { Kind } from '../model.ts';
import type { Fields, ResourceApi } from './resources.ts';

type Body<P extends keyof paths, M extends 'post' | 'patch'> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

const asFields = (value: unknown): Fields => (value ?? {}) as Fields;

export function restResources(client: AegisClient): ResourceApi {
  const site = (siteId: string | undefined) => {
    if (!siteId) throw new Error('a site-level object needs its site id');
    return { path: { id: siteId } };
  };

  async function putSchema(siteId: string, fields: Fields): Promise<Fields> {
    const { document, strictness, labels } = fields;
    let result: Fields = {};
    if (typeof document === 'string') {
      result = asFields(await client.PUT('/api/v1/shield/sites/{id}/schema', { params: site(siteId), ...textBody(document, 'application/yaml') }));
    }
    if (strictness !== undefined || labels !== undefined) {
      const body = { ...(strictness !== undefined ? { strictness } : {}), ...(labels !== undefined ? { labels } : {}) } as Body<'/api/v1/shield/sites/{id}/schema-config', 'patch'>;
      await client.PATCH('/api/v1/shield/sites/{id}/schema-config', { params: site(siteId), body });
    }
    return { ...result, id: siteId };
  }

  return {
    async listTop(kind) {
      switch (kind) {
        case 'ShieldSite':
          return (await client.listAll('/api/v1/shield/sites')).items.map(asFields);
        case 'ScanSchedule':
          return (await client.listAll('/api/v1/scan-schedules')).items.map(asFields);
        case 'Webhook':
          return (await client.listAll('/api/v1/webhooks')).items.map(asFields);
      }
    },
    async listSiteRules(kind, siteId) {
      const params = { params: site(siteId) };
      switch (kind) {
        case 'VirtualPatch':
          return (await client.listAll('/api/v1/shield/sites/{id}/virtual-patches', params)).items.map(asFields);
        case 'IpAccessRule':
          return (await client.listAll('/api/v1/shield/sites/{id}/ip-access', params)).items.map(asFields);
        case 'RateLimitRule':
          return (await client.listAll('/api/v1/shield/sites/{id}/rate-limits', params)).items.map(asFields);
      }
    },
    async getSchema(siteId) {
      try {
        return asFields(await client.GET('/api/v1/shield/sites/{id}/schema', { params: site(siteId) }));
      } catch (err) {
        if (err instanceof AegisApiError && err.status === 404) return null;
        throw err;
      }
    },
    async create(kind: Kind, fields: Fields, siteId?: string) {
      switch (kind) {
        case 'ShieldSite':
          return asFields(await client.POST('/api/v1/shield/sites', { body: fields as Body<'/api/v1/shield/sites', 'post'> }));
        case 'ScanSchedule':
          return asFields(await client.POST('/api/v1/scan-schedules', { body: fields as Body<'/api/v1/scan-schedules', 'post'> }));
        case 'Webhook':
          return asFields(await client.POST('/api/v1/webhooks', { body: fields as Body<'/api/v1/webhooks', 'post'> }));
        case 'VirtualPatch':
          return asFields(await client.POST('/api/v1/shield/sites/{id}/virtual-patches', { params: site(siteId), body: fields as Body<'/api/v1/shield/sites/{id}/virtual-patches', 'post'> }));
        case 'IpAccessRule':
          return asFields(await client.POST('/api/v1/shield/sites/{id}/ip-access', { params: site(siteId), body: fields as Body<'/api/v1/shield/sites/{id}/ip-access', 'post'> }));
        case 'RateLimitRule':
          return asFields(await client.POST('/api/v1/shield/sites/{id}/rate-limits', { params: site(siteId), body: fields as Body<'/api/v1/shield/sites/{id}/rate-limits', 'post'> }));
        case 'ShieldSchema':
          return putSchema(site(siteId).path.id, fields);
      }
    },
    async update(kind: Kind, id: string, changes: Fields, siteId?: string) {
      switch (kind) {
        case 'ShieldSite':
          return asFields(await client.PATCH('/api/v1/shield/sites/{id}', { params: { path: { id } }, body: changes as Body<'/api/v1/shield/sites/{id}', 'patch'> }));
        case 'ScanSchedule':
          return asFields(await client.PATCH('/api/v1/scan-schedules/{id}', { params: { path: { id } }, body: changes as Body<'/api/v1/scan-schedules/{id}', 'patch'> }));
        case 'Webhook':
          return asFields(await client.PATCH('/api/v1/webhooks/{id}', { params: { path: { id } }, body: changes as Body<'/api/v1/webhooks/{id}', 'patch'> }));
        case 'VirtualPatch':
          return asFields(await client.PATCH('/api/v1/shield/sites/{id}/virtual-patches/{patch_id}', { params: { path: { id: site(siteId).path.id, patch_id: id } }, body: changes as Body<'/api/v1/shield/sites/{id}/virtual-patches/{patch_id}', 'patch'> }));
        case 'IpAccessRule':
          return asFields(await client.PATCH('/api/v1/shield/sites/{id}/ip-access/{rule_id}', { params: { path: { id: site(siteId).path.id, rule_id: id } }, body: changes as Body<'/api/v1/shield/sites/{id}/ip-access/{rule_id}', 'patch'> }));
        case 'RateLimitRule':
          return asFields(await client.PATCH('/api/v1/shield/sites/{id}/rate-limits/{rule_id}', { params: { path: { id: site(siteId).path.id, rule_id: id } }, body: changes as Body<'/api/v1/shield/sites/{id}/rate-limits/{rule_id}', 'patch'> }));
        case 'ShieldSchema':
          return putSchema(id, changes);
      }
    },
    async remove(kind: Kind, id: string, siteId?: string) {
      switch (kind) {
        case 'ShieldSite':
          return void (await client.DELETE('/api/v1/shield/sites/{id}', { params: { path: { id } } }));
        case 'ScanSchedule':
          return void (await client.DELETE('/api/v1/scan-schedules/{id}', { params: { path: { id } } }));
        case 'Webhook':
          return void (await client.DELETE('/api/v1/webhooks/{id}', { params: { path: { id } } }));
        case 'VirtualPatch':
          return void (await client.DELETE('/api/v1/shield/sites/{id}/virtual-patches/{patch_id}', { params: { path: { id: site(siteId).path.id, patch_id: id } } }));
        case 'IpAccessRule':
          return void (await client.DELETE('/api/v1/shield/sites/{id}/ip-access/{rule_id}', { params: { path: { id: site(siteId).path.id, rule_id: id } } }));
        case 'RateLimitRule':
          return void (await client.DELETE('/api/v1/shield/sites/{id}/rate-limits/{rule_id}', { params: { path: { id: site(siteId).path.id, rule_id: id } } }));
        case 'ShieldSchema':
          return void (await client.DELETE('/api/v1/shield/sites/{id}/schema', { params: { path: { id } } }));
      }
    },
    requestCount: () => ({ reads: client.stats.reads, writes: client.stats.writes }),
  };
}
