// Cursor pagination. Lists are ordered by id, newest first (ids sort by creation time); the cursor
// is the last id of a page, wrapped so that clients treat it as opaque.
import { badRequest } from './errors.ts';

const CURSOR_VERSION = 'v1';

export interface PageQuery {
  limit?: number;
  cursor?: string;
}

export type Page<T> = {
  data: T[];
  pagination: { next: string | null };
};

export function encodeCursor(lastId: string): string {
  return Buffer.from(`${CURSOR_VERSION}:${lastId}`, 'utf8').toString('base64url');
}

/** The id to continue after, or null for the first page. A cursor we did not issue is a 400. */
export function decodeCursor(cursor: string | undefined): string | null {
  if (cursor === undefined) return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^v1:([a-z]{2,10}_[0-9a-z]{26})$/.exec(text);
  if (!match?.[1]) throw badRequest('cursor is not valid; pass the value of pagination.next unchanged', { field: 'cursor' });
  return match[1];
}

export function pageLimit(query: PageQuery): number {
  return query.limit ?? 50;
}

/** Rows must have been fetched with `limit + 1` so that a next page can be detected. */
export function toPage<Row extends { id: string }, T>(rows: Row[], limit: number, map: (row: Row) => T): Page<T> {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return { data: pageRows.map(map), pagination: { next: hasMore && last ? encodeCursor(last.id) : null } };
}
