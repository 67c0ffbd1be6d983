// Pull/merge-request checks end to end: a real server connected to a provider stand-in, the
// provider's signed webhook delivered to the connection's URL, and the check run (GitHub) or commit
// status (GitLab) and the one summary comment found at the stand-in afterwards. GitHub writes check
// runs only for GitHub Apps, so the GitHub connection is made through the OAuth flow (a GitHub App
// user token); a connection by personal access token reports a commit status instead.
// The repositories are private and real (git over smart HTTP), so the job clones through the
// connection's token; the base holds one finding already, the pull request adds new ones.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProviderSettings } from '../../api/integrations/providers/settings.ts';
import { startGithubStandIn, type GithubStandIn, type PullRequestEventInput } from '../support/providers/github/index.ts';
import { startGitlabStandIn, type GitlabStandIn } from '../support/providers/gitlab.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { joinDefaultOrganization } from '../support/people.ts';
import { SESSION_COOKIE } from '../support/sessions.ts';

const FIXTURES = 'test/fixtures/scanners/secrets/repo';
/** A live-looking Stripe key (critical): the finding the base already has. */
const STRIPE_LINE = readFileSync(`${FIXTURES}/.env`, 'utf8').split('\n').find((l) => l.startsWith('STRIPE_SECRET_KEY='))!;
/** A PKCS#8 private key (critical): what the first head adds. */
const PRIVATE_KEY = readFileSync(`${FIXTURES}/keys/server.key`, 'utf8');
/** A SendGrid key (critical): what the second head adds. */
const SENDGRID_LINE = readFileSync(`${FIXTURES}/.env`, 'utf8').split('\n').find((l) => l.startsWith('SENDGRID_API_KEY='))!;

const BASE_FILES = {
  'README.md': '# Orders\n',
  'config/app.env': `NODE_ENV=production\n${STRIPE_LINE}\n`,
  'src/index.js': "export const answer = () => 42;\n",
};

interface CheckRow {
  id: string;
  head_sha: string;
  status: string;
  conclusion: string | null;
  check_id: string | null;
  comment_id: string | null;
  summary: Record<string, unknown>;
  error: string | null;
}

