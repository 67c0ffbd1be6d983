// A webhook's delivery log (GET /api/v1/webhooks/:id/deliveries, newest first, by cursor): event,
// status, response code, attempts and time; a delivery's detail lists every attempt with the
// response the endpoint gave; "Redeliver" queues one more attempt (the event keeps its id).
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ok } from '../../api/client.ts';
import type { Item } from '../../api/types.ts';
import { StatusBadge, Time } from '../../components/badges.tsx';
import { Modal } from '../../components/dialog.tsx';
import { Field, useWrite } from '../../components/forms.tsx';
import { Pager, usePagedList } from '../../components/list.tsx';
import { Empty, ErrorMessage, Loading } from '../../components/status.tsx';

type Delivery = Item<'/api/v1/webhooks/{id}/deliveries'>;
export const deliveriesKey = (webhookId: string) => ['webhooks', webhookId, 'deliveries'] as const;

function DeliveryDetail({ webhookId, deliveryId }: { webhookId: string; deliveryId: string }) {
  const detail = useQuery({
    queryKey: [...deliveriesKey(webhookId), deliveryId],
    queryFn: () => ok(api.GET('/api/v1/webhooks/{id}/deliveries/{delivery_id}', { params: { path: { id: webhookId, delivery_id: deliveryId } } })),
  });
  // The request body is the event itself, signed and POSTed as JSON (the events API keeps it 30 days).
  const event = useQuery({
    queryKey: ['events', detail.data?.event_id],
    enabled: detail.data !== undefined,
    queryFn: () => ok(api.GET('/api/v1/events/{id}', { params: { path: { id: detail.data?.event_id ?? '' } } })),
  });
  if (detail.isPending) return <Loading label="Loading the delivery" />;
  if (detail.isError) return <ErrorMessage error={detail.error} />;
  const d = detail.data;
  return (
    <div className="delivery-detail">
      <dl className="facts">
        <dt>Event</dt>
        <dd><code>{d.event_type}</code> · <code>{d.event_id}</code></dd>
        <dt>Status</dt>
        <dd><StatusBadge status={d.status} />{d.next_attempt_at && <> · next attempt <Time at={d.next_attempt_at} /></>}</dd>
        <dt>Delivery</dt>
        <dd><code>{d.id}</code></dd>
      </dl>
      <h3>Request body</h3>
      {event.isPending ? <Loading label="Loading the event" /> : event.isError ? <ErrorMessage error={event.error} /> : <pre data-testid="request-body" tabIndex={0} aria-label="Request body">{JSON.stringify(event.data, null, 2)}</pre>}
      <h3>Attempts ({d.attempts.length})</h3>
      {d.attempts.length === 0 && <Empty>No attempt yet.</Empty>}
      <ol className="attempts">
        {d.attempts.map((a) => (
          <li key={a.id}>
            <p>
              <Time at={a.started_at} /> · {a.trigger} · {a.succeeded ? 'succeeded' : 'failed'} · response {a.response_status ?? 'none'} · {a.duration_ms} ms
            </p>
            {a.error && <p className="error-inline">Error: {a.error}</p>}
            <p className="muted">Response body (first 1 KiB)</p>
            {/* Focusable: a long body scrolls, and keyboard users must reach it. */}
            <pre tabIndex={0} aria-label={`Response body of the attempt at ${a.started_at}`}>{a.response_body ?? '(none)'}</pre>
          </li>
        ))}
      </ol>
    </div>
  );
}

export function DeliveryLog({ webhookId, canWrite }: { webhookId: string; canWrite: boolean }) {
  const queries = useQueryClient();
  const [status, setStatus] = useState('');
  const list = usePagedList<Delivery>([...deliveriesKey(webhookId), status], (cursor) =>
    ok(api.GET('/api/v1/webhooks/{id}/deliveries', { params: { path: { id: webhookId }, query: { cursor, limit: 20, ...(status ? { status } : {}) } } })),
  );
  const [open, setOpen] = useState<Delivery | null>(null);
  // Back to the newest page, read again (attempts happen in the background).
  const refresh = () => {
    list.reset();
    void queries.invalidateQueries({ queryKey: deliveriesKey(webhookId) });
  };
  const redeliver = useWrite(
    (delivery: Delivery) => ok(api.POST('/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver', { params: { path: { id: webhookId, delivery_id: delivery.id } } })),
    [deliveriesKey(webhookId)],
  );
  return (
    <section aria-labelledby="delivery-log">
      <div className="section-head">
        <h3 id="delivery-log">Delivery log</h3>
        <button type="button" className="button-quiet" onClick={refresh} disabled={list.isFetching}>Refresh</button>
      </div>
      <div className="filters">
        <Field label="Status">
          {(p) => (
            <select {...p} value={status} onChange={(e) => setStatus(e.target.value)}>
              <option value="">All</option>
              <option value="pending">pending</option>
              <option value="succeeded">succeeded</option>
              <option value="failed">failed</option>
            </select>
          )}
        </Field>
      </div>
      {redeliver.isError && <ErrorMessage error={redeliver.error} title="Redelivery was refused" />}
      {redeliver.isSuccess && <p className="success" role="status">Redelivery of {redeliver.data.event_type} queued.</p>}
      {list.isPending ? (
        <Loading label="Loading deliveries" />
      ) : list.error ? (
        <ErrorMessage error={list.error} />
      ) : list.rows.length === 0 ? (
        <Empty>No deliveries yet. Send a test to see one here.</Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Deliveries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Response</th>
                <th scope="col">Attempts</th>
                <th scope="col">Time</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {list.rows.map((d) => (
                <tr key={d.id} data-testid="delivery-row">
                  <td><code>{d.event_type}</code></td>
                  <td><StatusBadge status={d.status} /></td>
                  <td>{d.response_status ?? (d.error ? 'no response' : '—')}</td>
                  <td>{d.attempt_count}</td>
                  <td><Time at={d.last_attempt_at ?? d.created_at} /></td>
                  <td className="actions">
                    <button type="button" onClick={() => setOpen(d)} aria-label={`Details of the ${d.event_type} delivery ${d.id}`}>Details</button>
                    {canWrite && (
                      <button type="button" onClick={() => redeliver.mutate(d)} disabled={redeliver.isPending} aria-label={`Redeliver ${d.event_type} (${d.id})`}>Redeliver</button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager list={list} label="Delivery pages" />
      <Modal open={open !== null} title={open ? `Delivery of ${open.event_type}` : 'Delivery'} onClose={() => setOpen(null)}>
        {open && <DeliveryDetail webhookId={webhookId} deliveryId={open.id} />}
      </Modal>
    </section>
  );
}
