// Settings, API keys: the organisation's keys (last four characters only), a new key shown once
// with Copy, Rotate (the new value shown once, the old one in grace for 7 days) and Revoke.
// The API is admin only, listing included: other roles get a notice instead.
import { useState } from 'react';
import { api, ok } from '../../api/client.ts';
import { hasScope, useMe } from '../../api/session.ts';
import { Modal } from '../../components/dialog.tsx';
import { Field } from '../../components/forms.tsx';
import { Pager, usePagedList } from '../../components/list.tsx';
import { Empty, ErrorMessage, Loading } from '../../components/status.tsx';
import { IssuedKeyDialog, RevokeKey, RotateKey } from './api-keys-actions.tsx';
import { useFocusReturn } from './focus-return.ts';
import { NewKeyForm } from './api-keys-form.tsx';
import { apiKeysQueryKey, type ApiKey, type IssuedKey } from './api-keys-model.ts';
import { ApiKeysTable } from './api-keys-table.tsx';
import './api-keys.css';

const STATUS_FILTERS = { current: 'active,rotating', active: 'active', rotating: 'rotating', revoked: 'revoked', all: undefined } as const;
type StatusFilter = keyof typeof STATUS_FILTERS;

export default function ApiKeysPage() {
  const me = useMe();
  // Until the caller is known, neither the page nor the notice (no flash of the wrong one).
  const isAdmin = hasScope(me.data, 'admin');
  return (
    <section aria-labelledby="api-keys-heading">
      <h2 id="api-keys-heading" tabIndex={-1}>API keys</h2>
      <p className="settings-intro">Keys let programs call the Aegis API as this organisation. A key's value is shown once, when it is made.</p>
      {me.isPending ? <Loading /> : isAdmin ? <ApiKeys /> : <p className="notice">Only owners and admins can see and manage API keys.</p>}
    </section>
  );
}

function ApiKeys() {
  const [status, setStatus] = useState<StatusFilter>('current');
  const [creating, setCreating] = useState(false);
  const [issued, setIssued] = useState<{ key: IssuedKey; title: string } | null>(null);
  const [rotating, setRotating] = useState<ApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  useFocusReturn(creating || rotating !== null || revoking !== null || issued !== null, 'api-keys-heading');
  const list = usePagedList([...apiKeysQueryKey, status], (cursor) =>
    ok(api.GET('/api/v1/api-keys', { params: { query: { cursor, status: STATUS_FILTERS[status] } } })),
  );
  return (
    <>
      <div className="filters">
        <Field label="Show">
          {(props) => (
            <select {...props} value={status} onChange={(e) => setStatus(e.target.value as StatusFilter)}>
              <option value="current">Active and rotating</option>
              <option value="active">Active</option>
              <option value="rotating">Rotating (old keys in grace)</option>
              <option value="revoked">Revoked</option>
              <option value="all">All</option>
            </select>
          )}
        </Field>
        <button type="button" className="button-primary" onClick={() => setCreating(true)}>New key</button>
      </div>
      {list.isPending ? (
        <Loading label="Loading API keys" />
      ) : list.error ? (
        <ErrorMessage error={list.error} title="The API keys could not be loaded" />
      ) : list.rows.length === 0 ? (
        <Empty>No API keys{status === 'all' ? '' : ' here'} yet.</Empty>
      ) : (
        <ApiKeysTable keys={list.rows} canWrite onRotate={setRotating} onRevoke={setRevoking} />
      )}
      <Pager list={list} label="API key pages" />
      {/* Dialogs exist only while open: the foundation's dialogs share their heading ids. */}
      {creating && (
        <Modal open title="New API key" onClose={() => setCreating(false)}>
          <NewKeyForm
            onCancel={() => setCreating(false)}
            onCreated={(key) => {
              setCreating(false);
              setIssued({ key, title: 'Your new API key' });
            }}
          />
        </Modal>
      )}
      {rotating && (
        <RotateKey
          target={rotating}
          onClose={() => setRotating(null)}
          onIssued={(key) => {
            setRotating(null);
            setIssued({ key, title: 'Your rotated API key' });
          }}
        />
      )}
      {revoking && <RevokeKey target={revoking} onClose={() => setRevoking(null)} />}
      {issued && <IssuedKeyDialog issued={issued.key} title={issued.title} onClose={() => setIssued(null)} />}
    </>
  );
}
