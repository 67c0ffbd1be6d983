// ResourceApi over the typed REST client: each kind's registry entry (reconciler/kinds) knows its
// endpoints, so this only dispatches and counts. Rules of a site may also go many at a time through
// the site's rule batch endpoint.
import type { AegisClient } from '../../client/client.ts';
import { kindEntry, type Kind } from '../kinds/index.ts';
import type { ResourceApi, RuleBatchOperation, RuleBatchResult } from './resources.ts';

export const RULE_BATCH_PATH = '/api/v1/shield/sites/{id}/rules/batch';

/** The kinds the rule batch endpoint takes, by their name there. */
const BATCH_KIND: Partial<Record<Kind, 'virtual_patch' | 'ip_access_rule' | 'rate_limit_rule'>> = {
  VirtualPatch: 'virtual_patch',
  IpAccessRule: 'ip_access_rule',
  RateLimitRule: 'rate_limit_rule',
};

/** One operation as the rule batch endpoint (and the impact preview, which takes the same) reads it. */
export type BatchRequestOperation = { op: 'create' | 'update' | 'delete'; kind: 'virtual_patch' | 'ip_access_rule' | 'rate_limit_rule'; id?: string; spec?: Record<string, unknown> };

/** Whether a kind can be written in a rule batch (and proposed in an impact preview). */
export const isBatchKind = (kind: Kind): boolean => BATCH_KIND[kind] !== undefined;

/** Rule batch operations as the endpoint takes them: `fields` is sent as `spec`, deletes send none. */
export function batchRequestOperations(operations: readonly RuleBatchOperation[]): BatchRequestOperation[] {
  return operations.map(({ op, kind, id, fields }) => {
    const batchKind = BATCH_KIND[kind];
    if (!batchKind) throw new Error(`${kind} cannot be written in a rule batch`);
    return { op, kind: batchKind, ...(id !== undefined ? { id } : {}), ...(op !== 'delete' ? { spec: fields ?? {} } : {}) };
  });
}

export function restResources(client: AegisClient): ResourceApi {
  return {
    list: (kind, siteId) => kindEntry(kind).operations.list(client, siteId),
    create: (kind, fields, siteId) => kindEntry(kind).operations.create(client, fields, siteId),
    update: (kind, id, changes, siteId) => kindEntry(kind).operations.update(client, id, changes, siteId),
    remove: (kind, id, siteId) => kindEntry(kind).operations.remove(client, id, siteId),
    batchable: isBatchKind,
    async batch(siteId: string, operations: readonly RuleBatchOperation[]): Promise<RuleBatchResult[]> {
      const answer = await client.POST(RULE_BATCH_PATH, { params: { path: { id: siteId } }, body: { operations: batchRequestOperations(operations) } });
      return answer.results.map((r) => ({ id: r.id, object: r.object ?? null }));
    },
    requestCount: () => ({ reads: client.stats.reads, writes: client.stats.writes }),
  };
}
