// Settings, Sessions: where the signed-in person is signed in (their own sessions, any role).
// Revoking another session ends it at once; revoking this one signs out, after a warning.
import { useState } from 'react';
import { api, ok } from '../../api/client.ts';
import type { Item } from '../../api/types.ts';
import { Time } from '../../components/badges.tsx';
import { ConfirmDialog } from '../../components/dialog.tsx';
import { useWrite } from '../../components/forms.tsx';
import { Pager, usePagedList } from '../../components/list.tsx';
import { Empty, ErrorMessage, Loading } from '../../components/status.tsx';
import { useFocusReturn } from './focus-return.ts';
import './api-keys.css';

type Session = Item<'/api/v1/me/sessions'>;
const sessionsKey = ['me', 'sessions'] as const;

const revokeSession = (id: string) => ok(api.DELETE('/api/v1/me/sessions/{id}', { params: { path: { id } } }));

/** Every session but this one, page by page through the cursor (an action, not a list shown). */
async function revokeOthers(): Promise<number> {
  let cursor: string | undefined;
  const others: string[] = [];
  do {
    const page = await ok(api.GET('/api/v1/me/sessions', { params: { query: { cursor, limit: 100 } } }));
    others.push(...page.data.filter((s) => !s.current).map((s) => s.id));
    cursor = page.pagination.next ?? undefined;
  } while (cursor);
  for (const id of others) await revokeSession(id);
  return others.length;
}

export default function SessionsPage() {
  const list = usePagedList(sessionsKey, (cursor) => ok(api.GET('/api/v1/me/sessions', { params: { query: { cursor } } })));
  const [revoking, setRevoking] = useState<Session | null>(null);
  const [signingOutOthers, setSigningOutOthers] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  useFocusReturn(revoking !== null || signingOutOthers, 'sessions-heading');
  const revoke = useWrite(revokeSession, [sessionsKey], (session) => {
    setRevoking(null);
    // This browser's own session is gone: the sign-in page is all that is left.
    if (session.current) window.location.assign('/sign-in');
  });
  const others = useWrite(revokeOthers, [sessionsKey], (count) => {
    setSigningOutOthers(false);
    setDone(count === 0 ? 'There were no other sessions.' : `Signed out of ${count} other session${count === 1 ? '' : 's'}.`);
  });
  return (
    <section aria-labelledby="sessions-heading">
      <h2 id="sessions-heading" tabIndex={-1}>Sessions</h2>
      <p className="settings-intro">Where you are signed in. Revoke a session you do not recognise: it stops working at once.</p>
      <div className="actions">
        <button type="button" onClick={() => setSigningOutOthers(true)}>Sign out of all other sessions</button>
      </div>
      {done && <p className="success" role="status">{done}</p>}
      {list.isPending ? (
        <Loading label="Loading sessions" />
      ) : list.error ? (
        <ErrorMessage error={list.error} title="Your sessions could not be loaded" />
      ) : list.rows.length === 0 ? (
        <Empty>No sessions.</Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Your sessions</caption>
            <thead>
              <tr>
                <th scope="col">Device</th>
                <th scope="col">IP address</th>
                <th scope="col">Signed in with</th>
                <th scope="col">Signed in</th>
                <th scope="col">Last seen</th>
                <th scope="col">Expires</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.rows.map((session) => (
                <tr key={session.id} data-testid={session.current ? 'current-session' : undefined}>
                  <th scope="row">
                    <span title={session.user_agent ?? undefined}>{session.browser ?? session.user_agent ?? 'Unknown device'}</span>
                    {session.current && <> <span className="badge status-active">this session</span></>}
                    {session.environment === 'test' && <> <span className="badge badge-test">test</span></>}
                  </th>
                  <td>{session.ip ?? '—'}</td>
                  <td>{session.method.replace(/_/g, ' ')}</td>
                  <td><Time at={session.created_at} /></td>
                  <td><Time at={session.last_seen_at} /></td>
                  <td><Time at={session.expires_at} /></td>
                  <td>
                    <button type="button" className="button-danger" onClick={() => setRevoking(session)} aria-label={session.current ? 'Sign out of this session' : `Revoke session on ${session.browser ?? 'unknown device'} from ${session.ip ?? 'unknown IP'}`}>
                      {session.current ? 'Sign out' : 'Revoke'}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager list={list} label="Session pages" />
      {revoking && (
        <ConfirmDialog
          open
          danger
          title={revoking.current ? 'Sign out of this session?' : 'Revoke this session?'}
          confirmLabel={revoking.current ? 'Sign out' : 'Revoke'}
          busy={revoke.isPending}
          onConfirm={() => revoke.mutate(revoking.id)}
          onCancel={() => setRevoking(null)}
        >
          {revoking.current ? (
            <p><strong>This is the session you are using now.</strong> Revoking it signs you out of this browser.</p>
          ) : (
            <p>{revoking.browser ?? 'The session'} from {revoking.ip ?? 'an unknown address'} stops working at once.</p>
          )}
          {revoke.error && <ErrorMessage error={revoke.error} title="The session was not revoked" />}
        </ConfirmDialog>
      )}
      {signingOutOthers && (
        <ConfirmDialog open danger title="Sign out of all other sessions?" confirmLabel="Sign out others" busy={others.isPending} onConfirm={() => others.mutate()} onCancel={() => setSigningOutOthers(false)}>
          <p>Every session but this one stops working at once.</p>
          {others.error && <ErrorMessage error={others.error} title="Not every session was revoked" />}
        </ConfirmDialog>
      )}
    </section>
  );
}
