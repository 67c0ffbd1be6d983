// The dashboard in a real browser: Debian's Chromium driven by playwright-core, against a real
// server (test/support/server.ts) with a local SMTP capture for magic links.
//
// - `browserSuite` skips a suite only where Chromium is absent and CI did not ask for it:
//   .ci/run installs Chromium and sets AEGIS_REQUIRE_BROWSER=1, so there a missing browser fails.
// - `signIn` signs a person in, in a fresh browser context, through the magic link's own page (the
//   link is asked for by API: the dashboard's sign-in form is tested in sign-in.test.ts).
// - `expectAccessible` runs axe-core in the page: no serious or critical violation may remain.
// - `screenshot` writes PNGs to AEGIS_SCREENSHOT_DIR (default artifacts/screenshots), the folder CI
//   keeps.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import type { ServerConfig } from '../../api/config.ts';
import { CHROMIUM, launchBrowser, signInOnPage } from './browser-launch.ts';
import { startTestServer, type TestServer } from './server.ts';
import { asUser } from './sessions.ts';
import { startSmtpServer, type SmtpCapture } from './smtp.ts';

export { CHROMIUM, launchBrowser };

const required = process.env.AEGIS_REQUIRE_BROWSER === '1';

/** `describe` for browser suites: runs where Chromium is, fails (never skips) where CI requires it. */
export const browserSuite: typeof describe = (required || existsSync(CHROMIUM) ? describe : describe.skip) as typeof describe;

export const WIDE = { width: 1280, height: 900 } as const;
export const NARROW = { width: 390, height: 844 } as const;

export interface Dashboard {
  t: TestServer;
  smtp: SmtpCapture;
  browser: Browser;
  /** A signed-in browser page for `email` (a new address owns a new organisation). */
  signIn(email: string, options?: SignInOptions): Promise<SignedIn>;
  /** A signed-out visitor's page: a fresh context, no cookie. */
  visitor(): Promise<Page>;
  close(): Promise<void>;
}

export interface SignInOptions {
  viewport?: { width: number; height: number };
  colorScheme?: 'light' | 'dark';
  /** Join the organisation of `inviter` with this role instead of owning a new one. */
  role?: 'admin' | 'member' | 'viewer';
  inviter?: SignedIn;
}

export interface SignedIn {
  email: string;
  cookie: string;
  context: BrowserContext;
  page: Page;
  /** An API call as this person (session cookie, same-origin), for setting up data. */
  call<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T; text: string }>;
}

export async function startDashboard(overrides: Partial<ServerConfig> = {}): Promise<Dashboard> {
  const smtp = await startSmtpServer();
  const t = await startTestServer({ smtpUrl: smtp.url, ...overrides });
  const browser = await launchBrowser();
  const contexts: BrowserContext[] = [];
  const dashboard: Dashboard = {
    t,
    smtp,
    browser,
    async signIn(email, options = {}) {
      if (options.role) {
        if (!options.inviter) throw new Error('signIn with a role needs the inviter');
        const invited = await options.inviter.call('POST', '/api/v1/orgs/current/invite', { email, role: options.role });
        if (invited.status >= 300) throw new Error(`invite ${email}: ${invited.status} ${invited.text}`);
      }
      const context = await browser.newContext({ viewport: options.viewport ?? WIDE, colorScheme: options.colorScheme ?? 'light', baseURL: t.url });
      contexts.push(context);
      const page = await context.newPage();
      const cookie = await signInOnPage(page, t.url, smtp, email);
      const call: SignedIn['call'] = async (method, path, body) => {
        const res = await asUser(t, cookie, method, path, body === undefined ? {} : { body });
        return { status: res.status, body: res.body, text: res.text };
      };
      return { email, cookie, context, page, call };
    },
    async visitor() {
      const context = await browser.newContext({ baseURL: t.url, viewport: WIDE });
      contexts.push(context);
      return context.newPage();
    },
    async close() {
      // Chromium on a loaded CI machine has been seen to leave a close unanswered past the hook's
      // minute: the browser is given a bounded time, and the playwright driver ends it with the
      // process if it has not gone by then; the server and the mail capture still close.
      await settledWithin(BROWSER_CLOSE_MS, 'closing Chromium', (async () => {
        for (const context of contexts) await context.close().catch(() => undefined);
        await browser.close().catch(() => undefined);
      })());
      await t.close();
      await smtp.close();
    },
  };
  return dashboard;
}

const BROWSER_CLOSE_MS = 20_000;

/** Waits for `work` at most `ms`, then goes on with a warning (the work is left to finish or not). */
async function settledWithin(ms: number, what: string, work: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      console.warn(`${what} took longer than ${ms} ms; going on without it`);
      resolve();
    }, ms);
  });
  await Promise.race([work, late]).finally(() => clearTimeout(timer));
}

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** axe-core over the page as it is now: fails on any serious or critical violation. */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  // Injected through the DevTools protocol's evaluation, which the page's CSP does not govern.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  });
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious.map((v) => `${label}: ${v.id} (${v.impact}) ${v.help} at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
}

const SCREENSHOT_DIR = resolve(process.env.AEGIS_SCREENSHOT_DIR ?? 'artifacts/screenshots');

/** A full-page PNG named `<name>.png` in the screenshots folder. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name.replace(/[^a-z0-9-]+/gi, '-')}.png`), fullPage: true });
}

/**
 * Visits `path`, waits for its h1, and checks it at both widths and in both themes for axe
 * violations, with a screenshot of each. The page is left at the wide light layout. `ready` replaces
 * the wait for the network to go idle.
 */
export async function checkPage(signedIn: SignedIn, path: string, name: string, heading: string | RegExp, options: { ready?: (page: Page) => Promise<unknown> } = {}): Promise<void> {
  const { page } = signedIn;
  for (const [viewport, scheme, suffix] of [[NARROW, 'dark', '390-dark'], [WIDE, 'light', '1280']] as const) {
    await page.setViewportSize(viewport);
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(path);
    await page.getByRole('heading', { level: 1, name: heading }).first().waitFor();
    // A page holding a stream open never goes network-idle: it says itself when it is ready.
    await (options.ready ? options.ready(page) : page.waitForLoadState('networkidle'));
    await expectAccessible(page, `${name} at ${suffix}`);
    await screenshot(page, `${name}-${suffix}`);
  }
}

/** The text of the element that has the keyboard focus (the tests have no DOM types). */
export function focusedText(page: Page): Promise<string | null> {
  return page.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string | null } | null } }).document.activeElement?.textContent ?? null);
}

/** Fails the test on any CSP violation or uncaught error the page reports. */
export function watchConsole(page: Page, options: { everything?: boolean } = {}): string[] {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && (options.everything || /Content Security Policy|Refused to/i.test(message.text()))) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  if (options.everything) {
    // Signed-out pages promise a clean console: no request of theirs fails or is refused either.
    page.on('requestfailed', (req) => problems.push(`request failed: ${req.method()} ${req.url()} (${req.failure()?.errorText ?? '?'})`));
    page.on('response', (res) => {
      if (res.status() >= 400) problems.push(`refused: ${res.request().method()} ${res.url()} → ${res.status()}`);
    });
  }
  return problems;
}
