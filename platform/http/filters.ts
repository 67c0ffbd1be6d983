// Filters are query parameters named like fields; several values are comma-separated.
import { badRequest } from './errors.ts';

const MAX_VALUES = 100;

export function parseList(name: string, value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const values = [...new Set(value.split(',').map((v) => v.trim()).filter((v) => v.length > 0))];
  if (values.length === 0) throw badRequest(`filter ${name} has no values`, { field: name });
  if (values.length > MAX_VALUES) throw badRequest(`filter ${name} takes at most ${MAX_VALUES} values`, { field: name });
  return values;
}

export function parseEnumList<const T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T[] | undefined {
  const values = parseList(name, value);
  if (!values) return undefined;
  const unknown = values.filter((v) => !(allowed as readonly string[]).includes(v));
  if (unknown.length > 0) {
    throw badRequest(`filter ${name} has unknown values: ${unknown.join(', ')}`, { field: name, allowed });
  }
  return values as T[];
}
