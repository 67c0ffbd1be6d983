// Signing in as a person, through the same magic-link flow a browser uses, and calling the API
// with the session cookie (and the Origin header a browser sends).
import { request, type CallOptions, type Response, type TestServer } from './server.ts';
import { linkIn, type SmtpCapture } from './smtp.ts';

export const SESSION_COOKIE = '__Host-aegis_session';

/** The session cookie's value from a response's Set-Cookie headers, if it sets one. */
export function sessionCookieFrom(headers: Headers): string | undefined {
  for (const line of headers.getSetCookie()) {
    const match = new RegExp(`^${SESSION_COOKIE}=([^;]*)`).exec(line);
    if (match?.[1]) return match[1];
  }
  return undefined;
}

/** Asks for a link, reads it from the mail, and follows it: returns the session cookie value. */
export async function signInWithMagicLink(t: TestServer, smtp: SmtpCapture, email: string): Promise<string> {
  const since = Date.now();
  const asked = await request(t.url, 'POST', '/auth/login', { body: { email } });
  if (asked.status !== 202) throw new Error(`POST /auth/login: ${asked.status} ${asked.text}`);
  const mail = await smtp.waitFor(email, (m) => m.text.includes('/auth/magic'), since);
  const token = new URL(linkIn(mail, `${t.url}/auth/magic`)).searchParams.get('token');
  const used = await request(t.url, 'POST', '/auth/magic', { body: { token }, headers: { origin: t.url } });
  const cookie = sessionCookieFrom(used.headers);
  if (used.status !== 200 || !cookie) throw new Error(`POST /auth/magic: ${used.status} ${used.text}`);
  return cookie;
}

/** A call made with the session cookie, as the browser at Aegis's own origin would make it. */
export function asUser<T = any>(t: TestServer, cookie: string, method: string, path: string, options: CallOptions = {}): Promise<Response<T>> {
  return request<T>(t.url, method, path, { ...options, key: null, headers: { cookie: `${SESSION_COOKIE}=${cookie}`, origin: t.url, ...options.headers } });
}
