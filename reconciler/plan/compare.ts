// Field-by-field comparison of what config asks for with what the API holds, per kind. Values
// are compared in the form the API would store them, so a config that matches the live object
// yields no difference at all (a second plan after apply must be empty).
import { kindEntry, type Entry } from '../kinds/index.ts';
import type { DesiredObject, Kind } from '../model.ts';
import type { LiveObject } from '../live/model.ts';
import { canonicalJson } from '../kinds/canonical-json.ts';

export { canonicalJson } from '../kinds/canonical-json.ts';
export { documentHash } from '../kinds/shield-schema.ts';

export interface FieldDiff {
  field: string;
  before: unknown;
  after: unknown;
}

/** Arrays whose schema says `uniqueItems` are sets: order means nothing (webhook `events`). */
const setFields = new Map<Entry, ReadonlySet<string>>();
function setFieldsOf(entry: Entry): ReadonlySet<string> {
  let found = setFields.get(entry);
  if (!found) {
    const properties = entry.definition.spec.properties as Record<string, { uniqueItems?: boolean }>;
    found = new Set(Object.entries(properties).filter(([, schema]) => schema.uniqueItems === true).map(([field]) => field));
    setFields.set(entry, found);
  }
  return found;
}

/** The value of a field in comparable form. */
function comparable(kind: Kind, field: string, value: unknown): string {
  if (field === 'expires_at') return value ? String(Date.parse(String(value))) : 'null';
  if (Array.isArray(value) && setFieldsOf(kindEntry(kind)).has(field)) return canonicalJson(value.map(canonicalJson).sort());
  return canonicalJson(value);
}

/**
 * What the config asks for, in the API's field names; a digested field (a schema's `document`)
 * becomes its digest. Write-only fields (KindMeta.sensitive: a certificate's key) are left out:
 * the API never returns them, so they cannot be compared (the digest stands for them).
 */
export function desiredFields(object: DesiredObject, labels: Record<string, string>): Record<string, unknown> {
  const { digest, definition } = kindEntry(object.kind);
  const fields: Record<string, unknown> = { ...object.spec, labels };
  for (const field of definition.meta.sensitive) delete fields[field];
  if (!digest) return fields;
  const { [digest.field]: value, ...rest } = fields;
  return { ...rest, [digest.as]: digest.of(value) };
}

export function compareFields(kind: Kind, desired: Record<string, unknown>, live: LiveObject): FieldDiff[] {
  const diffs: FieldDiff[] = [];
  for (const [field, after] of Object.entries(desired)) {
    const before = field === 'labels' ? live.labels : live.fields[field];
    if (comparable(kind, field, after) !== comparable(kind, field, before ?? null)) diffs.push({ field, before: before ?? null, after });
  }
  return diffs;
}

/** A change to any field that cannot be updated in place means a new object. */
export function needsReplacement(kind: Kind, diffs: readonly FieldDiff[]): boolean {
  const { definition, digest } = kindEntry(kind);
  // A digest stands for its field (a schema's document is compared by its hash and is mutable).
  return diffs.some((d) => !definition.meta.mutable.includes(digest && d.field === digest.as ? digest.field : d.field));
}
