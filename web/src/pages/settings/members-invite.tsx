// Invite a person by e-mail with a role. The API mails the link; an owner invite needs an owner.
import { useState, type FormEvent } from 'react';
import { api, ok } from '../../api/client.ts';
import { Field, useWrite } from '../../components/forms.tsx';
import { ErrorMessage } from '../../components/status.tsx';
import { invitesKey, ROLE_HINTS, ROLES, type Role } from './members-model.ts';

export const sendInvite = (body: { email: string; role: Role }) => ok(api.POST('/api/v1/orgs/current/invite', { body }));

export function InviteForm() {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [sent, setSent] = useState<string | null>(null);
  const invite = useWrite(sendInvite, [invitesKey], (row) => {
    setSent(`Invite sent to ${row.email} as ${row.role}.`);
    setEmail('');
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSent(null);
    invite.mutate({ email: email.trim(), role });
  };
  return (
    <>
      <form className="filters" onSubmit={submit} aria-label="Invite a person">
        <Field label="E-mail address">
          {(props) => <input {...props} type="email" required autoComplete="off" value={email} onChange={(e) => setEmail(e.target.value)} />}
        </Field>
        <Field label="Role">
          {(props) => (
            <select {...props} value={role} onChange={(e) => setRole(e.target.value as Role)}>
              {ROLES.map((r) => <option key={r} value={r}>{r}: {ROLE_HINTS[r]}</option>)}
            </select>
          )}
        </Field>
        <button type="submit" className="button-primary" disabled={invite.isPending}>{invite.isPending ? 'Sending…' : 'Send invite'}</button>
      </form>
      {sent && <p className="success" role="status">{sent}</p>}
      {invite.error && <ErrorMessage error={invite.error} title="The invite was not sent" />}
    </>
  );
}
