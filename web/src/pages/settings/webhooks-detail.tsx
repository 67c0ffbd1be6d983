// One webhook: its settings, "Send test" (a ping delivered at once, answered with the delivery),
// rotate the signing secret (the new one shown once), disable/enable, delete — and its delivery log.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, ok } from '../../api/client.ts';
import { useCan } from '../../api/session.ts';
import { ManagedBadge, ManagedEditWarning, StatusBadge, Time, configSourceOf } from '../../components/badges.tsx';
import { ConfirmDialog } from '../../components/dialog.tsx';
import { useWrite } from '../../components/forms.tsx';
import { SecretOnce } from '../../components/secret.tsx';
import { ErrorMessage, Loading } from '../../components/status.tsx';
import { DeliveryLog, deliveriesKey } from './webhooks-deliveries.tsx';
import { WEBHOOKS_KEY } from './webhooks-form.tsx';

export function WebhookDetail({ id }: { id: string }) {
  const canWrite = useCan('admin');
  const [, navigate] = useLocation();
  const queries = useQueryClient();
  const [confirm, setConfirm] = useState<'rotate' | 'delete' | 'disable' | null>(null);
  const webhook = useQuery({ queryKey: [...WEBHOOKS_KEY, id], queryFn: () => ok(api.GET('/api/v1/webhooks/{id}', { params: { path: { id } } })) });
  const path = { params: { path: { id } } };
  const test = useWrite(() => ok(api.POST('/api/v1/webhooks/{id}/test', path)), [deliveriesKey(id), WEBHOOKS_KEY]);
  const rotate = useWrite(() => ok(api.POST('/api/v1/webhooks/{id}/rotate-secret', { ...path, body: {} })), [WEBHOOKS_KEY], () => setConfirm(null));
  const setEnabled = useWrite((enabled: boolean) => ok(api.PATCH('/api/v1/webhooks/{id}', { ...path, body: { enabled } })), [WEBHOOKS_KEY], () => setConfirm(null));
  const remove = useWrite(() => ok(api.DELETE('/api/v1/webhooks/{id}', path)), [], () => {
    queries.removeQueries({ queryKey: [...WEBHOOKS_KEY, id] });
    void queries.invalidateQueries({ queryKey: WEBHOOKS_KEY });
    navigate('/');
  });

  if (webhook.isPending) return <Loading label="Loading the webhook" />;
  if (webhook.isError) return <ErrorMessage error={webhook.error} />;
  const w = webhook.data;
  const source = configSourceOf(w.labels);
  return (
    <>
      <p><Link href="/">← All webhooks</Link></p>
      <h2 className="webhook-url">Webhook <code>{w.url}</code></h2>
      {source && <ManagedBadge by={source} />}
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={w.enabled ? 'enabled' : 'disabled'} />
          {w.disabled_reason && <> — {w.disabled_reason}</>}
          {w.failing_since && <> · failing since <Time at={w.failing_since} /></>}
        </dd>
        <dt>Description</dt>
        <dd>{w.description || '—'}</dd>
        <dt>Events</dt>
        <dd>{w.events.map((e) => <code key={e}>{e} </code>)}</dd>
        <dt>Signing secret</dt>
        <dd>
          ends in <code>{w.secret_last4}</code>
          {w.previous_secret_expires_at && <> · the previous secret also signs until <Time at={w.previous_secret_expires_at} /></>}
        </dd>
        <dt>Created</dt>
        <dd><Time at={w.created_at} /></dd>
      </dl>
      {canWrite && (
        <>
          <ManagedEditWarning labels={w.labels} />
          <div className="actions">
            <button type="button" className="button-primary" onClick={() => test.mutate()} disabled={test.isPending}>{test.isPending ? 'Sending…' : 'Send test'}</button>
            <button type="button" onClick={() => setConfirm('rotate')}>Rotate secret</button>
            {w.enabled ? (
              <button type="button" onClick={() => setConfirm('disable')}>Disable</button>
            ) : (
              <button type="button" onClick={() => setEnabled.mutate(true)} disabled={setEnabled.isPending}>Enable</button>
            )}
            <button type="button" className="button-danger" onClick={() => setConfirm('delete')}>Delete</button>
          </div>
        </>
      )}
      {test.isError && <ErrorMessage error={test.error} title="The test was not sent" />}
      {test.isSuccess && (
        <p className={test.data.status === 'succeeded' ? 'success' : 'error'} role="status">
          Test ping {test.data.status}: {test.data.response_status !== null ? `the endpoint answered ${test.data.response_status}` : `no response (${test.data.error ?? 'unreachable'})`}.
        </p>
      )}
      {rotate.isSuccess && <SecretOnce label="New signing secret" value={rotate.data.secret} />}
      {[rotate, setEnabled, remove].map((write, i) => write.isError && <ErrorMessage key={i} error={write.error} />)}
      <DeliveryLog webhookId={id} canWrite={canWrite} />
      <ConfirmDialog open={confirm === 'rotate'} title="Rotate the signing secret?" confirmLabel="Rotate secret" busy={rotate.isPending} onConfirm={() => rotate.mutate()} onCancel={() => setConfirm(null)}>
        <p>A new secret is made and shown once. For 24 hours deliveries carry a signature with each secret, so your endpoint can switch without missing one.</p>
      </ConfirmDialog>
      <ConfirmDialog open={confirm === 'disable'} title="Disable this webhook?" confirmLabel="Disable" danger busy={setEnabled.isPending} onConfirm={() => setEnabled.mutate(false)} onCancel={() => setConfirm(null)}>
        <p>No events are delivered to it while it is disabled.</p>
      </ConfirmDialog>
      <ConfirmDialog open={confirm === 'delete'} title="Delete this webhook?" confirmLabel="Delete webhook" danger busy={remove.isPending} onConfirm={() => remove.mutate()} onCancel={() => setConfirm(null)}>
        <p>Deliveries to <code>{w.url}</code> stop, and its delivery log is deleted with it. This cannot be undone.</p>
      </ConfirmDialog>
    </>
  );
}
