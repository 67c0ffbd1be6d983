// The API as the reconciler uses it: read every collection, and create/update/delete one object
// of any kind. Implemented over the typed REST client in rest-resources.ts, per kind by the kind
// registry (reconciler/kinds).
import type { Kind } from '../kinds/index.ts';

export type { Fields } from '../kinds/index.ts';
import type { Fields } from '../kinds/index.ts';

export interface ResourceApi {
  /**
   * Every object of a kind, every page: of the whole organisation for top-level kinds, of one
   * site for site kinds (`siteId` required). A singleton kind lists none or one.
   */
  list(kind: Kind, siteId?: string): Promise<Fields[]>;
  create(kind: Kind, fields: Fields, siteId?: string): Promise<Fields>;
  update(kind: Kind, id: string, changes: Fields, siteId?: string): Promise<Fields>;
  remove(kind: Kind, id: string, siteId?: string): Promise<void>;
  /** Requests made so far. */
  requestCount(): { reads: number; writes: number };
}
