// Settings → Webhooks: the organisation's endpoints (paginated), a new one (its signing secret
// shown once), and each webhook's page with its delivery log. Webhooks are an admin matter: other
// roles are told so, and see no buttons.
import { useState } from 'react';
import { Link, Route, Switch } from 'wouter';
import { api, ok } from '../../api/client.ts';
import { useCan } from '../../api/session.ts';
import type { Item } from '../../api/types.ts';
import { ManagedBadge, StatusBadge, Time, configSourceOf } from '../../components/badges.tsx';
import { Modal } from '../../components/dialog.tsx';
import { Pager, usePagedList } from '../../components/list.tsx';
import { SecretOnce } from '../../components/secret.tsx';
import { Empty, ErrorMessage, Loading } from '../../components/status.tsx';
import { WebhookDetail } from './webhooks-detail.tsx';
import { WEBHOOKS_KEY, WebhookForm, type WebhookCreated } from './webhooks-form.tsx';
import './webhooks-settings.css';

type Webhook = Item<'/api/v1/webhooks'>;

function WebhookList() {
  const list = usePagedList<Webhook>([...WEBHOOKS_KEY, 'list'], (cursor) => ok(api.GET('/api/v1/webhooks', { params: { query: { cursor, limit: 20 } } })));
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<WebhookCreated | null>(null);
  return (
    <>
      <div className="section-head">
        <h2>Webhooks</h2>
        <button type="button" className="button-primary" onClick={() => { setCreated(null); setCreating(true); }}>New webhook</button>
      </div>
      <p className="muted">Aegis POSTs events to these endpoints, signed with each webhook's secret, and retries failed deliveries.</p>
      {created && (
        <div className="notice">
          <SecretOnce label="Signing secret" value={created.secret} />
          <p>Webhook created: <Link href={`/${created.id}`}>open its delivery log</Link>.</p>
        </div>
      )}
      {list.isPending ? (
        <Loading label="Loading webhooks" />
      ) : list.error ? (
        <ErrorMessage error={list.error} />
      ) : list.rows.length === 0 ? (
        <Empty>No webhooks yet.</Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Webhooks</caption>
            <thead>
              <tr>
                <th scope="col">Endpoint</th>
                <th scope="col">Events</th>
                <th scope="col">Status</th>
                <th scope="col">Secret</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {list.rows.map((w) => {
                const source = configSourceOf(w.labels);
                return (
                  <tr key={w.id}>
                    <td>
                      <Link href={`/${w.id}`} className="webhook-url">{w.url}</Link>
                      {w.description && <div className="muted">{w.description}</div>}
                      {source && <ManagedBadge by={source} />}
                    </td>
                    <td>{w.events.join(', ')}</td>
                    <td>
                      <StatusBadge status={w.enabled ? 'enabled' : 'disabled'} />
                      {w.failing_since && <div className="muted">failing since <Time at={w.failing_since} /></div>}
                    </td>
                    <td>…{w.secret_last4}</td>
                    <td><Time at={w.created_at} /></td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Pager list={list} label="Webhook pages" />
      <Modal open={creating} title="New webhook" onClose={() => setCreating(false)}>
        <WebhookForm
          onCreated={(answer) => {
            setCreated(answer);
            setCreating(false);
          }}
        />
      </Modal>
    </>
  );
}

export default function WebhookSettings() {
  const admin = useCan('admin');
  if (!admin) {
    return (
      <>
        <h2>Webhooks</h2>
        <p className="notice" role="note">Only owners and admins can see and manage the organisation's webhooks.</p>
      </>
    );
  }
  return (
    <Switch>
      <Route path="/:id">{(params) => <WebhookDetail id={params.id} />}</Route>
      <Route component={WebhookList} />
    </Switch>
  );
}
