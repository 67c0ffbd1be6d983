// Field-by-field comparison of what config asks for with what the API holds, per kind. Values
// are compared in the form the API would store them, so a config that matches the live object
// yields no difference at all (a second plan after apply must be empty).
import { createHash } from 'node:crypto';
import { KINDS } from '../../schemas/index.ts';
import type { DesiredObject, Kind } from '../model.ts';
import type { LiveObject } from '../live/model.ts';

export interface FieldDiff {
  field: string;
  before: unknown;
  after: unknown;
}

const META = new Map(KINDS.map((k) => [k.meta.kind as Kind, k.meta]));

/** Stable JSON: object keys sorted, so equal values always serialise alike. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export const documentHash = (text: string) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

/** The value of a field in comparable form. */
function comparable(kind: Kind, field: string, value: unknown): string {
  if (field === 'expires_at') return value ? String(Date.parse(String(value))) : 'null';
  if (kind === 'Webhook' && field === 'events' && Array.isArray(value)) return canonicalJson([...value].sort());
  return canonicalJson(value);
}

/** What the config asks for, in the API's field names; `document` becomes its hash for schemas. */
export function desiredFields(object: DesiredObject, labels: Record<string, string>): Record<string, unknown> {
  const fields: Record<string, unknown> = { ...object.spec, labels };
  if (object.kind === 'ShieldSchema') {
    const { document, ...rest } = fields;
    return { ...rest, hash: documentHash(String(document ?? '')) };
  }
  return fields;
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
  const meta = META.get(kind);
  if (!meta) return false;
  // A schema's document is compared by its hash; the document itself is mutable.
  return diffs.some((d) => !meta.mutable.includes(d.field === 'hash' ? 'document' : d.field));
}
