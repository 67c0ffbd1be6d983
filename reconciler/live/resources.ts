// The API as the reconciler uses it: read every collection, and create/update/delete one object
// of any kind, or many rules of one site in one request (`batch`). Implemented over the typed REST
// client in rest-resources.ts, per kind by the kind registry (reconciler/kinds).
import type { Kind } from '../kinds/index.ts';

export type { Fields } from '../kinds/index.ts';
import type { Fields } from '../kinds/index.ts';

/** Most operations one rule batch may carry (the API's limit). */
export const RULE_BATCH_LIMIT = 1000;

/** One write in a rule batch: `fields` is the body the single create or update would send. */
export interface RuleBatchOperation {
  op: 'create' | 'update' | 'delete';
  kind: Kind;
  id?: string;
  fields?: Fields;
}

/** What one operation of a batch did: the object's id, and the object (null for a delete). */
export interface RuleBatchResult {
  id: string;
  object: Fields | null;
}

export interface ResourceApi {
  /**
   * Every object of a kind, every page: of the whole organisation for top-level kinds, of one
   * site for site kinds (`siteId` required). A singleton kind lists none or one.
   */
  list(kind: Kind, siteId?: string): Promise<Fields[]>;
  create(kind: Kind, fields: Fields, siteId?: string): Promise<Fields>;
  update(kind: Kind, id: string, changes: Fields, siteId?: string): Promise<Fields>;
  remove(kind: Kind, id: string, siteId?: string): Promise<void>;
  /**
   * Optional: up to RULE_BATCH_LIMIT creates, updates and deletes of rules (kinds for which
   * `batchable` says yes) of one site, in one request, all or nothing. Resolves to one result per
   * operation, in order; rejects with the API's error, whose `details.operation` (when present)
   * is the index of the operation that failed. Without it, every write is its own request.
   */
  batch?(siteId: string, operations: readonly RuleBatchOperation[]): Promise<RuleBatchResult[]>;
  batchable?(kind: Kind): boolean;
  /** Requests made so far. */
  requestCount(): { reads: number; writes: number };
}
