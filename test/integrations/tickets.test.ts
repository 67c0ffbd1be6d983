// Tickets from findings, end to end, for each tracker: a real server with its worker, findings from
// a real secrets scan of a git repository on disk, the tracker played by its stand-in
// (test/support/providers). A ticket is created by a job (once, even after a rate limit), a second
// request is a 409 with the link, closing it at the tracker resolves the finding through the signed
// webhook without Aegis echoing a close back, and resolving a finding in Aegis (triage or
// verify-fix) closes its ticket with a comment.
import { execFileSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProviderSettings } from '../../api/integrations/providers/settings.ts';
import type { ProviderSettings } from '../../api/integrations/providers/settings.ts';
import { eventually } from '../support/gateway.ts';
import { startGithubStandIn } from '../support/providers/github/index.ts';
import { startJiraStandIn } from '../support/providers/jira.ts';
import { startLinearStandIn } from '../support/providers/linear.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

interface Recorded {
  method: string;
  path: string;
  body: unknown;
}

/** What the test needs of a tracker's stand-in, whichever it is. */
interface Tracker {
  name: 'jira' | 'linear' | 'github';
  settings: ProviderSettings;
  requests: Recorded[];
  rejected: string[];
  /** The `project` of POST …/ticket. */
  project: string;
  /** A project the tracker does not have. */
  unknownProject: string;
  /** Someone tickets can be assigned to, as the tracker names them. */
  assignee: string;
  assigneeOf(ticket: Ticket): string | null;
  connectBody(): Record<string, unknown>;
  setWebhook(url: string, secret: string): void;
  failNext(count: number, status: number, headers?: Record<string, string>): void;
  /** Issues at the tracker that mention `text` (the finding's id is in each description). */
  issuesMentioning(text: string): number;
  /** Closes (or reopens) the ticket at the tracker as a person would; resolves to the status Aegis answered its webhook with. */
  setClosed(ticket: Ticket, closed: boolean): Promise<number | null>;
  isClosed(ticket: Ticket): boolean;
  comments(ticket: Ticket): number;
  /** Requests that change something at the tracker (creating, commenting, transitioning). */
  writes(): Recorded[];
  close(): Promise<void>;
}

interface Ticket {
  object: 'ticket';
  vulnerability_id: string;
  connection: string | null;
  provider: string;
  state: 'creating' | 'open' | 'closed' | 'failed';
  key: string | null;
  url: string | null;
  external_id: string | null;
  error: string | null;
}

interface Finding {
  id: string;
  status: string;
  resolution: string | null;
  location: { path: string };
  ticket?: { provider: string; key: string | null; url: string | null; state: string } | null;
}

const json = (body: unknown): string => (typeof body === 'string' ? body : JSON.stringify(body ?? null));

async function jiraTracker(): Promise<Tracker> {
  const jira = await startJiraStandIn({ projects: ['SEC'] });
  const issueOf = (t: Ticket) => {
    const issue = jira.issues.get(t.external_id ?? '') ?? [...jira.issues.values()].find((i) => i.key === t.key);
    if (!issue) throw new Error(`no Jira issue ${t.key}`);
    return issue;
  };
  return {
    name: 'jira',
    settings: jira.settings,
    requests: jira.requests,
    rejected: jira.rejected,
    project: 'SEC',
    unknownProject: 'NOPE',
    assignee: jira.account.accountId,
    assigneeOf: (t) => issueOf(t).assignee,
    connectBody: () => ({ ...jira.issueToken(), url: jira.url }),
    setWebhook: (url, secret) => jira.setWebhook(url, secret),
    failNext: (count, status, headers) => jira.failNext(count, status, headers),
    issuesMentioning: (text) => [...jira.issues.values()].filter((i) => json(i.description).includes(text)).length,
    setClosed: (t, closed) => jira.transitionIssue(t.key!, closed ? 'Done' : 'To Do'),
    isClosed: (t) => issueOf(t).status.name === 'Done',
    comments: (t) => issueOf(t).comments.length,
    writes: () => jira.requests.filter((r) => r.method !== 'GET' && !r.path.includes('/search')),
    close: () => jira.close(),
  };
}

