// Where each field of a loaded object was written. `DesiredObject.location` says where the object
// starts; checks across documents (a bad regex, a dangling `site:`) should point at the field
// itself and name it the way the file spells it (`spec.virtual_patches[2].match_regex`). The
// loaders record that here, beside the object rather than on it, so DesiredObject stays the plain
// contract the planner compares; objects without a record fall back to their own location.
import type { DesiredObject, SourceLocation } from '../model.ts';

export interface FieldOrigin {
  /** The field as the source spells it. */
  path: string;
  location: SourceLocation;
  /** The field's value is the whole text of this file (relative to the config directory): positions inside the value are positions in it. */
  source?: string;
}

export interface ObjectOrigin {
  /** The field, or with `sub` a value inside it (`managed_rules` + `['exclusions', 0, 'rules']`). */
  field(name: string, sub?: readonly (string | number)[]): FieldOrigin;
}

const origins = new WeakMap<DesiredObject, ObjectOrigin>();

export function recordOrigin(object: DesiredObject, origin: ObjectOrigin): void {
  origins.set(object, origin);
}

export function fieldOrigin(object: DesiredObject, field: string, sub: readonly (string | number)[] = []): FieldOrigin {
  const fallback = `spec.${field}${sub.map((s) => (typeof s === 'number' ? `[${s}]` : `.${s}`)).join('')}`;
  return origins.get(object)?.field(field, sub) ?? { path: fallback, location: object.location };
}

export const formatLocation = (location: SourceLocation): string => `${location.file}:${location.line}`;
