// A Shield site's decisions as they happen: the SSE stream into a table capped at MAX_ROWS, with
// Pause/Resume, a filter by action and the connection's state announced politely.
import { useQuery } from '@tanstack/react-query';
import { useId } from 'react';
import { api, ok } from '../../../api/client.ts';
import { Empty, ErrorMessage } from '../../../components/status.tsx';
import { ACTION_LABEL, ACTIONS, type Action } from './actions.ts';
import { DecisionsTable } from './decisions-table.tsx';
import { MAX_ROWS, useDecisionStream, type ConnectionStatus } from './stream.ts';
import './traffic.css';

const STATUS_TEXT: Record<ConnectionStatus | 'paused', string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  closed: 'Disconnected',
  paused: 'Paused',
};

const isAction = (value: string): value is Action => (ACTIONS as readonly string[]).includes(value);

export function SiteLive({ siteId }: { siteId: string }) {
  const stream = useDecisionStream(siteId);
  const id = useId();
  const shown = stream.paused && stream.status === 'live' ? 'paused' : stream.status;

  return (
    <section className="traffic" aria-labelledby={`${id}-heading`}>
      <div className="traffic-head">
        <h2 id={`${id}-heading`}>Live decisions</h2>
        <p className="traffic-status" role="status" aria-live="polite" data-testid="live-status">
          <span className={`traffic-dot traffic-dot-${shown}`} aria-hidden="true" />
          {STATUS_TEXT[shown]}
        </p>
      </div>
      <div className="traffic-live-bar">
        <div className="field">
          <label htmlFor={`${id}-action`}>Action</label>
          <select id={`${id}-action`} value={stream.action ?? ''} onChange={(e) => stream.setAction(isAction(e.target.value) ? e.target.value : null)}>
            <option value="">All actions</option>
            {ACTIONS.map((action) => (
              <option key={action} value={action}>
                {ACTION_LABEL[action]} ({action})
              </option>
            ))}
          </select>
        </div>
        {stream.paused ? (
          <button type="button" className="button-primary" onClick={stream.resume}>
            Resume
          </button>
        ) : (
          <button type="button" onClick={stream.pause}>
            Pause
          </button>
        )}
        <button type="button" className="button-quiet" onClick={stream.clear} disabled={stream.rows.length === 0 && stream.heldCount === 0}>
          Clear
        </button>
      </div>
      {stream.paused && (
        <p className="notice" data-testid="held-count">
          {stream.heldCount === 1 ? '1 decision has' : `${stream.heldCount} decisions have`} arrived while paused
          {stream.heldCount > MAX_ROWS && ` (the newest ${MAX_ROWS} will be shown)`}.
        </p>
      )}
      {stream.dropped > 0 && (
        <p className="notice">
          The connection fell behind and {stream.dropped} {stream.dropped === 1 ? 'decision was' : 'decisions were'} skipped.
        </p>
      )}
      {stream.status === 'closed' && <Closed siteId={siteId} onReconnect={stream.reconnect} />}
      <p className="muted">
        Every block, challenge and log decision appears here, and a sample of allows. The newest {MAX_ROWS} are kept.
      </p>
      {stream.rows.length === 0 ? <Empty>No decisions yet. They appear here as requests reach the site.</Empty> : <DecisionsTable rows={stream.rows} />}
    </section>
  );
}

/**
 * EventSource does not expose why the server refused; the site itself, read through the API, gives
 * the API's own message (not found, forbidden, signed out) when there is one.
 */
function Closed({ siteId, onReconnect }: { siteId: string; onReconnect: () => void }) {
  const site = useQuery({ queryKey: ['shield-site-live-check', siteId], queryFn: () => ok(api.GET('/api/v1/shield/sites/{id}', { params: { path: { id: siteId } } })), retry: false });
  return (
    <div>
      {site.isError ? (
        <ErrorMessage error={site.error} title="The live stream closed" />
      ) : (
        <p className="error" role="alert">
          The live stream closed.
        </p>
      )}
      <button type="button" onClick={onReconnect}>
        Reconnect
      </button>
    </div>
  );
}
