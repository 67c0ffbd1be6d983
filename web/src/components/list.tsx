// Every list is read a page at a time through the API's cursor (`pagination.next`): the page the
// person is on, a Next button that asks for the following one, and Previous that goes back through
// the cursors already seen. Nothing loads a whole collection.
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';

export interface PageOf<T> {
  data: T[];
  pagination: { next: string | null };
}

export interface PagedList<T> {
  rows: T[];
  isPending: boolean;
  isFetching: boolean;
  error: unknown;
  page: number;
  hasNext: boolean;
  hasPrevious: boolean;
  next(): void;
  previous(): void;
  reset(): void;
}

/**
 * A paged list. `key` identifies the list and its filters (a change starts again at page 1);
 * `fetchPage` asks the API for the page after `cursor` (undefined for the first).
 */
export function usePagedList<T>(key: readonly unknown[], fetchPage: (cursor: string | undefined) => Promise<PageOf<T>>, options: { refetchInterval?: number | false } = {}): PagedList<T> {
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const [forKey, setForKey] = useState(JSON.stringify(key));
  const keyText = JSON.stringify(key);
  // New filters: back to the first page (state adjusted during render, React's documented pattern).
  if (keyText !== forKey) {
    setForKey(keyText);
    setCursors([undefined]);
  }
  const cursor = cursors[cursors.length - 1];
  const query = useQuery({
    queryKey: [...key, 'page', cursor ?? null],
    queryFn: () => fetchPage(cursor),
    placeholderData: keepPreviousData,
    refetchInterval: options.refetchInterval,
  });
  const nextCursor = query.data?.pagination.next ?? null;
  return {
    rows: query.data?.data ?? [],
    isPending: query.isPending,
    isFetching: query.isFetching,
    error: query.error,
    page: cursors.length,
    hasNext: nextCursor !== null,
    hasPrevious: cursors.length > 1,
    next: () => nextCursor && setCursors([...cursors, nextCursor]),
    previous: () => setCursors(cursors.length > 1 ? cursors.slice(0, -1) : cursors),
    reset: () => setCursors([undefined]),
  };
}

export function Pager({ list, label = 'Pages' }: { list: Pick<PagedList<unknown>, 'page' | 'hasNext' | 'hasPrevious' | 'next' | 'previous' | 'isFetching'>; label?: string }) {
  if (!list.hasNext && !list.hasPrevious) return null;
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" onClick={list.previous} disabled={!list.hasPrevious}>Previous</button>
      <span aria-live="polite">Page {list.page}{list.isFetching ? ' (loading)' : ''}</span>
      <button type="button" onClick={list.next} disabled={!list.hasNext}>Next</button>
    </nav>
  );
}
