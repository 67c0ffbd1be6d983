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
  field(name: string): FieldOrigin;
}

const origins = new WeakMap<DesiredObject, ObjectOrigin>();

export function recordOrigin(object: DesiredObject, origin: ObjectOrigin): void {
  origins.set(object, origin);
}

export function fieldOrigin(object: DesiredObject, field: string): FieldOrigin {
  return origins.get(object)?.field(field) ?? { path: `spec.${field}`, location: object.location };
}

export const formatLocation = (location: SourceLocation): string => `${location.file}:${location.line}`;
