// Ask for a sign-in link by e-mail (POST /auth/login). The link comes back to `returnTo` through the
// server's /auth/magic page and its Sign in button. The answer is the same for every address; a
// rate limit (429) is shown with the API's message.
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { send } from '../../api/client.ts';
import type { BodyOf } from '../../api/types.ts';
import { Field } from '../../components/forms.tsx';
import { ErrorMessage } from '../../components/status.tsx';

interface LinkSent {
  message: string;
}

export function MagicLinkForm({ returnTo }: { returnTo: string }) {
  const [email, setEmail] = useState('');
  const ask = useMutation({
    mutationFn: (body: BodyOf<'/auth/login', 'post'>) => send<LinkSent>('/auth/login', { method: 'POST', json: body }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    ask.mutate({ email: email.trim(), return_to: returnTo });
  };
  if (ask.isSuccess) {
    return (
      <div className="success" role="status">
        <h3>Check your e-mail</h3>
        <p>{ask.data.message}</p>
        <p>We sent it to <strong>{ask.variables.email}</strong>. Open the link on this device and press <em>Sign in</em>.</p>
        <button type="button" className="button-quiet" onClick={() => ask.reset()}>Use another address</button>
      </div>
    );
  }
  return (
    <form onSubmit={submit} aria-label="Sign in with an e-mail link">
      <Field label="E-mail">
        {(props) => <input {...props} type="email" name="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />}
      </Field>
      {ask.isError && <ErrorMessage error={ask.error} title="No link was sent" />}
      <button type="submit" className="button-primary" disabled={ask.isPending}>{ask.isPending ? 'Sending…' : 'Email me a sign-in link'}</button>
    </form>
  );
}
