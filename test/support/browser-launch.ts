// Debian's Chromium, headless, as the browser tests and bench:web start it, and signing a person in
// inside it. Without the background-networking flags Chromium keeps dialling Google's hosts, which
// this network refuses.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { SESSION_COOKIE } from '../../api/accounts/auth/cookies.ts';
import { linkIn, type SmtpCapture } from './smtp.ts';

export { SESSION_COOKIE };

export const CHROMIUM = process.env.AEGIS_CHROMIUM ?? '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not at ${CHROMIUM}: install Debian's chromium package (.ci/run does)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    timeout: 60_000,
  });
}

/**
 * Signs `email` in on `page` through the magic link's own page (asked for by API, read from the mail
 * capture, its button pressed), as a person does: the __Host- session cookie can only be set by the
 * server. Returns the cookie's value.
 */
export async function signInOnPage(page: Page, url: string, smtp: SmtpCapture, email: string): Promise<string> {
  const since = Date.now();
  const asked = await fetch(`${url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
  if (asked.status !== 202) throw new Error(`POST /auth/login: ${asked.status} ${await asked.text()}`);
  const mail = await smtp.waitFor(email, (m) => m.text.includes('/auth/magic'), since);
  await page.goto(linkIn(mail, `${url}/auth/magic`));
  await Promise.all([page.waitForURL((u) => u.pathname !== '/auth/magic'), page.getByRole('button', { name: 'Sign in' }).click()]);
  const cookie = (await page.context().cookies(url)).find((c) => c.name === SESSION_COOKIE)?.value;
  if (!cookie) throw new Error(`no session after signing in ${email}: ${await page.textContent('body')}`);
  return cookie;
}
