// The list's filters, sort and page size live in the URL's query string, so a filtered view can be
// shared and survives a reload. Only the API's own parameters are kept, under the API's names.
import { useSearch } from 'wouter';
import { navigate } from 'wouter/use-browser-location';
import type { FindingQuery, Sort } from './model.ts';

export const FILTER_KEYS = ['severity', 'status', 'scan_type', 'cwe', 'target', 'scan_id', 'false_positive'] as const;
export type FilterKey = (typeof FILTER_KEYS)[number];
export type ListState = Partial<Record<FilterKey | 'sort' | 'limit', string>>;

const KEYS = [...FILTER_KEYS, 'sort', 'limit'] as const;

export function useListState(): [ListState, (changes: ListState) => void] {
  const search = useSearch();
  const params = new URLSearchParams(search);
  const state: ListState = {};
  for (const key of KEYS) {
    const value = params.get(key);
    if (value) state[key] = value;
  }
  const update = (changes: ListState) => {
    const next = new URLSearchParams();
    const merged = { ...state, ...changes };
    for (const key of KEYS) {
      const value = merged[key]?.trim();
      if (value) next.set(key, value);
    }
    const qs = next.toString();
    navigate(`/findings${qs ? `?${qs}` : ''}`);
  };
  return [state, update];
}

/** The API query of a list state (unknown values are passed on: the API answers them with a 400 we show). */
export function toApiQuery(state: ListState, cursor: string | undefined): FindingQuery {
  const limit = Number(state.limit);
  return {
    cursor,
    limit: Number.isInteger(limit) && limit >= 1 && limit <= 200 ? limit : undefined,
    severity: state.severity,
    status: state.status,
    scan_type: state.scan_type,
    cwe: state.cwe,
    target: state.target,
    scan_id: state.scan_id,
    false_positive: state.false_positive === 'true' ? true : state.false_positive === 'false' ? false : undefined,
    sort: state.sort as Sort | undefined,
  };
}
