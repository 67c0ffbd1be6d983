// npm run bench:web — the dashboard's weight and speed, measured in Chromium against a real server
// (in process, embedded database, the built dashboard as `npm start` serves it).
//
//   1. Bundle: the JavaScript a first visit to the overview transfers (compressed, as served), and
//      the whole build's JavaScript compressed, against the 300 KB budget.
//   2. Time to interactive of the overview on loopback, Lighthouse-style: the later of first
//      contentful paint, DOMContentLoaded and the end of the last long task (≥ 50 ms) before the
//      page stays quiet; median of BENCH_LOADS cold loads (a new browser context each: no cache).
//      Budget 1.5 s.
//   3. The findings page with 10 000 findings in the organisation (seeded by a real secrets scan of
//      a generated repository): time to first render of its rows, cold. Baseline in the same run:
//      the same page for an organisation with 100 findings — a ratio near 1 shows the page reads
//      one page from the server, not the collection — and the API's own first page as a floor.
//
//   npm run bench:web   BENCH_LOADS=7  BENCH_FINDINGS=10000
import { execFileSync } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildWeb, webStaleInput } from '../build/web.mjs';
import { loadConfig } from '../api/config.ts';
import { startServer } from '../api/server.ts';
import { CHROMIUM, launchBrowser, SESSION_COOKIE, signInOnPage } from '../test/support/browser-launch.ts';
import { startSmtpServer, type SmtpCapture } from '../test/support/smtp.ts';

const JS_BUDGET_BYTES = 300 * 1024;
const TTI_BUDGET_MS = 1500;
const loads = Number(process.env.BENCH_LOADS ?? 7);
const findingsWanted = Number(process.env.BENCH_FINDINGS ?? 10_000);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/** A git repository of `count` files, each holding one distinct (fake) live Stripe key. */
async function repositoryWithSecrets(count: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'aegis-bench-web-'));
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  for (let folder = 0; folder * 500 < count; folder++) {
    await mkdir(join(dir, `svc${folder}`));
    for (let i = folder * 500; i < Math.min(count, (folder + 1) * 500); i++) {
      let key = '';
      for (let j = 0; j < 24; j++) key += alphabet[Math.floor(Math.random() * alphabet.length)];
      await writeFile(join(dir, `svc${folder}`, `client${i}.js`), `export const stripe = "sk_live_${key}";\n`);
    }
  }
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('add', '.');
  git('-c', 'user.name=bench', '-c', 'user.email=bench@example.com', 'commit', '-qm', 'secrets');
  return dir;
}

interface Person {
  email: string;
  cookie: string;
  /** A browser context signed in as the person (the cookie is __Host-: only the server sets it). */
  context: BrowserContext;
}

async function signIn(url: string, smtp: SmtpCapture, browser: Browser, email: string): Promise<Person> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript(() => {
    const w = globalThis as unknown as { __longTasks: Array<{ end: number }>; __seen: Record<string, number> };
    w.__longTasks = [];
    // When each landmark first appears, stamped by the page itself: polling from outside (as
    // Playwright's waitFor does) would add its own delay to the measure.
    w.__seen = {};
    const page = globalThis as unknown as { document: { querySelector(s: string): unknown }; MutationObserver: new (cb: () => void) => { observe(target: unknown, o: { childList: boolean; subtree: boolean }): void }; performance: { now(): number } };
    const LANDMARKS = { row: 'main table tbody tr', section: 'main h2' } as const;
    new page.MutationObserver(() => {
      for (const [name, selector] of Object.entries(LANDMARKS)) if (w.__seen[name] === undefined && page.document.querySelector(selector)) w.__seen[name] = page.performance.now();
    }).observe(page.document, { childList: true, subtree: true });
    // Runs in the page (browser types): long tasks are a browser-only entry type.
    const Observer = (globalThis as unknown as { PerformanceObserver: new (cb: (list: { getEntries(): Array<{ startTime: number; duration: number }> }) => void) => { observe(o: { type: string; buffered: boolean }): void } }).PerformanceObserver;
    new Observer((list) => {
      for (const entry of list.getEntries()) w.__longTasks.push({ end: entry.startTime + entry.duration });
    }).observe({ type: 'longtask', buffered: true });
  });
  const page = await context.newPage();
  const cookie = await signInOnPage(page, url, smtp, email);
  await page.close();
  return { email, cookie, context };
}

