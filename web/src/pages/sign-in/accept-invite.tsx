// Accepting an invite from its link (/sign-in/invite?token=…). Signed out: "Accept invite" posts
// the token to /auth/invite/accept, which joins (creating the account when the address has none)
// and signs in; the invite was mailed to that address, so the token proves it. Signed in: the
// invite is accepted for the current person (POST /api/v1/me/invites/accept, 403 for another
// address) and they may switch to the organisation they joined.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useSearch } from 'wouter';
import { ApiError, api, ok, send } from '../../api/client.ts';
import { useMe } from '../../api/session.ts';
import type { Answer } from '../../api/types.ts';
import { PageHeader } from '../../components/page.tsx';
import { ErrorMessage } from '../../components/status.tsx';

type Joined = Answer<'/api/v1/me/invites/accept', 'post'>;

/** An organisation that enforces SSO keeps the membership but sends the person to its identity provider. */
function SsoRequired({ error }: { error: unknown }) {
  const url = error instanceof ApiError && typeof error.details.sso_url === 'string' ? error.details.sso_url : null;
  if (!url) return null;
  return (
    <p>
      <a className="button button-primary" href={url}>Sign in through your organisation's identity provider</a>
    </p>
  );
}

function SignedOutAccept({ token }: { token: string }) {
  const accept = useMutation({
    mutationFn: () => send('/auth/invite/accept', { method: 'POST', json: { token } }),
    // A full load: the whole dashboard starts again as the person just signed in.
    onSuccess: () => window.location.assign('/'),
  });
  return (
    <>
      <p>You have been invited to join an organisation on Aegis. Accepting signs you in with the address the invite was sent to; an address without an account gets one.</p>
      {accept.isError && <ErrorMessage error={accept.error} title="The invite could not be accepted" />}
      {accept.isError && <SsoRequired error={accept.error} />}
      <div className="actions">
        <button type="button" className="button-primary" disabled={accept.isPending || accept.isSuccess} onClick={() => accept.mutate()}>
          {accept.isPending || accept.isSuccess ? 'Joining…' : 'Accept invite'}
        </button>
        <a href="/sign-in">Sign in instead</a>
      </div>
    </>
  );
}

function SignedInAccept({ token }: { token: string }) {
  const queries = useQueryClient();
  const accept = useMutation({ mutationFn: () => ok(api.POST('/api/v1/me/invites/accept', { body: { token } })) });
  const switchTo = useMutation({
    mutationFn: (joined: Joined) => ok(api.PUT('/api/v1/me/current-organization', { body: { organization_id: joined.organization.id } })),
    onSuccess: async () => {
      queries.clear();
      window.location.assign('/');
    },
  });
  if (accept.isSuccess) {
    return (
      <div className="success" role="status">
        <p>You joined <strong>{accept.data.organization.name}</strong> as {accept.data.role}.</p>
        {switchTo.isError && <ErrorMessage error={switchTo.error} />}
        <button type="button" className="button-primary" disabled={switchTo.isPending} onClick={() => switchTo.mutate(accept.data)}>
          Switch to {accept.data.organization.name}
        </button>
      </div>
    );
  }
  return (
    <>
      <p>You have been invited to join an organisation. Accept to become a member; you stay signed in where you are.</p>
      {accept.isError && <ErrorMessage error={accept.error} title="The invite could not be accepted" />}
      <button type="button" className="button-primary" disabled={accept.isPending} onClick={() => accept.mutate()}>Accept invite</button>
    </>
  );
}

export default function AcceptInvite() {
  const search = useSearch();
  // Read once: the token is then taken out of the address bar (and history).
  const [token] = useState(() => new URLSearchParams(search).get('token') ?? '');
  const me = useMe();
  useEffect(() => {
    if (token) window.history.replaceState(window.history.state, '', window.location.pathname);
  }, [token]);
  return (
    <div className="sign-in">
      <PageHeader title="Accept your invite" />
      {!token ? (
        <ErrorMessage error={new Error('This page needs the link from the invite mail: copy the whole link into the address bar.')} title="No invite" />
      ) : me.data ? (
        <SignedInAccept token={token} />
      ) : (
        <SignedOutAccept token={token} />
      )}
    </div>
  );
}
