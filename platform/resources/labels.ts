// Labels on managed objects: the `?label=key:value` filter (several pairs comma-separated, all
// must match), applied as JSONB containment.
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { badRequest } from '../http/errors.ts';
import { parseList } from '../http/filters.ts';
import { filterParam } from '../http/schemas.ts';

export const labelQueryProperty = {
  label: filterParam('Filter by label, as `key:value`; with several pairs, objects must carry all of them.'),
} as const;

export function parseLabelFilter(value: string | undefined): Record<string, string> | undefined {
  const pairs = parseList('label', value);
  if (!pairs) return undefined;
  const wanted: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf(':');
    if (at <= 0) throw badRequest(`label filter "${pair}" must be key:value`, { field: 'label' });
    wanted[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return wanted;
}

/** `labels @> {...}` for the table's labels column. */
export function labelsContain(column: string, wanted: Record<string, string>): RawBuilder<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} @> ${JSON.stringify(wanted)}::jsonb`;
}