async function waitFor<T>(what: string, read: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The row of the pull request once its check of `headSha` ended (completed or failed). */
function checkDone(server: TestServer, integrationId: string, headSha: string): Promise<CheckRow> {
  return waitFor(`the check of ${headSha}`, async () => {
    const row = await server.server.database.db.selectFrom('pull_request_checks').selectAll().where('integration_id', '=', integrationId).where('head_sha', '=', headSha).executeTakeFirst();
    return row && (row.status === 'completed' || row.status === 'failed') ? (row as unknown as CheckRow) : undefined;
  });
}

/** Connects GitHub through the OAuth flow (the stand-in approves at once) and sets a webhook secret. */
async function connectGithubApp(server: TestServer): Promise<{ id: string; webhook: { url: string; secret: string } }> {
  const started = await server.call('POST', '/api/v1/integrations/github/connect', { key: server.adminKey, body: {} });
  expect(started.status, started.text).toBe(201);
  const approved = await fetch(started.body.authorize_url, { redirect: 'manual' });
  expect(approved.status).toBe(302);
  // A flow started with a key completes in the browser of a signed-in admin of its organisation.
  const admin = await joinDefaultOrganization(server, `admin-${Date.now().toString(36)}@acme.example`, 'admin');
  const done = await fetch(approved.headers.get('location')!, { redirect: 'manual', headers: { cookie: `${SESSION_COOKIE}=${admin}` } });
  expect(done.status).toBe(303);
  const id: string = started.body.integration.id;
  const webhook = await server.call('POST', `/api/v1/integrations/${id}/webhook-secret`, { key: server.adminKey });
  expect(webhook.status, webhook.text).toBe(201);
  return { id, webhook: webhook.body };
}

describe('pull-request checks (GitHub)', () => {
  let github: GithubStandIn;
  let server: TestServer;
  let integration: { id: string; webhook: { url: string; secret: string } };

  beforeAll(async () => {
    github = await startGithubStandIn();
    server = await startTestServer({ providers: { ...loadProviderSettings({}), github: github.settings }, allowLocalSources: true, allowPrivateTargets: true });
    integration = await connectGithubApp(server);
    expect((await server.call('GET', `/api/v1/integrations/${integration.id}`, { key: server.adminKey })).body).toMatchObject({ auth_type: 'oauth', status: 'active' });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await github?.close();
  });

  /** Delivers a signed `pull_request` event for acme/<repo>#7; queued deliveries are answered 202, others 200. */
  const deliver = async (input: Omit<PullRequestEventInput, 'owner' | 'repo' | 'number' | 'headRef' | 'baseRef'> & { repo: string }) => {
    const sent = await github.sendPullRequestEvent(integration.webhook.url, integration.webhook.secret, { owner: 'acme', number: 7, headRef: 'feature', baseRef: 'main', ...input });
    expect([200, 202], sent.body).toContain(sent.status);
    return JSON.parse(sent.body) as { status: string };
  };

  it('annotates only the new finding, fails the check, and keeps one comment across pushes', async () => {
    const repo = await github.createRepository('acme', 'orders', BASE_FILES, { private: true });
    const base = repo.branches.get('main')!;
    const head1 = await github.commit('acme', 'orders', 'feature', { 'keys/server.key': PRIVATE_KEY });

    expect(await deliver({ repo: 'orders', action: 'opened', headSha: head1, baseSha: base })).toMatchObject({ status: 'queued' });
    const first = await checkDone(server, integration.id, head1);
    expect(first.error).toBeNull();
    expect(first).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(first.summary).toMatchObject({ new: 1, fixed: 0, unchanged: 1, new_by_severity: { critical: 1 } });

    const runs1 = github.checkRuns.filter((r) => r.headSha === head1);
    expect(runs1).toHaveLength(1);
    expect(runs1[0]).toMatchObject({ id: Number(first.check_id), name: 'Aegis', status: 'completed', conclusion: 'failure', title: '1 new finding (1 critical)' });
    // The base's Stripe key is not new: no annotation for it.
    expect(runs1[0]!.annotations).toEqual([
      expect.objectContaining({ path: 'keys/server.key', start_line: 1, annotation_level: 'failure', title: expect.stringMatching(/^private-key-pkcs8: /), message: expect.stringContaining('CWE-321') }),
    ]);
    expect(runs1[0]!.summary).toContain('| critical | `private-key-pkcs8`');
    const comments = () => github.comments.filter((c) => c.repository === 'acme/orders' && c.number === 7 && !c.deleted);
    expect(comments()).toHaveLength(1);
    expect(comments()[0]).toMatchObject({ id: Number(first.comment_id) });
    expect(comments()[0]!.body).toContain('1 new finding (1 critical)');
    expect(comments()[0]!.body).not.toContain('stripe-secret-key');

    // synchronize: a second secret. A new check run on the new head; the same comment, edited.
    const head2 = await github.commit('acme', 'orders', 'feature', { 'config/mail.env': `${SENDGRID_LINE}\n` });
    expect(await deliver({ repo: 'orders', action: 'synchronize', headSha: head2, baseSha: base })).toMatchObject({ status: 'queued' });
    const second = await checkDone(server, integration.id, head2);
    expect(second).toMatchObject({ id: first.id, status: 'completed', conclusion: 'failure', comment_id: first.comment_id });
    expect(second.check_id).not.toBe(first.check_id);
    const runs2 = github.checkRuns.filter((r) => r.headSha === head2);
    expect(runs2).toMatchObject([{ id: Number(second.check_id), status: 'completed', conclusion: 'failure', title: '2 new findings (1 critical, 1 high)' }]);
    expect(runs2[0]!.annotations.map((a) => [a.path, a.annotation_level]).sort()).toEqual([['config/mail.env', 'failure'], ['keys/server.key', 'failure']]);
    expect(comments()).toHaveLength(1);
    expect(comments()[0]!.body).toContain('2 new findings (1 critical, 1 high)');

    // A head that adds nothing new and removes the base's secret: success, one finding fixed.
    const head3 = await github.commit('acme', 'orders', 'feature', { 'keys/server.key': '# moved to the vault\n', 'config/mail.env': 'SENDGRID_API_KEY=${SENDGRID_API_KEY}\n', 'config/app.env': 'NODE_ENV=production\n' });
    expect(await deliver({ repo: 'orders', action: 'synchronize', headSha: head3, baseSha: base })).toMatchObject({ status: 'queued' });
    const third = await checkDone(server, integration.id, head3);
    expect(third).toMatchObject({ status: 'completed', conclusion: 'success', comment_id: first.comment_id });
    expect(third.summary).toMatchObject({ new: 0, fixed: 1 });
    expect(github.checkRuns.filter((r) => r.headSha === head3)).toMatchObject([{ status: 'completed', conclusion: 'success', title: 'No new findings', annotations: [] }]);
    expect(comments()).toHaveLength(1);
    expect(comments()[0]!.body).toContain('1 fixed in this pull request');
    expect(github.checkRuns).toHaveLength(3);
    // Check runs are what a GitHub App token may write: no commit status in their place.
    expect(github.commitStatuses).toEqual([]);
    expect(github.rejected).toEqual([]);
  }, 120_000);

  it('lists the checks of the connection', async () => {
    const page = await server.call('GET', `/api/v1/integrations/${integration.id}/pull-requests?limit=1`, { key: server.adminKey });
    expect(page.status, page.text).toBe(200);
    expect(page.body.data).toMatchObject([{ object: 'pull_request_check', integration_id: integration.id, repository: 'acme/orders', number: 7, status: 'completed', conclusion: 'success', summary: { new: 0, fixed: 1 } }]);
    const missing = await server.call('GET', '/api/v1/integrations/int_01aaaaaaaaaaaaaaaaaaaaaaaa/pull-requests', { key: server.adminKey });
    expect(missing.status).toBe(404);
  });

  it('ignores actions that are not pushes', async () => {
    const repo = github.repositories.get('acme/orders')!;
    const answer = await deliver({ repo: 'orders', action: 'labeled', headSha: repo.branches.get('feature')!, baseSha: repo.branches.get('main')! });
    expect(answer.status).toBe('ignored');
  });

  it('reports a commit status with the same pass/fail, and the comment, for a connection by personal access token', async () => {
    const pasted = await server.call('POST', '/api/v1/integrations/github/connect', { key: server.adminKey, body: { token: github.issueToken() } });
    expect(pasted.status, pasted.text).toBe(201);
    const pat: { id: string; webhook: { url: string; secret: string } } = pasted.body;
    const repo = await github.createRepository('acme', 'invoices', BASE_FILES, { private: true });
    const base = repo.branches.get('main')!;
    const head1 = await github.commit('acme', 'invoices', 'feature', { 'keys/server.key': PRIVATE_KEY });
    const send = (action: 'opened' | 'synchronize', headSha: string) => github.sendPullRequestEvent(pat.webhook.url, pat.webhook.secret, { owner: 'acme', repo: 'invoices', number: 3, headRef: 'feature', baseRef: 'main', action, headSha, baseSha: base });
    expect((await send('opened', head1)).status).toBe(202);
    const first = await checkDone(server, pat.id, head1);
    expect(first.error).toBeNull();
    expect(first).toMatchObject({ status: 'completed', conclusion: 'failure', check_id: 'status:Aegis' });
    // GitHub refuses check runs to personal access tokens: none was attempted, none exists.
    expect(github.requests.some((r) => r.path.startsWith('/repos/acme/invoices/check-runs'))).toBe(false);
    expect(github.checkRuns.filter((r) => r.repository === 'acme/invoices')).toEqual([]);
    expect(github.commitStatuses.filter((st) => st.sha === head1).map((st) => [st.context, st.state, st.description])).toEqual([
      ['Aegis', 'pending', 'Aegis: scanning'],
      ['Aegis', 'failure', '1 new finding (1 critical)'],
    ]);
    // The summary comment carries what annotations would have: the new finding, not the base's.
    const comments = () => github.comments.filter((c) => c.repository === 'acme/invoices' && c.number === 3 && !c.deleted);
    expect(comments()).toHaveLength(1);
    expect(comments()[0]!.body).toContain('private-key-pkcs8');
    expect(comments()[0]!.body).not.toContain('stripe-secret-key');

    // The next push: the new head passes, the same comment is edited.
    const head2 = await github.commit('acme', 'invoices', 'feature', { 'keys/server.key': '# moved to the vault\n' });
    expect((await send('synchronize', head2)).status).toBe(202);
    const second = await checkDone(server, pat.id, head2);
    expect(second).toMatchObject({ status: 'completed', conclusion: 'success', check_id: 'status:Aegis', comment_id: first.comment_id });
    expect(github.commitStatuses.filter((st) => st.sha === head2).at(-1)).toMatchObject({ context: 'Aegis', state: 'success', description: 'No new findings' });
    expect(comments()).toHaveLength(1);
    expect(comments()[0]!.body).toContain('No new findings');
    expect(github.rejected).toEqual([]);
  }, 120_000);
});

describe('merge-request checks (GitLab)', () => {
  let gitlab: GitlabStandIn;
  let server: TestServer;
  let integration: { id: string; webhook: { url: string; secret: string } };
  let gitlabToken: string;

  beforeAll(async () => {
    gitlab = await startGitlabStandIn();
    server = await startTestServer({ providers: { ...loadProviderSettings({}), gitlab: gitlab.settings }, allowLocalSources: true, allowPrivateTargets: true });
    gitlabToken = gitlab.issueToken();
    const connected = await server.call('POST', '/api/v1/integrations/gitlab/connect', { key: server.adminKey, body: { token: gitlabToken } });
    expect(connected.status, connected.text).toBe(201);
    integration = connected.body;
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await gitlab?.close();
  });

  it('sets a commit status and one summary note on the merge request, edited on the next push', async () => {
    await gitlab.createProject('acme/orders', BASE_FILES, { private: true });
    const head1 = await gitlab.commit('acme/orders', 'feature', { 'keys/server.key': PRIVATE_KEY });
    gitlab.openMergeRequest('acme/orders', { sourceBranch: 'feature' });

    const sent = await gitlab.sendMergeRequestEvent(integration.webhook.url, integration.webhook.secret, { project: 'acme/orders', iid: 1, action: 'open' });
    expect(sent.status, sent.body).toBe(202);
    expect(JSON.parse(sent.body)).toMatchObject({ status: 'queued' });

    const first = await checkDone(server, integration.id, head1);
    expect(first.error).toBeNull();
    expect(first).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(first.summary).toMatchObject({ new: 1, fixed: 0, unchanged: 1 });
    const status1 = gitlab.statuses.filter((s) => s.sha === head1);
    expect(status1).toHaveLength(1);
    expect(status1[0]).toMatchObject({ name: 'Aegis', status: 'failed', description: '1 new finding (1 critical)' });
    expect(gitlab.notes).toHaveLength(1);
    // GitLab shows no annotations: the note lists the new finding, not the base's.
    expect(gitlab.notes[0]!.body).toContain('private-key-pkcs8');
    expect(gitlab.notes[0]!.body).not.toContain('stripe-secret-key');

    // A push that adds nothing new (the base finding moved down a line): success, the same note edited.
    const head2 = await gitlab.commit('acme/orders', 'feature', { 'keys/server.key': '# removed\n', 'config/app.env': `# settings\n${BASE_FILES['config/app.env']}` });
    const update = await gitlab.sendMergeRequestEvent(integration.webhook.url, integration.webhook.secret, { project: 'acme/orders', iid: 1, action: 'update', oldrev: head1 });
    expect(update.status, update.body).toBe(202);
    const second = await checkDone(server, integration.id, head2);
    expect(second).toMatchObject({ id: first.id, status: 'completed', conclusion: 'success', comment_id: first.comment_id });
    expect(gitlab.statuses.filter((s) => s.sha === head2)).toMatchObject([{ name: 'Aegis', status: 'success', description: 'No new findings' }]);
    expect(gitlab.notes).toHaveLength(1);
    expect(gitlab.notes[0]!.body).toContain('No new findings');
    expect(gitlab.rejected).toEqual([]);
  }, 120_000);

  it('leaves a superseded head alone: no stale conclusion, the row and the note follow the newer head', async () => {
    await gitlab.createProject('acme/billing', BASE_FILES, { private: true });
    const older = await gitlab.commit('acme/billing', 'feature', { 'keys/server.key': PRIVATE_KEY });
    gitlab.openMergeRequest('acme/billing', { sourceBranch: 'feature' });
    const opened = await gitlab.sendMergeRequestEvent(integration.webhook.url, integration.webhook.secret, { project: 'acme/billing', iid: 1, action: 'open' });
    expect(opened.status, opened.body).toBe(202);
    // Pushed before the first check can have finished (it clones and scans two trees).
    const newer = await gitlab.commit('acme/billing', 'feature', { 'config/extra.env': `${SENDGRID_LINE}\n` });
    const updated = await gitlab.sendMergeRequestEvent(integration.webhook.url, integration.webhook.secret, { project: 'acme/billing', iid: 1, action: 'update', oldrev: older });
    expect(updated.status, updated.body).toBe(202);

    const row = await checkDone(server, integration.id, newer);
    expect(row).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(row.summary).toMatchObject({ new: 2 });
    const project = gitlab.statuses.filter((s) => s.sha === older || s.sha === newer);
    expect(project.filter((s) => s.sha === newer)).toMatchObject([{ status: 'failed', description: '2 new findings (1 critical, 1 high)' }]);
    // The older head's job either saw the newer head before starting (no status) or closed its own status as superseded.
    const olderStatuses = project.filter((s) => s.sha === older);
    expect(olderStatuses.every((s) => s.description === 'Superseded by a newer commit'), JSON.stringify(olderStatuses)).toBe(true);
    const notes = gitlab.notes.filter((n) => n.projectId === (project[0]?.projectId ?? -1));
    expect(notes).toHaveLength(1);
    expect(notes[0]!.body).toContain('sendgrid-api-key');
    expect(gitlab.rejected).toEqual([]);
  }, 120_000);

  it('waits as long as a rate limit asks, then completes', async () => {
    await gitlab.createProject('acme/limits', BASE_FILES, { private: true });
    const head = await gitlab.commit('acme/limits', 'feature', { 'src/more.js': 'export const more = 1;\n' });
    gitlab.openMergeRequest('acme/limits', { sourceBranch: 'feature' });
    gitlab.failNext(1, 429, { 'retry-after': '1' });
    const started = Date.now();
    const sent = await gitlab.sendMergeRequestEvent(integration.webhook.url, integration.webhook.secret, { project: 'acme/limits', iid: 1, action: 'open' });
    expect(sent.status, sent.body).toBe(202);
    const row = await checkDone(server, integration.id, head);
    expect(row).toMatchObject({ status: 'completed', conclusion: 'success' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(gitlab.statuses.filter((s) => s.sha === head)).toMatchObject([{ status: 'success', description: 'No new findings' }]);
    const job = await server.server.database.db.selectFrom('jobs').select(['attempts', 'state']).where('kind', '=', 'pull_request.check').where('dedupe_key', 'like', `%:${head}`).executeTakeFirstOrThrow();
    expect(job).toMatchObject({ attempts: 2, state: 'completed' });
  }, 120_000);

  it('ignores merge requests while checks are off, and redeliveries of a head already checked', async () => {
    await gitlab.createProject('acme/quiet', BASE_FILES, { private: true });
    const head = await gitlab.commit('acme/quiet', 'feature', { 'keys/server.key': PRIVATE_KEY });
    gitlab.openMergeRequest('acme/quiet', { sourceBranch: 'feature' });
    const off = await server.call('PATCH', `/api/v1/integrations/${integration.id}`, { key: server.adminKey, body: { settings: { pull_requests: { enabled: false } } } });
    expect(off.status, off.text).toBe(200);
    const ignored = await gitlab.sendMergeRequestEvent(integration.webhook.url, integration.webhook.secret, { project: 'acme/quiet', iid: 1, action: 'open' });
    expect(JSON.parse(ignored.body)).toMatchObject({ status: 'ignored' });
    const on = await server.call('PATCH', `/api/v1/integrations/${integration.id}`, { key: server.adminKey, body: { settings: { pull_requests: { enabled: true, scan_types: ['secrets'], fail_on: 'critical' } } } });
    expect(on.status, on.text).toBe(200);
    const queued = await gitlab.sendMergeRequestEvent(integration.webhook.url, integration.webhook.secret, { project: 'acme/quiet', iid: 1, action: 'reopen' });
    expect(JSON.parse(queued.body)).toMatchObject({ status: 'queued' });
    // The same head again under a new delivery id: already checked.
    const again = await gitlab.sendMergeRequestEvent(integration.webhook.url, integration.webhook.secret, { project: 'acme/quiet', iid: 1, action: 'reopen' });
    expect(JSON.parse(again.body), again.body).toMatchObject({ status: 'ignored' });
    const jobs = await server.server.database.db.selectFrom('jobs').select('id').where('kind', '=', 'pull_request.check').where('dedupe_key', 'like', `%:${head}`).execute();
    expect(jobs).toHaveLength(1);
    // With the settings now in force: secrets only, failing from critical.
    const row = await checkDone(server, integration.id, head);
    expect(row).toMatchObject({ status: 'completed', conclusion: 'failure', summary: { scan_types: ['secrets'], fail_on: 'critical', new: 1 } });
  }, 120_000);

  it('ends the check failed when the provider refuses the credential', async () => {
    await gitlab.createProject('acme/revoked', BASE_FILES, { private: true });
    const head = await gitlab.commit('acme/revoked', 'feature', { 'src/x.js': 'export const x = 1;\n' });
    gitlab.openMergeRequest('acme/revoked', { sourceBranch: 'feature' });
    gitlab.revokeToken(gitlabToken);
    const sent = await gitlab.sendMergeRequestEvent(integration.webhook.url, integration.webhook.secret, { project: 'acme/revoked', iid: 1, action: 'open' });
    expect(sent.status, sent.body).toBe(202);
    const row = await checkDone(server, integration.id, head);
    expect(row.status).toBe('failed');
    expect(row.error).toMatch(/401/);
    const connection = await server.call('GET', `/api/v1/integrations/${integration.id}`, { key: server.adminKey });
    expect(connection.body).toMatchObject({ status: 'error' });
  }, 120_000);
});
