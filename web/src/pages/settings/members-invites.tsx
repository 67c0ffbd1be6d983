// Invites: pending by default (or any status), with Resend (a new invite to the same address, which
// replaces the pending one and mails a new link) and Revoke.
import { useState } from 'react';
import { api, ok } from '../../api/client.ts';
import { StatusBadge, Time } from '../../components/badges.tsx';
import { ConfirmDialog } from '../../components/dialog.tsx';
import { Field, useWrite } from '../../components/forms.tsx';
import { Pager, usePagedList } from '../../components/list.tsx';
import { Empty, ErrorMessage, Loading } from '../../components/status.tsx';
import { sendInvite } from './members-invite.tsx';
import { useFocusReturn } from './focus-return.ts';
import { invitesKey, type Invite } from './members-model.ts';

const STATUSES = ['pending', 'accepted', 'revoked', 'expired', 'all'] as const;
type StatusFilter = (typeof STATUSES)[number];

export function InvitesTable() {
  const [status, setStatus] = useState<StatusFilter>('pending');
  const list = usePagedList([...invitesKey, status], (cursor) =>
    ok(api.GET('/api/v1/orgs/current/invites', { params: { query: { cursor, status: status === 'all' ? undefined : status } } })),
  );
  const [revoking, setRevoking] = useState<Invite | null>(null);
  const [resent, setResent] = useState<string | null>(null);
  useFocusReturn(revoking !== null, 'members-heading');
  const resend = useWrite((invite: Invite) => sendInvite({ email: invite.email, role: invite.role }), [invitesKey], (row) => setResent(`A new invite link was sent to ${row.email}.`));
  const revoke = useWrite((invite: Invite) => ok(api.DELETE('/api/v1/orgs/current/invites/{id}', { params: { path: { id: invite.id } } })), [invitesKey], () => setRevoking(null));
  return (
    <>
      <div className="filters">
        <Field label="Invite status">
          {(props) => (
            <select {...props} value={status} onChange={(e) => setStatus(e.target.value as StatusFilter)}>
              {STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
            </select>
          )}
        </Field>
      </div>
      {resent && <p className="success" role="status">{resent}</p>}
      {resend.error && <ErrorMessage error={resend.error} title="The invite was not resent" />}
      {list.isPending ? (
        <Loading label="Loading invites" />
      ) : list.error ? (
        <ErrorMessage error={list.error} title="The invites could not be loaded" />
      ) : list.rows.length === 0 ? (
        <Empty>No {status === 'all' ? '' : `${status} `}invites.</Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Invites</caption>
            <thead>
              <tr>
                <th scope="col">E-mail</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">Sent</th>
                <th scope="col">Expires</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.rows.map((invite) => (
                <tr key={invite.id}>
                  <th scope="row">{invite.email}</th>
                  <td>{invite.role}</td>
                  <td><StatusBadge status={invite.status} /></td>
                  <td><Time at={invite.created_at} /></td>
                  <td><Time at={invite.expires_at} /></td>
                  <td>
                    {invite.status !== 'accepted' && (
                      <div className="actions">
                        <button type="button" disabled={resend.isPending} onClick={() => { setResent(null); resend.mutate(invite); }} aria-label={`Resend invite to ${invite.email}`}>Resend</button>
                        {invite.status === 'pending' && (
                          <button type="button" className="button-danger" onClick={() => { revoke.reset(); setRevoking(invite); }} aria-label={`Revoke invite to ${invite.email}`}>Revoke</button>
                        )}
                      </div>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager list={list} label="Invite pages" />
      {revoking && (
        <ConfirmDialog open danger title={`Revoke the invite to ${revoking.email}?`} confirmLabel="Revoke invite" busy={revoke.isPending} onConfirm={() => revoke.mutate(revoking)} onCancel={() => setRevoking(null)}>
          <p>The link in their mail stops working at once.</p>
          {revoke.error && <ErrorMessage error={revoke.error} title="The invite was not revoked" />}
        </ConfirmDialog>
      )}
    </>
  );
}
