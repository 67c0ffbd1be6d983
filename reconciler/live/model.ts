// Live state as the reconciler sees it: every managed object of the organisation, read through the
// list endpoints, and which collections could not be read completely (fail closed: no deletions
// are planned from a partial read).
import type { Kind } from '../model.ts';

export interface LiveObject {
  kind: Kind;
  /** API id; for ShieldSchema the site id (the schema is a singleton of its site). */
  id: string;
  /** Owning site's id, for site kinds. */
  siteId?: string;
  /** The object's fields as the API returns them (labels included). */
  fields: Record<string, unknown>;
  labels: Record<string, string>;
}

export interface LiveState {
  objects: LiveObject[];
  /** Collections whose read failed or was cut short, e.g. `VirtualPatch@site_01…` or `Webhook`. */
  incomplete: { collection: string; error: string }[];
  /** Requests made to read this state. */
  reads: number;
}
