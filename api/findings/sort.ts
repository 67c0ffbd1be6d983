// Sorted pages of findings (`?sort=` on GET /api/v1/vulnerabilities). Keyset pagination: rows are
// ordered by (sort key, id) in one direction, and the cursor carries both the last row's key and its
// id, so a page continues exactly after the previous one even when many rows share a key (ties
// are broken by id). Timestamps travel in the cursor as Postgres's own text of the value, so their
// microseconds survive (a JavaScript Date would round them to milliseconds and skip or repeat rows).
import { sql, type RawBuilder } from 'kysely';
import { badRequest } from '../../platform/http/errors.ts';

export const SORTS = ['severity', '-severity', 'first_seen_at', '-first_seen_at', 'last_seen_at', '-last_seen_at', 'created_at', '-created_at', 'updated_at', '-updated_at'] as const;
export type Sort = (typeof SORTS)[number];
type SortField = 'severity' | 'first_seen_at' | 'last_seen_at' | 'created_at' | 'updated_at';

export interface SortSpec {
  sort: Sort;
  field: SortField;
  descending: boolean;
}

/** Where a sorted page continues: the last row's sort key (as SQL text) and id. */
export interface SortCursor {
  key: string;
  id: string;
}

export function parseSort(sort: string | undefined): SortSpec | null {
  if (sort === undefined) return null;
  if (!(SORTS as readonly string[]).includes(sort)) throw badRequest(`sort must be one of ${SORTS.join(', ')}`, { field: 'sort', allowed: SORTS });
  const descending = sort.startsWith('-');
  return { sort: sort as Sort, field: (descending ? sort.slice(1) : sort) as SortField, descending };
}

/** Severity as a number that orders like it: info 1 … critical 5 (`-severity` is the most severe first). */
const SEVERITY_RANK = sql<number>`case severity when 'critical' then 5 when 'high' then 4 when 'medium' then 3 when 'low' then 2 else 1 end`;

/** The SQL of the sort key. Column names come from the closed list above, never from input. */
export function sortKey(spec: SortSpec): RawBuilder<number | Date> {
  return spec.field === 'severity' ? SEVERITY_RANK : sql<Date>`${sql.ref(spec.field)}`;
}

/** The key as text, selected with each row to build the next cursor from. */
export function sortKeyText(spec: SortSpec): RawBuilder<string> {
  return sql<string>`(${sortKey(spec)})::text`;
}

/** `(key, id)` strictly after the cursor in the sort's direction. */
export function afterCursor(spec: SortSpec, cursor: SortCursor): RawBuilder<boolean> {
  const key = spec.field === 'severity' ? sql`${Number(cursor.key)}::int` : sql`${cursor.key}::timestamptz`;
  return spec.descending ? sql<boolean>`(${sortKey(spec)}, id) < (${key}, ${cursor.id})` : sql<boolean>`(${sortKey(spec)}, id) > (${key}, ${cursor.id})`;
}

const PREFIX = 's1';
const ID = /^[a-z]{2,10}_[0-9a-z]{26}$/;
// Postgres's text of a timestamptz (ISO DateStyle), or a severity rank.
const TIMESTAMP_TEXT = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:\d{2})?)?$/;

export function encodeSortCursor(spec: SortSpec, cursor: SortCursor): string {
  return Buffer.from(JSON.stringify([PREFIX, spec.sort, cursor.key, cursor.id]), 'utf8').toString('base64url');
}

/** The cursor of a sorted page; one issued for another sort (or none of ours) is a 400. */
export function decodeSortCursor(spec: SortSpec, cursor: string | undefined): SortCursor | null {
  if (cursor === undefined) return null;
  const invalid = () => badRequest('cursor is not valid for this sort; pass the value of pagination.next unchanged, with the same sort', { field: 'cursor' });
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 4 || parsed[0] !== PREFIX || parsed[1] !== spec.sort) throw invalid();
  const [, , key, id] = parsed as unknown[];
  if (typeof key !== 'string' || typeof id !== 'string' || !ID.test(id)) throw invalid();
  const keyOk = spec.field === 'severity' ? /^[1-5]$/.test(key) : TIMESTAMP_TEXT.test(key);
  if (!keyOk) throw invalid();
  return { key, id };
}
