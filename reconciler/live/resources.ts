// The API as the reconciler uses it: read every collection, and create/update/delete one object
// of any kind. Implemented over the typed REST client in rest-resources.ts.
import type { Kind } from '../model.ts';

export type Fields = Record<string, unknown>;

export interface ResourceApi {
  /** All objects of a top-level kind (ShieldSite, ScanSchedule, Webhook), every page. */
  listTop(kind: 'ShieldSite' | 'ScanSchedule' | 'Webhook'): Promise<Fields[]>;
  /** All rules of a site-level list kind, every page. */
  listSiteRules(kind: 'VirtualPatch' | 'IpAccessRule' | 'RateLimitRule', siteId: string): Promise<Fields[]>;
  /** The site's schema (null when none) with its settings (strictness, labels). */
  getSchema(siteId: string): Promise<Fields | null>;
  create(kind: Kind, fields: Fields, siteId?: string): Promise<Fields>;
  update(kind: Kind, id: string, changes: Fields, siteId?: string): Promise<Fields>;
  remove(kind: Kind, id: string, siteId?: string): Promise<void>;
  /** Requests made so far. */
  requestCount(): { reads: number; writes: number };
}
