// Settings, Members: who belongs to the organisation and with which role, invites by e-mail, and
// the invites sent. The API is admin only (owner rules on top): other roles get a notice.
import { hasScope, useMe } from '../../api/session.ts';
import { Loading } from '../../components/status.tsx';
import { InviteForm } from './members-invite.tsx';
import { InvitesTable } from './members-invites.tsx';
import { MembersTable } from './members-table.tsx';
import './api-keys.css';

export default function MembersPage() {
  const me = useMe();
  // Until the caller is known, neither the page nor the notice (no flash of the wrong one).
  const isAdmin = hasScope(me.data, 'admin');
  return (
    <section aria-labelledby="members-heading">
      <h2 id="members-heading" tabIndex={-1}>Members</h2>
      <p className="settings-intro">People in this organisation and what their role lets them do. Only an owner may grant or take away the owner role; an organisation always keeps one owner.</p>
      {me.isPending ? <Loading /> : isAdmin ? (
        <>
          <h3>Invite a person</h3>
          <InviteForm />
          <h3>People</h3>
          <MembersTable />
          <h3>Invites</h3>
          <InvitesTable />
        </>
      ) : (
        <p className="notice">Only owners and admins can see and manage members and invites.</p>
      )}
    </section>
  );
}
