// A person in an organisation with a role, joined the way people join: an admin key of the
// organisation invites the address, the invite arrives by mail (the outbox file of a server without
// SMTP, or a capturing SMTP server), and the link's page is posted from Aegis's own origin. Returns
// the session cookie. An organisation with no owner yet takes its first owner this way too.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request, type TestServer } from './server.ts';
import { sessionCookieFrom } from './sessions.ts';
import { linkIn, type SmtpCapture } from './smtp.ts';

async function inviteLinkFromOutbox(t: TestServer, email: string, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  const path = join(t.database.dataDir, 'outbox.log');
  for (;;) {
    const text = await readFile(path, 'utf8').catch(() => '');
    const mails = text.split(/\nFrom: /).filter((m) => m.includes(`To: ${email}\n`) && m.includes('/auth/invite?token='));
    const link = /https?:\/\/\S+\/auth\/invite\?token=[A-Za-z0-9_-]+/.exec(mails.at(-1) ?? '')?.[0];
    if (link) return link;
    if (Date.now() > deadline) throw new Error(`no invite for ${email} in ${path}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export type Role = 'owner' | 'admin' | 'member' | 'viewer';

/** Joins the default organisation (invited by the test server's admin key). */
export const joinDefaultOrganization = (t: TestServer, email: string, role: Role, smtp?: SmtpCapture): Promise<string> => joinOrganization(t, t.adminKey, email, role, smtp);

/** Joins the organisation whose admin key is `key`. */
export async function joinOrganization(t: TestServer, key: string, email: string, role: Role, smtp?: SmtpCapture): Promise<string> {
  const since = Date.now();
  const invited = await request(t.url, 'POST', '/api/v1/orgs/current/invite', { key, body: { email, role } });
  if (invited.status !== 201) throw new Error(`invite ${email}: ${invited.status} ${invited.text}`);
  const link = smtp ? linkIn(await smtp.waitFor(email, (m) => m.text.includes('/auth/invite'), since), `${t.url}/auth/invite`) : await inviteLinkFromOutbox(t, email);
  const token = new URL(link).searchParams.get('token');
  const joined = await request(t.url, 'POST', '/auth/invite/accept', { body: { token }, headers: { origin: t.url } });
  const cookie = sessionCookieFrom(joined.headers);
  if (joined.status !== 200 || !cookie) throw new Error(`join ${email}: ${joined.status} ${joined.text}`);
  return cookie;
}