async function linearTracker(): Promise<Tracker> {
  const linear = await startLinearStandIn({ teams: ['ENG'] });
  const issueOf = (t: Ticket) => {
    const issue = linear.issues.get(t.external_id ?? '') ?? [...linear.issues.values()].find((i) => i.identifier === t.key);
    if (!issue) throw new Error(`no Linear issue ${t.key}`);
    return issue;
  };
  // GraphQL: every call is a POST; the mutations are the writes.
  const isMutation = (r: Recorded) => r.path === '/graphql' && /^\s*mutation\b/.test(String((r.body as { query?: unknown } | null)?.query ?? ''));
  return {
    name: 'linear',
    settings: linear.settings,
    requests: linear.requests,
    rejected: linear.rejected,
    project: 'ENG',
    unknownProject: 'NOPE',
    assignee: linear.viewer.id,
    assigneeOf: (t) => issueOf(t).assigneeId,
    connectBody: () => ({ token: linear.issueToken() }),
    setWebhook: (url, secret) => linear.setWebhook(url, secret),
    failNext: (count, status, headers) => linear.failNext(count, status, headers),
    issuesMentioning: (text) => [...linear.issues.values()].filter((i) => i.description.includes(text)).length,
    setClosed: (t, closed) => linear.setIssueState(issueOf(t).identifier, closed ? 'Done' : 'Todo'),
    isClosed: (t) => ['Done', 'Canceled'].includes(linear.stateOf(issueOf(t).identifier)),
    comments: (t) => issueOf(t).comments.length,
    writes: () => linear.requests.filter(isMutation),
    close: () => linear.close(),
  };
}

