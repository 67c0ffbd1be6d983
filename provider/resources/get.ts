// Reading one object by id. ResourceApi (shared with the reconciler) lists whole collections, which
// is right for a plan over everything but wasteful for Terraform's one-object ReadResource, so
// this adds the single-object GETs over the same typed client.
import type { Kind } from '../../reconciler/model.ts';
import type { Fields } from '../../reconciler/live/resources.ts';
import { isNotFound, type Connection } from './context.ts';

const asFields = (value: unknown): Fields => (value ?? {}) as Fields;

/** The object, or null when the API answers 404 (deleted outside Terraform, or its site is gone). */
export async function getObject(connection: Connection, kind: Kind, id: string, siteId: string | undefined): Promise<Fields | null> {
  const { client, api } = connection;
  const site = (): string => {
    if (!siteId) throw new Error(`a ${kind} needs its site id`);
    return siteId;
  };
  try {
    switch (kind) {
      case 'ShieldSite':
        return asFields(await client.GET('/api/v1/shield/sites/{id}', { params: { path: { id } } }));
      case 'ScanSchedule':
        return asFields(await client.GET('/api/v1/scan-schedules/{id}', { params: { path: { id } } }));
      case 'Webhook':
        return asFields(await client.GET('/api/v1/webhooks/{id}', { params: { path: { id } } }));
      case 'VirtualPatch':
        return asFields(await client.GET('/api/v1/shield/sites/{id}/virtual-patches/{patch_id}', { params: { path: { id: site(), patch_id: id } } }));
      case 'IpAccessRule':
        return asFields(await client.GET('/api/v1/shield/sites/{id}/ip-access/{rule_id}', { params: { path: { id: site(), rule_id: id } } }));
      case 'RateLimitRule':
        return asFields(await client.GET('/api/v1/shield/sites/{id}/rate-limits/{rule_id}', { params: { path: { id: site(), rule_id: id } } }));
      case 'ShieldSchema':
        // The schema is the site's: its id is the site id. getSchema answers null for 404.
        return await api.getSchema(site());
    }
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}
