// "Sign in with Google" (/auth/google): the server redirects to Google, or answers 404 when Google
// sign-in is not configured there, which is shown here.
import { useMutation } from '@tanstack/react-query';
import { ErrorMessage } from '../../components/status.tsx';
import { navigateUnlessRefused } from './redirect-probe.ts';

export function GoogleButton({ returnTo }: { returnTo: string }) {
  const start = useMutation({ mutationFn: () => navigateUnlessRefused(`/auth/google?${new URLSearchParams({ return_to: returnTo }).toString()}`) });
  return (
    <>
      <button type="button" onClick={() => start.mutate()} disabled={start.isPending}>Sign in with Google</button>
      {start.isError && <ErrorMessage error={start.error} title="Google sign-in is not available" />}
    </>
  );
}
