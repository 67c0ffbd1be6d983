// What makes an object "the same thing" regardless of who created it (the kind entry's identity,
// from KindMeta.identity), used to spot an unowned live object that a config object would collide with.
import { kindEntry } from '../kinds/index.ts';
import type { Kind } from '../model.ts';

/** `siteKey` is the site's live id, or for a site being created a placeholder unique to it. */
export function naturalKey(kind: Kind, fields: Record<string, unknown>, siteKey?: string): string {
  return [kind, siteKey ?? '', ...kindEntry(kind).identity(fields)].join('\u0000');
}
