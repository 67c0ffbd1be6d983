// SSO by work e-mail (its domain or its account finds the organisation) or organisation slug: the
// API's /auth/sso redirects to the identity provider, or answers 404/400 with its message.
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Field } from '../../components/forms.tsx';
import { ErrorMessage } from '../../components/status.tsx';
import { navigateUnlessRefused } from './redirect-probe.ts';

const startSso = ({ who, returnTo }: { who: string; returnTo: string }): Promise<void> =>
  navigateUnlessRefused(`/auth/sso?${new URLSearchParams({ ...(who.includes('@') ? { email: who } : { org: who.toLowerCase() }), return_to: returnTo }).toString()}`);

export function SsoForm({ returnTo }: { returnTo: string }) {
  const [who, setWho] = useState('');
  const start = useMutation({ mutationFn: startSso });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    start.mutate({ who: who.trim(), returnTo });
  };
  return (
    <form onSubmit={submit} aria-label="Sign in with SSO">
      <Field label="Work e-mail or organisation" hint="Your organisation's identity provider is found from your address's domain, or from the organisation's short name.">
        {(props) => <input {...props} name="sso" autoComplete="email" required value={who} onChange={(e) => setWho(e.target.value)} />}
      </Field>
      {start.isError && <ErrorMessage error={start.error} title="Single sign-on is not available" />}
      <button type="submit" disabled={start.isPending}>{start.isPending ? 'Redirecting…' : 'Sign in with SSO'}</button>
    </form>
  );
}
