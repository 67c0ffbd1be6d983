// The members with their roles: change a role (select, then Change) or remove someone, behind a
// confirmation. The API's owner rules decide; its 403/409 messages are shown as they are.
import { useState } from 'react';
import { api, ok } from '../../api/client.ts';
import { useMe } from '../../api/session.ts';
import { Time } from '../../components/badges.tsx';
import { ConfirmDialog } from '../../components/dialog.tsx';
import { useWrite } from '../../components/forms.tsx';
import { Pager, usePagedList } from '../../components/list.tsx';
import { Empty, ErrorMessage, Loading } from '../../components/status.tsx';
import { useFocusReturn } from './focus-return.ts';
import { membersKey, ROLES, type Member, type Role } from './members-model.ts';

function RoleCell({ member, onChange }: { member: Member; onChange(member: Member, role: Role): void }) {
  const [role, setRole] = useState<Role>(member.role);
  const label = member.name ?? member.email;
  return (
    <div className="actions">
      <select aria-label={`Role of ${label}`} value={role} onChange={(e) => setRole(e.target.value as Role)}>
        {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
      </select>
      <button type="button" disabled={role === member.role} onClick={() => onChange(member, role)} aria-label={`Change role of ${label}`}>Change</button>
    </div>
  );
}

export function MembersTable() {
  const { data: me } = useMe();
  const list = usePagedList(membersKey, (cursor) => ok(api.GET('/api/v1/orgs/current/members', { params: { query: { cursor } } })));
  const [changing, setChanging] = useState<{ member: Member; role: Role } | null>(null);
  const [removing, setRemoving] = useState<Member | null>(null);
  useFocusReturn(changing !== null || removing !== null, 'members-heading');
  const change = useWrite(
    ({ member, role }: { member: Member; role: Role }) => ok(api.PATCH('/api/v1/orgs/current/members/{user_id}', { params: { path: { user_id: member.user_id } }, body: { role } })),
    [membersKey],
    () => setChanging(null),
  );
  const remove = useWrite(
    (member: Member) => ok(api.DELETE('/api/v1/orgs/current/members/{user_id}', { params: { path: { user_id: member.user_id } } })),
    [membersKey],
    () => setRemoving(null),
  );
  if (list.isPending) return <Loading label="Loading members" />;
  if (list.error) return <ErrorMessage error={list.error} title="The members could not be loaded" />;
  return (
    <>
      {list.rows.length === 0 ? (
        <Empty>No members.</Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Members</caption>
            <thead>
              <tr>
                <th scope="col">Person</th>
                <th scope="col">Role</th>
                <th scope="col">Joined</th>
                <th scope="col">Last sign-in</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.rows.map((member) => (
                // The key includes the role, so a refused change resets the select to the stored role.
                <tr key={`${member.user_id}:${member.role}`}>
                  <th scope="row">
                    {member.name ?? member.email}
                    {member.name && <div className="muted">{member.email}</div>}
                    {me?.user?.id === member.user_id && <> <span className="badge">you</span></>}
                  </th>
                  <td><RoleCell member={member} onChange={(m, role) => { change.reset(); setChanging({ member: m, role }); }} /></td>
                  <td><Time at={member.joined_at} /></td>
                  <td>{member.last_login_at ? <Time at={member.last_login_at} /> : 'never'}</td>
                  <td>
                    <button type="button" className="button-danger" onClick={() => { remove.reset(); setRemoving(member); }} aria-label={`Remove ${member.name ?? member.email}`}>Remove</button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager list={list} label="Member pages" />
      {changing && (
        <ConfirmDialog open title={`Make ${changing.member.email} ${changing.role}?`} confirmLabel="Change role" busy={change.isPending} onConfirm={() => change.mutate(changing)} onCancel={() => setChanging(null)}>
          <p>From {changing.member.role} to {changing.role}. It takes effect at once, also in their open sessions.</p>
          {change.error && <ErrorMessage error={change.error} title="The role was not changed" />}
        </ConfirmDialog>
      )}
      {removing && (
        <ConfirmDialog open danger title={`Remove ${removing.email}?`} confirmLabel="Remove" busy={remove.isPending} onConfirm={() => remove.mutate(removing)} onCancel={() => setRemoving(null)}>
          <p>They lose access to this organisation at once; their sessions here stop working.</p>
          {remove.error && <ErrorMessage error={remove.error} title="The member was not removed" />}
        </ConfirmDialog>
      )}
    </>
  );
}
