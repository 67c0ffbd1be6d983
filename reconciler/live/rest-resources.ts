// ResourceApi over the typed REST client: each kind's registry entry (reconciler/kinds) knows its
// endpoints, so this only dispatches and counts.
import type { AegisClient } from '../client/client.ts';
import { kindEntry } from '../kinds/index.ts';
import type { ResourceApi } from './resources.ts';

export function restResources(client: AegisClient): ResourceApi {
  return {
    list: (kind, siteId) => kindEntry(kind).operations.list(client, siteId),
    create: (kind, fields, siteId) => kindEntry(kind).operations.create(client, fields, siteId),
    update: (kind, id, changes, siteId) => kindEntry(kind).operations.update(client, id, changes, siteId),
    remove: (kind, id, siteId) => kindEntry(kind).operations.remove(client, id, siteId),
    requestCount: () => ({ reads: client.stats.reads, writes: client.stats.writes }),
  };
}
