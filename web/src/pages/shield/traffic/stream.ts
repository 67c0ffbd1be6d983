// The live decisions of a site over GET /api/v1/shield/sites/:id/live (server-sent events).
//
// Pause keeps the connection open and holds what arrives (counted, and the newest kept) until
// Resume. The alternative, closing the stream and resuming with Last-Event-ID, is not open to a
// browser: EventSource sends Last-Event-ID only on its own reconnects and a new EventSource cannot
// set the header, so resuming would need a hand-written fetch-based SSE reader. Holding also makes
// Resume instant and lossless up to the cap, and EventSource's own reconnects (network blips) do
// resume from the last id, so nothing is missed there either; the server says how many it had to
// drop (`event: dropped`) when a reader fell behind.
import { useEffect, useReducer } from 'react';
import type { Action } from './actions.ts';

/** The decision as the stream sends it (the route's description lists these fields). */
export interface LiveDecision {
  id: string;
  time: string;
  site_id: string;
  action: Action;
  rule_kind: string | null;
  rule_id: string | null;
  would: string | null;
  client_ip: string;
  asn: number | null;
  country: string | null;
  method: string;
  host: string;
  path: string;
  status: number;
  request_id: string;
}

/**
 * A decision a rule only logged but would have enforced: a rule in log mode (or a site in log mode)
 * that would have blocked or challenged the request. The live view shows these in a lane of their
 * own, apart from real blocks.
 */
export const wouldAct = (decision: Pick<LiveDecision, 'action' | 'would'>): boolean =>
  decision.action === 'log' && (decision.would === 'block' || decision.would === 'challenge');

/** Rows kept in memory (and shown); older ones fall off the end. */
export const MAX_ROWS = 200;

export type ConnectionStatus = 'connecting' | 'live' | 'reconnecting' | 'closed';

interface State {
  rows: LiveDecision[];
  /** Held while paused, newest first, at most MAX_ROWS. */
  held: LiveDecision[];
  /** Everything that arrived while paused, including what fell off `held`. */
  heldCount: number;
  paused: boolean;
  /** Events the server could not send us (we read too slowly). */
  dropped: number;
  status: ConnectionStatus;
  /** Bumped to open a new connection (Reconnect after the server closed for good). */
  generation: number;
  /** Only this action (the server filters), or all. */
  action: Action | null;
}

type Event =
  | { type: 'decision'; decision: LiveDecision }
  | { type: 'dropped'; count: number }
  | { type: 'status'; status: ConnectionStatus }
  | { type: 'pause' }
  | { type: 'resume' }
  | { type: 'clear' }
  | { type: 'reconnect' }
  | { type: 'filter'; action: Action | null };

const initial: State = { rows: [], held: [], heldCount: 0, paused: false, dropped: 0, status: 'connecting', generation: 0, action: null };

const has = (rows: readonly LiveDecision[], id: string) => rows.some((row) => row.id === id);

function reduce(state: State, event: Event): State {
  switch (event.type) {
    case 'decision': {
      const { decision } = event;
      // A reconnect replays from Last-Event-ID; the server avoids duplicates, this makes sure.
      if (has(state.rows, decision.id) || has(state.held, decision.id)) return state;
      if (state.paused) return { ...state, held: [decision, ...state.held].slice(0, MAX_ROWS), heldCount: state.heldCount + 1 };
      return { ...state, rows: [decision, ...state.rows].slice(0, MAX_ROWS) };
    }
    case 'dropped':
      return { ...state, dropped: state.dropped + event.count };
    case 'status':
      return state.status === event.status ? state : { ...state, status: event.status };
    case 'pause':
      return { ...state, paused: true };
    case 'resume':
      return { ...state, paused: false, rows: [...state.held, ...state.rows].slice(0, MAX_ROWS), held: [], heldCount: 0 };
    case 'clear':
      return { ...state, rows: [], held: [], heldCount: 0, dropped: 0 };
    case 'reconnect':
      return { ...state, status: 'connecting', generation: state.generation + 1 };
    case 'filter': {
      // The new stream sends only the chosen action; rows already shown that do not match go.
      const keep = (row: LiveDecision) => event.action === null || row.action === event.action;
      if (event.action === state.action) return state;
      return { ...state, action: event.action, rows: state.rows.filter(keep), held: state.held.filter(keep), heldCount: state.held.filter(keep).length, status: 'connecting' };
    }
  }
}

function parseDecision(data: string): LiveDecision | null {
  try {
    const value: unknown = JSON.parse(data);
    if (typeof value !== 'object' || value === null) return null;
    const record = value as Partial<LiveDecision>;
    return typeof record.id === 'string' && typeof record.action === 'string' && typeof record.time === 'string' ? (record as LiveDecision) : null;
  } catch {
    return null;
  }
}

export interface DecisionStream extends State {
  pause(): void;
  resume(): void;
  clear(): void;
  reconnect(): void;
  setAction(action: Action | null): void;
}

export function useDecisionStream(siteId: string): DecisionStream {
  const [state, dispatch] = useReducer(reduce, initial);
  const { action, generation } = state;

  useEffect(() => {
    const query = action ? `?action=${encodeURIComponent(action)}` : '';
    // Same origin: the session cookie goes with it, as with every other API call.
    const source = new EventSource(`/api/v1/shield/sites/${encodeURIComponent(siteId)}/live${query}`);
    dispatch({ type: 'status', status: 'connecting' });
    source.addEventListener('open', () => dispatch({ type: 'status', status: 'live' }));
    source.addEventListener('error', () => {
      // CONNECTING: EventSource retries by itself (with Last-Event-ID). CLOSED: the server refused
      // (401/403/404), and it will not retry.
      dispatch({ type: 'status', status: source.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting' });
    });
    source.addEventListener('decision', (message: MessageEvent<string>) => {
      const decision = parseDecision(message.data);
      if (decision) dispatch({ type: 'decision', decision });
    });
    source.addEventListener('dropped', (message: MessageEvent<string>) => {
      let count = Number.NaN;
      try {
        count = Number((JSON.parse(message.data) as { count?: unknown }).count);
      } catch {
        // A malformed notice says nothing we can count.
      }
      if (Number.isFinite(count) && count > 0) dispatch({ type: 'dropped', count });
    });
    return () => source.close();
  }, [siteId, action, generation]);

  return {
    ...state,
    pause: () => dispatch({ type: 'pause' }),
    resume: () => dispatch({ type: 'resume' }),
    clear: () => dispatch({ type: 'clear' }),
    reconnect: () => dispatch({ type: 'reconnect' }),
    setAction: (next) => dispatch({ type: 'filter', action: next }),
  };
}
