// How the reconciler recognises its own objects: two labels it writes on everything it creates.
// `aegis.dev/source` names the config source (a repository); `aegis.dev/name` the object's identity
// in that source. Objects without them are someone else's and are never deleted.
import { kindEntry } from '../kinds/index.ts';
import type { DesiredObject, Kind } from '../model.ts';

export { NAME_LABEL, SOURCE_LABEL } from '../kinds/ownership-labels.ts';
import { NAME_LABEL, SOURCE_LABEL } from '../kinds/ownership-labels.ts';

/** The identity label value: the name, prefixed by the site's name for site kinds. */
export function identityName(object: Pick<DesiredObject, 'kind' | 'name' | 'site'>): string {
  return kindEntry(object.kind).parent !== null ? `${object.site}/${object.name}` : object.name;
}

export const identityKey = (kind: Kind, name: string) => `${kind}|${name}`;

export function ownershipLabels(source: string, object: Pick<DesiredObject, 'kind' | 'name' | 'site'>): Record<string, string> {
  return { [SOURCE_LABEL]: source, [NAME_LABEL]: identityName(object) };
}

/** The labels an object should carry: the user's plus ownership. */
export function desiredLabels(source: string, object: DesiredObject): Record<string, string> {
  return { ...((object.spec.labels as Record<string, string> | undefined) ?? {}), ...ownershipLabels(source, object) };
}

/** Label values are at most 256 characters and the key charset is fixed; sources are made to fit. */
export function normaliseSource(raw: string): string {
  const cleaned = raw
    .trim()
    .replace(/^[a-z]+:\/\//i, '')
    .replace(/^git@/, '')
    .replace(/\.git$/, '')
    .replace(/[^A-Za-z0-9._/:@-]+/g, '-');
  return cleaned.slice(0, 256) || 'default';
}