async function githubTracker(): Promise<Tracker> {
  const github = await startGithubStandIn();
  await github.createRepository('acme', 'app', { 'README.md': '# app\n' });
  const issueOf = (t: Ticket) => {
    const number = Number(/#(\d+)$/.exec(t.key ?? '')?.[1]);
    const issue = github.issueOf('acme/app', number);
    if (!issue) throw new Error(`no GitHub issue ${t.key}`);
    return issue;
  };
  return {
    name: 'github',
    settings: github.settings,
    requests: github.requests,
    rejected: github.rejected,
    project: 'acme/app',
    // Not `owner/repo` (the stand-in files issues in any repository, so a missing one is no refusal there).
    unknownProject: 'acme',
    assignee: github.user.login,
    assigneeOf: (t) => issueOf(t).assignees[0] ?? null,
    connectBody: () => ({ token: github.issueToken() }),
    setWebhook: (url, secret) => github.setWebhook(url, secret),
    failNext: (count, status, headers) => github.failNext(count, status, headers),
    issuesMentioning: (text) => github.issuesOf('acme/app').filter((i) => (i.body ?? '').includes(text)).length,
    setClosed: async (t, closed) => (await github.setIssueState('acme/app', issueOf(t).number, closed ? 'closed' : 'open'))?.status ?? null,
    isClosed: (t) => issueOf(t).state === 'closed',
    comments: (t) => issueOf(t).comments.length,
    writes: () => github.requests.filter((r) => r.method !== 'GET'),
    close: () => github.close(),
  };
}

let t: TestServer;
let repo: string;
const trackers = new Map<Tracker['name'], Tracker>();
const connections = new Map<Tracker['name'], string>();
/** Findings of the first scan by the directory they are in (one directory per tracker and purpose). */
const findingsIn = new Map<string, Finding[]>();

const git = (...args: string[]) => execFileSync('git', ['-C', repo, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { stdio: 'pipe' }).toString();
const PLANTED = 'test/fixtures/scanners/secrets/repo/src/github.js';
const NAMES = ['jira', 'linear', 'github'] as const;
/** `keep`: findings tickets are made for; `drop`: the file verify-fix finds removed. */
const PARTS = ['keep', 'drop'] as const;

beforeAll(async () => {
  trackers.set('jira', await jiraTracker());
  trackers.set('linear', await linearTracker());
  trackers.set('github', await githubTracker());
  const base = loadProviderSettings({});
  t = await startTestServer({
    providers: { ...base, jira: trackers.get('jira')!.settings, linear: trackers.get('linear')!.settings, github: trackers.get('github')!.settings },
    allowLocalSources: true,
    allowPrivateTargets: true,
    rateLimitPerMinute: 100_000,
  });

  repo = await mkdtemp(join(tmpdir(), 'aegis-tickets-repo-'));
  for (const name of NAMES) {
    for (const part of PARTS) {
      await mkdir(join(repo, name, part), { recursive: true });
      await cp(PLANTED, join(repo, name, part, 'github.js'));
    }
  }
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'leaked tokens');
  const started = await t.call('POST', '/api/v1/secrets/scans', { body: { target: `file://${repo}` } });
  expect(started.status, started.text).toBe(202);
  let status = '';
  await eventually(async () => {
    status = (await t.call('GET', `/api/v1/scans/${started.body.id}`)).body.status;
    return ['completed', 'failed', 'canceled'].includes(status);
  }, 90_000, 100);
  expect(status).toBe('completed');
  const found = (await t.call('GET', `/api/v1/vulnerabilities?scan_id=${started.body.id}&limit=200`)).body.data as Finding[];
  for (const f of found) {
    const dir = f.location.path.split('/').slice(0, 2).join('/');
    findingsIn.set(dir, [...(findingsIn.get(dir) ?? []), f]);
  }
  for (const name of NAMES) for (const part of PARTS) expect(findingsIn.get(`${name}/${part}`)?.length ?? 0, `${name}/${part}`).toBeGreaterThanOrEqual(5);

  for (const [name, tracker] of trackers) {
    const connected = await t.call('POST', `/api/v1/integrations/${name}/connect`, { body: tracker.connectBody() });
    expect(connected.status, connected.text).toBe(201);
    expect(connected.body.status).toBe('active');
    tracker.setWebhook(connected.body.webhook.url, connected.body.webhook.secret);
    connections.set(name, connected.body.id);
  }
}, 180_000);

afterAll(async () => {
  await t?.close();
  for (const tracker of trackers.values()) await tracker.close();
  if (repo) await rm(repo, { recursive: true, force: true });
});

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function requestTicket(name: Tracker['name'], findingId: string, extra: Record<string, unknown> = {}) {
  return t.call('POST', `/api/v1/vulnerabilities/${findingId}/ticket`, { body: { connection: connections.get(name), project: trackers.get(name)!.project, ...extra } });
}

async function ticketOf(findingId: string): Promise<Ticket> {
  const res = await t.call('GET', `/api/v1/vulnerabilities/${findingId}/ticket`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Polls the ticket until it is in `state` (failing at once on `failed`). */
async function ticketIn(findingId: string, state: Ticket['state'], timeoutMs = 20_000): Promise<Ticket> {
  let ticket = await ticketOf(findingId);
  await eventually(async () => {
    ticket = await ticketOf(findingId);
    if (ticket.state === 'failed' && state !== 'failed') throw new Error(`ticket failed: ${ticket.error}`);
    return ticket.state === state;
  }, timeoutMs, 100);
  return ticket;
}

/** `ticket.close` jobs ever queued for a finding (read from the server's database). */
async function closeJobsOf(findingId: string): Promise<number> {
  const jobs = await t.server.database.db.selectFrom('jobs').select('payload').where('kind', '=', 'ticket.close').execute();
  return jobs.filter((j) => (j.payload as { vulnerability_id?: unknown }).vulnerability_id === findingId).length;
}

async function finding(id: string): Promise<Finding> {
  return (await t.call('GET', `/api/v1/vulnerabilities/${id}`)).body;
}

async function openTicket(name: Tracker['name'], findingId: string, extra: Record<string, unknown> = {}): Promise<Ticket> {
  const res = await requestTicket(name, findingId, { labels: ['security'], ...extra });
  expect(res.status, res.text).toBe(202);
  expect(res.body).toMatchObject({ object: 'ticket', vulnerability_id: findingId, connection: connections.get(name), provider: name, state: 'creating' });
  return ticketIn(findingId, 'open');
}

describe('requests', () => {
  it('refuse an unknown finding (404) and an unknown connection (422)', async () => {
    const unknownFinding = await requestTicket('jira', 'vuln_doesnotexist');
    expect(unknownFinding.status).toBe(404);
    const f = findingsIn.get('jira/keep')![3]!;
    const unknownConnection = await t.call('POST', `/api/v1/vulnerabilities/${f.id}/ticket`, { body: { connection: 'int_nope', project: 'SEC' } });
    expect(unknownConnection.status, unknownConnection.text).toBe(422);
    expect(unknownConnection.body.error.code).toBe('validation_failed');
    expect(unknownConnection.body.error.message).toMatch(/int_nope/);
    const none = await t.call('GET', `/api/v1/vulnerabilities/${f.id}/ticket`);
    expect(none.status).toBe(404);
  });
});

describe.each(NAMES)('tickets in %s', (name) => {
  const tracker = () => trackers.get(name)!;
  const keep = (i: number) => findingsIn.get(`${name}/keep`)![i]!;

  it('are created once by a job; a second request is a 409 with the link; closing at the tracker resolves the finding without an echo', async () => {
    const f = keep(0);
    const ticket = await openTicket(name, f.id, { assignee: tracker().assignee });
    expect(tracker().assigneeOf(ticket)).toBe(tracker().assignee);
    expect(ticket.key).toBeTruthy();
    expect(ticket.url).toMatch(/^https?:\/\//);
    expect(ticket.external_id).toBeTruthy();
    expect(tracker().issuesMentioning(f.id)).toBe(1);
    expect((await finding(f.id)).ticket).toMatchObject({ provider: name, key: ticket.key, url: ticket.url, state: 'open' });

    const again = await requestTicket(name, f.id);
    expect(again.status, again.text).toBe(409);
    expect(again.body.error.code).toBe('conflict');
    expect(again.body.error.message).toContain(ticket.url);
    expect(again.body.error.details.ticket).toMatchObject({ key: ticket.key, url: ticket.url, state: 'open' });

    const requested = (await t.call('GET', `/api/v1/audit-log?action=vulnerability.ticket_requested&limit=100`)).body.data as { target: { id: string } }[];
    expect(requested.some((a) => a.target.id === f.id)).toBe(true);

    const writesBefore = tracker().writes().length;
    expect(await tracker().setClosed(ticket, true)).toBe(200);
    const resolved = await finding(f.id);
    expect(resolved).toMatchObject({ status: 'resolved', resolution: 'manual' });
    const bySync = (await t.call('GET', `/api/v1/audit-log?actor=${encodeURIComponent(`integration:${connections.get(name)}`)}`)).body.data as { action: string; target: { id: string } }[];
    expect(bySync.find((a) => a.target.id === f.id)).toMatchObject({ action: 'vulnerability.updated', actor: { type: 'system' } });
    expect((await ticketOf(f.id)).state).toBe('closed');
    // An echo would be a `ticket.close` job: none was queued, and (given the worker time) nothing was written.
    expect(await closeJobsOf(f.id)).toBe(0);
    await pause(1_500);
    expect(tracker().writes().slice(writesBefore)).toEqual([]);

    // The same delivery content again changes nothing.
    expect(await tracker().setClosed(ticket, true)).toBe(200);
    expect((await finding(f.id)).status).toBe('resolved');

    // Reopened at the tracker: the finding is open again, still without a write back.
    expect(await tracker().setClosed(ticket, false)).toBe(200);
    expect(await finding(f.id)).toMatchObject({ status: 'open', resolution: null });
    expect((await ticketOf(f.id)).state).toBe('open');
    await pause(500);
    expect(await closeJobsOf(f.id)).toBe(0);
    expect(tracker().writes().slice(writesBefore)).toEqual([]);
    expect(tracker().rejected).toEqual([]);
  }, 60_000);

  it('are closed with a comment when the finding is resolved in Aegis', async () => {
    const f = keep(1);
    const ticket = await openTicket(name, f.id);
    const writesBefore = tracker().writes().length;
    const patched = await t.call('PATCH', `/api/v1/vulnerabilities/${f.id}`, { body: { status: 'resolved' } });
    expect(patched.status, patched.text).toBe(200);
    await ticketIn(f.id, 'closed');
    expect(await closeJobsOf(f.id)).toBe(1);
    // What the no-echo checks count does see Aegis's writes.
    expect(tracker().writes().length).toBeGreaterThan(writesBefore);
    expect(tracker().isClosed(ticket)).toBe(true);
    expect(tracker().comments(ticket)).toBe(1);
    expect((await finding(f.id)).ticket).toMatchObject({ state: 'closed' });
    // The tracker's own webhook about that close changes nothing in Aegis.
    expect(await tracker().setClosed(ticket, true)).toBe(200);
    expect(await finding(f.id)).toMatchObject({ status: 'resolved', resolution: 'manual' });
    expect(tracker().comments(ticket)).toBe(1);
    expect(tracker().rejected).toEqual([]);
  }, 60_000);

  it('are closed when verify-fix finds the problem gone', async () => {
    const f = findingsIn.get(`${name}/drop`)![0]!;
    const ticket = await openTicket(name, f.id);
    await rm(join(repo, name, 'drop', 'github.js'));
    git('commit', '-q', '-am', `remove ${name}'s leaked tokens`);
    const verify = await t.call('POST', `/api/v1/vulnerabilities/${f.id}/verify`);
    expect(verify.status, verify.text).toBe(202);
    await eventually(async () => (await finding(f.id)).status === 'resolved', 60_000, 200);
    expect((await finding(f.id)).resolution).toBe('verified');
    await ticketIn(f.id, 'closed');
    expect(tracker().isClosed(ticket)).toBe(true);
    expect(tracker().comments(ticket)).toBe(1);
    expect(tracker().rejected).toEqual([]);
  }, 90_000);

  it('fail with the tracker’s reason when it refuses, and may be requested again', async () => {
    const f = keep(3);
    const refused = await requestTicket(name, f.id, { project: tracker().unknownProject });
    expect(refused.status, refused.text).toBe(202);
    const failed = await ticketIn(f.id, 'failed');
    expect(failed.error).toBeTruthy();
    expect(failed.key).toBeNull();
    expect((await finding(f.id)).ticket).toMatchObject({ provider: name, state: 'failed' });
    const again = await requestTicket(name, f.id);
    expect(again.status, again.text).toBe(202);
    expect(again.body).toMatchObject({ state: 'creating', error: null });
    const ticket = await ticketIn(f.id, 'open');
    expect(ticket.error).toBeNull();
    expect(tracker().issuesMentioning(f.id)).toBe(1);
    expect(tracker().rejected).toEqual([]);
  }, 60_000);

  it('are created exactly once after a rate limit (Retry-After honoured)', async () => {
    const f = keep(2);
    tracker().failNext(1, 429, { 'retry-after': '1' });
    const requested = Date.now();
    const res = await requestTicket(name, f.id);
    expect(res.status, res.text).toBe(202);
    const ticket = await ticketIn(f.id, 'open', 30_000);
    expect(Date.now() - requested).toBeGreaterThanOrEqual(900);
    expect(ticket.error).toBeNull();
    expect(tracker().issuesMentioning(f.id)).toBe(1);
    expect(tracker().rejected).toEqual([]);
  }, 60_000);
});