async function apiAs<T>(url: string, person: Person, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(url + path, {
    method,
    headers: { cookie: `${SESSION_COOKIE}=${person.cookie}`, origin: url, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function seedFindings(url: string, person: Person, count: number): Promise<number> {
  const repo = await repositoryWithSecrets(count);
  try {
    const scan = await apiAs<{ id: string }>(url, person, 'POST', '/api/v1/secrets/scans', { target: repo });
    for (;;) {
      const state = await apiAs<{ status: string; summary?: { total?: number } }>(url, person, 'GET', `/api/v1/scans/${scan.id}`);
      if (state.status === 'completed') break;
      if (state.status === 'failed' || state.status === 'canceled') throw new Error(`seeding scan ${state.status}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const page = await apiAs<{ data: unknown[] }>(url, person, 'GET', '/api/v1/vulnerabilities?limit=1');
    if (page.data.length === 0) throw new Error('the seeding scan found nothing');
    return count;
  } finally {
    await rm(repo, { recursive: true, force: true });
  }
}

/** A cold page: the person's context with the HTTP cache off, long tasks recorded from the start. */
async function coldPage(person: Person): Promise<{ page: Page; close(): Promise<void> }> {
  const page = await person.context.newPage();
  const devtools = await person.context.newCDPSession(page);
  await devtools.send('Network.setCacheDisabled', { cacheDisabled: true });
  return { page, close: () => page.close() };
}

/** The page's `performance`, as far as the bench reads it (the bench has no DOM types). */
interface PagePerformance {
  getEntriesByType(type: string): unknown[];
  getEntriesByName(name: string): Array<{ startTime: number }>;
}

interface OverviewLoad {
  scriptBytes: number;
  scripts: number;
  tti: number;
  /** Until its sections (the h2s, drawn once the overview's data has arrived) are on screen. */
  content: number;
}

async function loadOverview(url: string, person: Person): Promise<OverviewLoad> {
  const { page, close } = await coldPage(person);
  const sizes: Promise<number>[] = [];
  page.on('response', (response) => {
    if (response.request().resourceType() !== 'script') return;
    // Transferred size: the compressed body the server sent (static files carry Content-Length).
    sizes.push(response.headerValue('content-length').then((v) => Number(v ?? 0)));
  });
  await page.goto(`${url}/`);
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  await page.locator('main h2').first().waitFor();
  const content = await page.evaluate(() => (globalThis as unknown as { __seen: Record<string, number> }).__seen.section ?? NaN);
  await page.waitForLoadState('networkidle');
  // Quiet window: Lighthouse waits for 5 s without long tasks; on loopback 1 s shows the same.
  await page.waitForTimeout(1000);
  const tti = await page.evaluate(() => {
    const w = globalThis as unknown as { __longTasks: Array<{ end: number }>; performance: PagePerformance };
    const nav = w.performance.getEntriesByType('navigation')[0] as { domContentLoadedEventEnd: number };
    const fcp = w.performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? 0;
    const lastLongTask = Math.max(0, ...w.__longTasks.map((t) => t.end));
    return Math.max(fcp, nav.domContentLoadedEventEnd, lastLongTask);
  });
  const bytes = await Promise.all(sizes);
  await close();
  return { scriptBytes: bytes.reduce((a, b) => a + b, 0), scripts: bytes.length, tti, content };
}

/** Cold load of /findings until its first row is on screen (ms since navigation start). */
async function findingsFirstRender(url: string, person: Person): Promise<{ ms: number; rows: number; apiBytes: number }> {
  const { page, close } = await coldPage(person);
  let apiBytes = 0;
  page.on('response', (response) => {
    if (new URL(response.url()).pathname.startsWith('/api/v1/vulnerabilities')) void response.body().then((b) => (apiBytes += b.length), () => undefined);
  });
  await page.goto(`${url}/findings`);
  await page.locator('main table tbody tr').first().waitFor();
  const ms = await page.evaluate(() => (globalThis as unknown as { __seen: Record<string, number> }).__seen.row ?? NaN);
  const rows = await page.locator('main table tbody tr').count();
  await page.waitForLoadState('networkidle');
  await close();
  return { ms, rows, apiBytes };
}

async function apiFirstPage(url: string, person: Person): Promise<number> {
  const started = performance.now();
  await apiAs(url, person, 'GET', '/api/v1/vulnerabilities?limit=50');
  return performance.now() - started;
}

async function main(): Promise<void> {
  if (webStaleInput() !== undefined) await buildWeb({ quiet: true });
  const dataDir = await mkdtemp(join(tmpdir(), 'aegis-bench-web-data-'));
  const smtp = await startSmtpServer();
  const server = await startServer({
    ...loadConfig({ host: '127.0.0.1', port: '0', dataDir }, {}),
    logLevel: 'silent',
    // New addresses sign in and get their own organisation, as on the hosted service.
    signup: 'open',
    smtpUrl: smtp.url,
    allowLocalSources: true,
    rateLimitPerMinute: 1e9,
    shieldEnabled: false,
    shieldPort: 0,
  });
  // localhost (not 127.0.0.1): Chromium keeps the Secure session cookie on localhost without TLS.
  const url = server.url.replace('127.0.0.1', 'localhost');
  const browser = await launchBrowser();
  try {
    console.log(`bench:web — Chromium at ${CHROMIUM}, embedded database, ${loads} cold loads per measure`);
    const big = await signIn(url, smtp, browser, 'bench-big@example.com');
    const small = await signIn(url, smtp, browser, 'bench-small@example.com');
    let started = performance.now();
    await seedFindings(url, big, findingsWanted);
    console.log(`seeded ${findingsWanted} findings by a secrets scan in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    started = performance.now();
    await seedFindings(url, small, 100);

    // 1 and 2: the overview.
    const overview: OverviewLoad[] = [];
    await loadOverview(url, big); // warm the server (first-use compilation), not the browser
    for (let i = 0; i < loads; i++) overview.push(await loadOverview(url, big));
    const scriptBytes = median(overview.map((o) => o.scriptBytes));
    const tti = median(overview.map((o) => o.tti));
    console.log('\n1. JavaScript of a first visit to the overview (compressed, as transferred)');
    console.log(`   ${kb(scriptBytes)} in ${overview[0]?.scripts} files — ${((scriptBytes / JS_BUDGET_BYTES) * 100).toFixed(0)}% of the ${kb(JS_BUDGET_BYTES)} budget ${scriptBytes <= JS_BUDGET_BYTES ? '(met)' : '(OVER)'}`);
    console.log('\n2. Time to interactive of the overview, loopback (median)');
    console.log(`   ${tti.toFixed(0)} ms (min ${Math.min(...overview.map((o) => o.tti)).toFixed(0)}, max ${Math.max(...overview.map((o) => o.tti)).toFixed(0)}) — budget ${TTI_BUDGET_MS} ms ${tti <= TTI_BUDGET_MS ? '(met)' : '(OVER)'}`);
    console.log(`   its data on screen: ${median(overview.map((o) => o.content)).toFixed(0)} ms`);

    // 3: the findings page, 10 000 against 100, alternating so both see the same machine state.
    const bigRuns: number[] = [];
    const smallRuns: number[] = [];
    const apiRuns: number[] = [];
    let rows = 0;
    let apiBytes = 0;
    await findingsFirstRender(url, big);
    for (let i = 0; i < loads; i++) {
      const b = await findingsFirstRender(url, big);
      bigRuns.push(b.ms);
      rows = b.rows;
      apiBytes = b.apiBytes;
      smallRuns.push((await findingsFirstRender(url, small)).ms);
      apiRuns.push(await apiFirstPage(url, big));
    }
    const bigMs = median(bigRuns);
    const smallMs = median(smallRuns);
    console.log(`\n3. Findings page, time to first render (median, cold)`);
    console.log(`   ${findingsWanted} findings: ${bigMs.toFixed(0)} ms, ${rows} rows rendered, ${kb(apiBytes)} of findings JSON loaded`);
    console.log(`   100 findings (baseline): ${smallMs.toFixed(0)} ms — ratio ${(bigMs / smallMs).toFixed(2)}× (≈1: one server page, not the collection)`);
    console.log(`   the API's first page alone: ${median(apiRuns).toFixed(1)} ms`);
  } finally {
    await browser.close();
    await server.close();
    await smtp.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
