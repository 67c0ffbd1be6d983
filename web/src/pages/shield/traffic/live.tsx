// A Shield site's decisions as they happen: the SSE stream into a table capped at MAX_ROWS, with
// Pause/Resume, a filter by action and the connection's state announced politely. What rules in log
// mode would have blocked or challenged has a lane of its own, so it is never mistaken for (nor
// lost among) real blocks: it is what enforcing those rules would stop.
import { useQuery } from '@tanstack/react-query';
import { useId } from 'react';
import { api, ok } from '../../../api/client.ts';
import { Empty, ErrorMessage } from '../../../components/status.tsx';
import { ACTION_LABEL, ACTIONS, type Action } from './actions.ts';
import { DecisionsTable } from './decisions-table.tsx';
import { MAX_ROWS, useDecisionStream, wouldAct, type ConnectionStatus, type LiveDecision } from './stream.ts';
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
  const wouldRows = stream.rows.filter(wouldAct);
  const otherRows = stream.rows.filter((row) => !wouldAct(row));
  // Filtered to another action, the stream sends no logged decision: the lane could only be empty.
  const laneShown = stream.action === null || stream.action === 'log';

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
      {laneShown && <WouldLane rows={wouldRows} />}
      <h3>{laneShown ? 'Other decisions' : 'Decisions'}</h3>
      {otherRows.length === 0 ? (
        <Empty>{stream.rows.length === 0 ? 'No decisions yet. They appear here as requests reach the site.' : 'None besides the ones above.'}</Empty>
      ) : (
        <DecisionsTable rows={otherRows} />
      )}
    </section>
  );
}

/** The "would block" lane: logged decisions whose rule would have blocked or challenged. */
function WouldLane({ rows }: { rows: readonly LiveDecision[] }) {
  const id = useId();
  return (
    <section className="traffic-lane" aria-labelledby={`${id}-would`} data-testid="would-block-lane">
      <h3 id={`${id}-would`}>Would block{rows.length > 0 && <span className="muted"> ({rows.length})</span>}</h3>
      <p className="muted">Requests a rule in log mode let through but would have blocked or challenged if enforced. Real blocks are listed below, not here.</p>
      {rows.length === 0 ? (
        <Empty>None yet: nothing a logging rule would have stopped has arrived.</Empty>
      ) : (
        <DecisionsTable rows={rows} caption="Would have been blocked or challenged, newest first" testId="live-would-block" />
      )}
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
