// The server's sign-in starts (/auth/google, /auth/sso) redirect to an identity provider, or refuse
// with the API's error envelope (not configured, no SSO for that address). We ask first without
// following the redirect, so a refusal is shown on this page instead of as a bare JSON document;
// when it would redirect, the browser goes there for real.
import { errorFrom } from '../../api/client.ts';

export async function navigateUnlessRefused(url: string): Promise<void> {
  const probe = await fetch(url, { redirect: 'manual', credentials: 'same-origin' });
  if (probe.type === 'opaqueredirect' || (probe.status >= 300 && probe.status < 400)) {
    window.location.assign(url);
    return;
  }
  const text = await probe.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the status text is the message.
  }
  throw errorFrom(probe, body);
}
