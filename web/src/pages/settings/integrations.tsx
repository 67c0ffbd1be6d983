// Settings → Integrations: the organisation's provider connections (source control, ticket
// trackers, AI, cloud) with their status — an `error` shows why — and connect/disconnect. Admins
// only: the API answers others 403, so they are told so instead.
import { useState } from 'react';
import { useSearch } from 'wouter';
import { api, ok } from '../../api/client.ts';
import { useCan } from '../../api/session.ts';
import type { Item } from '../../api/types.ts';
import { StatusBadge, Time } from '../../components/badges.tsx';
import { ConfirmDialog, Modal } from '../../components/dialog.tsx';
import { useWrite } from '../../components/forms.tsx';
import { Pager, usePagedList } from '../../components/list.tsx';
import { Empty, ErrorMessage, Loading } from '../../components/status.tsx';
import { ConnectProvider, INTEGRATIONS_KEY } from './integrations-connect.tsx';
import './webhooks-settings.css';

type Integration = Item<'/api/v1/integrations'>;

function Connections() {
  const list = usePagedList<Integration>([...INTEGRATIONS_KEY, 'list'], (cursor) => ok(api.GET('/api/v1/integrations', { params: { query: { cursor, limit: 20 } } })));
  const [connecting, setConnecting] = useState(false);
  const [disconnecting, setDisconnecting] = useState<Integration | null>(null);
  // Back from a provider's authorization page (the API's OAuth callback lands here).
  const connectedProvider = new URLSearchParams(useSearch()).get('connected');
  const disconnect = useWrite((row: Integration) => ok(api.DELETE('/api/v1/integrations/{id}', { params: { path: { id: row.id } } })), [INTEGRATIONS_KEY], () => setDisconnecting(null));
  return (
    <>
      <div className="section-head">
        <h2>Integrations</h2>
        <button type="button" className="button-primary" onClick={() => setConnecting(true)}>Connect a provider</button>
      </div>
      <p className="muted">Source control (pull-request checks, private repositories), ticket trackers, AI triage and cloud accounts. Tokens never leave the server.</p>
      {connectedProvider && <p className="success" role="status">{connectedProvider} is connected.</p>}
      {disconnect.isError && <ErrorMessage error={disconnect.error} title="Not disconnected" />}
      {list.isPending ? (
        <Loading label="Loading connections" />
      ) : list.error ? (
        <ErrorMessage error={list.error} />
      ) : list.rows.length === 0 ? (
        <Empty>No provider is connected.</Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Connections</caption>
            <thead>
              <tr>
                <th scope="col">Provider</th>
                <th scope="col">Kind</th>
                <th scope="col">Account</th>
                <th scope="col">Status</th>
                <th scope="col">Scopes</th>
                <th scope="col">Connected by</th>
                <th scope="col">Created</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {list.rows.map((row) => (
                <tr key={row.id} data-testid="integration-row">
                  <td>{row.provider} <span className="muted">({row.auth_type})</span></td>
                  <td>{row.kind.replace(/_/g, ' ')}</td>
                  <td>{row.account ?? '—'}</td>
                  <td>
                    <StatusBadge status={row.status} />
                    {row.status === 'error' && row.error && <div className="error-inline">{row.error} — connect again to repair it.</div>}
                  </td>
                  <td>{row.scopes.length ? row.scopes.join(', ') : '—'}</td>
                  <td><code>{row.connected_by ?? '—'}</code></td>
                  <td><Time at={row.created_at} /></td>
                  <td>
                    <button type="button" className="button-danger" onClick={() => setDisconnecting(row)} aria-label={`Disconnect ${row.provider} ${row.account ?? ''}`.trim()}>Disconnect</button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager list={list} label="Connection pages" />
      <Modal open={connecting} title="Connect a provider" onClose={() => setConnecting(false)}>
        <ConnectProvider onDone={() => setConnecting(false)} />
      </Modal>
      <ConfirmDialog
        open={disconnecting !== null}
        title={`Disconnect ${disconnecting?.provider ?? ''}?`}
        confirmLabel="Disconnect"
        danger
        busy={disconnect.isPending}
        onConfirm={() => disconnecting && disconnect.mutate(disconnecting)}
        onCancel={() => setDisconnecting(null)}
      >
        <p>
          Aegis revokes its grant at the provider where it can and deletes the connection and its tokens
          {disconnecting?.account ? <> for <strong>{disconnecting.account}</strong></> : null}. Pull-request checks, tickets, triage or discovery that use it stop.
        </p>
      </ConfirmDialog>
    </>
  );
}

export default function IntegrationSettings() {
  const admin = useCan('admin');
  if (!admin) {
    return (
      <>
        <h2>Integrations</h2>
        <p className="notice" role="note">Only owners and admins can see and manage the organisation's integrations.</p>
      </>
    );
  }
  return <Connections />;
}
