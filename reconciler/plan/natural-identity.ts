// What makes an object "the same thing" regardless of who created it (KindMeta.identity), used to
// spot an unowned live object that a config object would collide with.
import { KINDS } from '../../schemas/index.ts';
import { checkRuleValue, type IpRuleType } from '../../api/shield/ip-access/values.ts';
import type { Kind } from '../model.ts';

const IDENTITY = new Map(KINDS.map((k) => [k.meta.kind as Kind, k.meta.identity]));

/** `siteKey` is the site's live id, or for a site being created a placeholder unique to it. */
export function naturalKey(kind: Kind, fields: Record<string, unknown>, siteKey?: string): string {
  const parts = (IDENTITY.get(kind) ?? []).map((field) => {
    const value = fields[field];
    if (kind === 'IpAccessRule' && field === 'value') {
      const checked = checkRuleValue(fields.type as IpRuleType, String(value));
      return checked.ok ? checked.key : String(value);
    }
    return String(value ?? '');
  });
  return [kind, siteKey ?? '', ...parts].join('\u0000');
}
