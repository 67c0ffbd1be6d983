// The GitHub connector against the GitHub stand-in (which checks every request body against
// GitHub's OpenAPI description): OAuth with PKCE, identify, revocation of one token, check runs (GitHub
// App user tokens) and commit statuses (personal access tokens, which GitHub refuses check runs),
// comments, issues as tickets, webhooks, error mapping and authenticated clones.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cloneRepository, GitCloneError, RefusedCloneError } from '../../platform/git/clone.ts';
import { tenantPolicy } from '../../platform/net/outbound.ts';
import { parseGitSource } from '../../platform/git/url.ts';
import { createGithubConnector } from '../../api/integrations/github/connector.ts';
import { ProviderAuthError, ProviderRateLimitError, ProviderRequestError, ProviderUnavailableError } from '../../api/integrations/providers/errors.ts';
import type { AnnotationInput, ProviderConnector, ProviderSession, WebhookHeaders } from '../../api/integrations/providers/types.ts';
import { listenOnLoopback } from '../support/loopback.ts';
import { startGithubStandIn, type GithubStandIn } from '../support/providers/github/index.ts';

let github: GithubStandIn;
let connector: ProviderConnector;
let session: ProviderSession;
/** Webhook deliveries the stand-in made to the receiver below. */
const deliveries: { headers: WebhookHeaders; raw: Buffer }[] = [];
let receiver: { url: string; close(): Promise<void> };

const REDIRECT = 'https://aegis.example.com/api/v1/integrations/oauth/github/callback';

beforeAll(async () => {
  github = await startGithubStandIn({ tokenLifetimeSeconds: 600 });
  connector = createGithubConnector(github.settings);
  session = connector.tokenSession({ token: github.issueToken() }).session;
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, raw: Buffer.concat(chunks) });
      res.writeHead(202);
      res.end();
    });
  });
  receiver = await listenOnLoopback(server);
});

afterAll(async () => {
  await github?.close();
  await receiver?.close();
});

afterEach(() => {
  expect(github.rejected).toEqual([]);
});

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** Follows the stand-in's authorize page (it approves at once) and returns the code. */
async function authorizeCode(challenge: string): Promise<string> {
  const url = connector.oauth!.authorizeUrl({ state: 'st4te', redirectUri: REDIRECT, codeChallenge: challenge });
  const res = await fetch(url, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get('location')!);
  expect(location.searchParams.get('state')).toBe('st4te');
  return location.searchParams.get('code')!;
}

const annotations = (count: number): AnnotationInput[] =>
  Array.from({ length: count }, (_, i) => ({ path: `src/file${i}.js`, startLine: i + 1, endLine: i + 1, level: 'failure', title: `Finding ${i}`, message: `Secret in file ${i}` }));

describe('GitHub connector: OAuth', () => {
  it('is absent without a client id', () => {
    expect(createGithubConnector({ ...github.settings, clientId: undefined }).oauth).toBeNull();
  });

  it('authorizes with an S256 challenge, refuses a wrong verifier, refreshes with rotation and revokes only its own token', async () => {
    const oauth = connector.oauth!;
    expect(oauth.pkce).toBe(true);
    const { verifier, challenge } = pkce();
    const url = new URL(oauth.authorizeUrl({ state: 'st4te', redirectUri: REDIRECT, codeChallenge: challenge }));
    expect(url.origin + url.pathname).toBe(`${github.url}/login/oauth/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({ client_id: 'aegis-test-client', redirect_uri: REDIRECT, state: 'st4te', code_challenge: challenge, code_challenge_method: 'S256' });

    // A code exchanged with another verifier is refused (and spent).
    const stolen = await authorizeCode(challenge);
    await expect(oauth.exchangeCode({ code: stolen, redirectUri: REDIRECT, codeVerifier: pkce().verifier })).rejects.toBeInstanceOf(ProviderRequestError);
    await expect(oauth.exchangeCode({ code: stolen, redirectUri: REDIRECT, codeVerifier: verifier })).rejects.toThrow(/bad_verification_code/);

    const code = await authorizeCode(challenge);
    const tokens = await oauth.exchangeCode({ code, redirectUri: REDIRECT, codeVerifier: verifier });
    expect(tokens.accessToken).toMatch(/^ghu_/);
    expect(tokens.refreshToken).toMatch(/^ghr_/);
    expect(tokens.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 590_000);
    expect(tokens.expiresAt!.getTime()).toBeLessThanOrEqual(Date.now() + 600_000);

    const oauthSession = connector.oauthSession(tokens.accessToken, { apiBaseUrl: null, metadata: {} });
    expect(oauthSession.apiBaseUrl).toBe(github.settings.apiUrl);
    expect(await connector.identify(oauthSession)).toMatchObject({ id: String(github.user.id), name: github.user.login });

    const refreshed = await oauth.refresh!(tokens.refreshToken!);
    expect(refreshed.accessToken).not.toBe(tokens.accessToken);
    expect(refreshed.refreshToken).not.toBe(tokens.refreshToken);
    expect(github.refreshCount()).toBe(1);
    expect(await github.tokenWorks(tokens.accessToken)).toBe(false);
    expect(await github.tokenWorks(refreshed.accessToken)).toBe(true);
    // Single use: the old refresh token is spent, and the connection would need a new consent.
    await expect(oauth.refresh!(tokens.refreshToken!)).rejects.toBeInstanceOf(ProviderAuthError);

    // The same GitHub user authorizes again (another connection, maybe in another organisation).
    const second = pkce();
    const other = await oauth.exchangeCode({ code: await authorizeCode(second.challenge), redirectUri: REDIRECT, codeVerifier: second.verifier });

    // Revocation deletes this token (DELETE /applications/{client_id}/token), not the user's grant.
    const before = github.requests.length;
    await oauth.revoke!({ accessToken: refreshed.accessToken, refreshToken: refreshed.refreshToken });
    expect(github.requests.slice(before)).toEqual([{ method: 'DELETE', path: '/applications/aegis-test-client/token', body: { access_token: refreshed.accessToken } }]);
    expect(github.revokedTokens()).toEqual([refreshed.accessToken]);
    expect(github.revokedGrants()).toEqual([]);
    expect(await github.tokenWorks(refreshed.accessToken)).toBe(false);
    await expect(connector.identify(connector.oauthSession(refreshed.accessToken, { apiBaseUrl: github.settings.apiUrl, metadata: {} }))).rejects.toBeInstanceOf(ProviderAuthError);
    // The other authorization of the same user keeps working, and keeps refreshing.
    expect(await github.tokenWorks(other.accessToken)).toBe(true);
    expect(await connector.identify(connector.oauthSession(other.accessToken, { apiBaseUrl: null, metadata: {} }))).toMatchObject({ name: github.user.login });
    const otherRefreshed = await oauth.refresh!(other.refreshToken!);
    expect(await github.tokenWorks(otherRefreshed.accessToken)).toBe(true);

    // A token already gone is what revocation wants: no error.
    await oauth.revoke!({ accessToken: refreshed.accessToken, refreshToken: null });
    expect(github.revokedTokens()).toEqual([refreshed.accessToken]);
  });
});

describe('GitHub connector: API calls', () => {
  /** A GitHub App user token's session: what may write check runs. */
  let appSession: ProviderSession;
  beforeAll(async () => {
    const { verifier, challenge } = pkce();
    const tokens = await connector.oauth!.exchangeCode({ code: await authorizeCode(challenge), redirectUri: REDIRECT, codeVerifier: verifier });
    appSession = connector.oauthSession(tokens.accessToken, { apiBaseUrl: null, metadata: {} });
  });

  it('identifies a personal access token with its scopes, and refuses an unknown or revoked one', async () => {
    const token = github.issueToken('octo-admin', { scopes: ['repo', 'read:org'] });
    const { session: pat } = connector.tokenSession({ token: ` ${token} ` });
    expect(pat.authorization).toBe(`Bearer ${token}`);
    const account = await connector.identify(pat);
    expect(account).toMatchObject({ name: 'octo-admin', scopes: ['repo', 'read:org'] });
    expect(account.id).toMatch(/^\d+$/);

    await expect(connector.identify(connector.tokenSession({ token: 'ghp_unknown' }).session)).rejects.toBeInstanceOf(ProviderAuthError);
    github.revokeToken(token);
    await expect(connector.identify(pat)).rejects.toThrow(/401: Bad credentials/);
  });

  it('creates and updates a check run with a GitHub App user token, sending annotations 50 per request', async () => {
    await github.createRepository('acme', 'checks', { 'a.txt': 'a' });
    const headSha = await github.commit('acme', 'checks', 'feature', { 'b.txt': 'b' });
    const pr = { repository: 'acme/checks', number: 7, headSha };
    const sc = connector.sourceControl!;
    const session = appSession;
    const before = github.requests.length;
    const id = await sc.createCheck(session, pr, { name: 'Aegis', status: 'in_progress', title: 'Scanning', summary: 'Scan running', annotations: annotations(120), detailsUrl: 'https://aegis.example.com/scans/1' });
    const run = github.checkRuns.find((r) => String(r.id) === id)!;
    expect(run).toMatchObject({ headSha, name: 'Aegis', status: 'in_progress', detailsUrl: 'https://aegis.example.com/scans/1' });
    expect(run.annotations.map((a) => a.path)).toEqual(annotations(120).map((a) => a.path));
    const calls = github.requests.slice(before);
    expect(calls.map((r) => r.method)).toEqual(['POST', 'PATCH', 'PATCH']);
    expect(calls.map((r) => ((r.body as { output: { annotations: unknown[] } }).output.annotations.length))).toEqual([50, 50, 20]);

    await sc.updateCheck(session, pr, id, { name: 'Aegis', status: 'completed', conclusion: 'failure', title: '3 findings', summary: 'Found secrets', annotations: annotations(3) });
    expect(run).toMatchObject({ status: 'completed', conclusion: 'failure', title: '3 findings', summary: 'Found secrets' });
    expect(run.annotations).toHaveLength(123);

    // A head GitHub does not know is the request's fault, not a reason to retry.
    await expect(sc.createCheck(session, { ...pr, headSha: 'f'.repeat(40) }, { name: 'Aegis', status: 'completed', conclusion: 'success', title: 'ok', summary: 'ok', annotations: [] })).rejects.toBeInstanceOf(ProviderRequestError);
  });

  it('reports a commit status instead with a personal access token, which GitHub refuses check runs', async () => {
    const headSha = await github.commit('acme', 'checks', 'pat-feature', { 'c.txt': 'c' });
    const pr = { repository: 'acme/checks', number: 8, headSha };
    const sc = connector.sourceControl!;
    const before = github.requests.length;
    const id = await sc.createCheck(session, pr, { name: 'Aegis', status: 'in_progress', title: 'Aegis: scanning', summary: 'Scan running', annotations: annotations(3) });
    expect(id).toBe('status:Aegis');
    await sc.updateCheck(session, pr, id, { name: 'Aegis', status: 'completed', conclusion: 'failure', title: `3 new findings (3 critical) ${'x'.repeat(200)}`, summary: 'Found secrets', annotations: annotations(3), detailsUrl: 'https://aegis.example.com/scans/2' });
    // No check-run call at all: a pasted token is a personal access token.
    expect(github.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual([`POST /repos/acme/checks/statuses/${headSha}`, `POST /repos/acme/checks/statuses/${headSha}`]);
    expect(github.checkRuns.filter((r) => r.headSha === headSha)).toEqual([]);
    const statuses = github.commitStatuses.filter((st) => st.sha === headSha);
    expect(statuses.map((st) => [st.context, st.state])).toEqual([['Aegis', 'pending'], ['Aegis', 'failure']]);
    expect(statuses[1]!.description!.length).toBeLessThanOrEqual(140);
    expect(statuses[1]).toMatchObject({ description: expect.stringMatching(/^3 new findings \(3 critical\) x+…$/), targetUrl: 'https://aegis.example.com/scans/2' });

    // A neutral conclusion (superseded) does not block the merge.
    await sc.updateCheck(session, pr, id, { name: 'Aegis', status: 'completed', conclusion: 'neutral', title: 'Superseded by a newer commit', summary: '', annotations: [] });
    expect(github.commitStatuses.at(-1)).toMatchObject({ sha: headSha, context: 'Aegis', state: 'success', description: 'Superseded by a newer commit' });
  });

  it('falls back to a commit status when GitHub refuses a token check runs', async () => {
    // A personal access token presented as an OAuth token: Aegis tries a check run and GitHub says 403.
    const headSha = await github.commit('acme', 'checks', 'fallback', { 'd.txt': 'd' });
    const pr = { repository: 'acme/checks', number: 9, headSha };
    const disguised = connector.oauthSession(github.issueToken(), { apiBaseUrl: null, metadata: {} });
    const before = github.requests.length;
    const id = await connector.sourceControl!.createCheck(disguised, pr, { name: 'Aegis', status: 'in_progress', title: 'Aegis: scanning', summary: 'Scan running', annotations: [] });
    expect(id).toBe('status:Aegis');
    expect(github.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual(['POST /repos/acme/checks/check-runs', `POST /repos/acme/checks/statuses/${headSha}`]);
    expect(github.commitStatuses.filter((st) => st.sha === headSha)).toMatchObject([{ context: 'Aegis', state: 'pending' }]);

    // Other refusals are not papered over: a head GitHub does not know is still the request's fault.
    await expect(connector.sourceControl!.createCheck(session, { ...pr, headSha: 'e'.repeat(40) }, { name: 'Aegis', status: 'in_progress', title: 't', summary: 's', annotations: [] })).rejects.toBeInstanceOf(ProviderRequestError);
  });

  it('edits the summary comment in place, and posts a new one when it was deleted', async () => {
    const sc = connector.sourceControl!;
    const pr = { repository: 'acme/checks', number: 7, headSha: 'a'.repeat(40) };
    const id = await sc.upsertComment(session, pr, 'first', null);
    expect(await sc.upsertComment(session, pr, 'second', id)).toBe(id);
    expect(github.comments.filter((c) => c.repository === 'acme/checks' && c.number === 7).map((c) => c.body)).toEqual(['second']);

    github.deleteComment(Number(id));
    const replaced = await sc.upsertComment(session, pr, 'third', id);
    expect(replaced).not.toBe(id);
    expect(github.comments.filter((c) => c.number === 7 && !c.deleted).map((c) => c.body)).toEqual(['third']);
  });

  it('creates, finds and closes issues as tickets', async () => {
    const tickets = connector.tickets!;
    const input = { project: 'acme/app', title: 'Secret in config.js', description: 'An AWS key.', labels: ['security'], assignee: 'octo-dev', findingId: 'fnd_123' };
    const ref = await tickets.createTicket(session, input);
    expect(ref).toEqual({ externalId: 'acme/app#1', key: 'acme/app#1', url: `${github.url}/acme/app/issues/1` });
    const issue = github.issueOf('acme/app', 1)!;
    expect(issue).toMatchObject({ title: input.title, labels: ['security'], assignees: ['octo-dev'], state: 'open' });
    expect(issue.body).toContain('An AWS key.');
    expect(issue.body).toContain('<!-- aegis-finding: fnd_123 -->');

    await tickets.createTicket(session, { ...input, findingId: 'fnd_456', labels: [], assignee: undefined });
    expect(await tickets.findTicket(session, 'acme/app', 'fnd_123')).toEqual(ref);
    expect((await tickets.findTicket(session, 'acme/app', 'fnd_456'))?.externalId).toBe('acme/app#2');
    expect(await tickets.findTicket(session, 'acme/app', 'fnd_12')).toBeNull();

    await tickets.closeTicket(session, { externalId: ref.externalId }, 'Fixed: verified by scan 42.');
    expect(issue).toMatchObject({ state: 'closed', stateReason: 'completed' });
    expect(issue.comments.map((c) => c.body)).toEqual(['Fixed: verified by scan 42.']);
    const patch = github.requests.filter((r) => r.method === 'PATCH' && r.path === '/repos/acme/app/issues/1');
    expect(patch.map((r) => r.body)).toEqual([{ state: 'closed', state_reason: 'completed' }]);

    // Already closed: only the comment.
    await tickets.closeTicket(session, { externalId: ref.externalId }, 'Still fixed.');
    expect(issue.comments).toHaveLength(2);
    expect(github.requests.filter((r) => r.method === 'PATCH' && r.path === '/repos/acme/app/issues/1')).toHaveLength(1);
  });

  it('maps rate limits, refusals and outages to provider errors', async () => {
    github.failNext(1, 429, { 'retry-after': '7' });
    const limited = await connector.identify(session).catch((err: unknown) => err);
    expect(limited).toBeInstanceOf(ProviderRateLimitError);
    expect((limited as ProviderRateLimitError).retryAfterMs).toBe(7000);

    // GitHub's secondary rate limit: 403 with Retry-After.
    github.failNext(1, 403, { 'retry-after': '3' });
    const secondary = await connector.identify(session).catch((err: unknown) => err);
    expect(secondary).toBeInstanceOf(ProviderRateLimitError);
    expect((secondary as ProviderRateLimitError).retryAfterMs).toBe(3000);

    // The primary limit: X-RateLimit-Remaining 0 and the reset time.
    github.failNext(1, 403, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 30) });
    const primary = await connector.identify(session).catch((err: unknown) => err);
    expect(primary).toBeInstanceOf(ProviderRateLimitError);
    expect((primary as ProviderRateLimitError).retryAfterMs).toBeGreaterThan(20_000);

    github.failNext(1, 503);
    await expect(connector.identify(session)).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect(await connector.identify(session)).toMatchObject({ name: github.user.login });

    const closed = await listenOnLoopback(createServer());
    await closed.close();
    const nowhere = createGithubConnector({ ...github.settings, apiUrl: `${closed.url}/api` });
    await expect(nowhere.identify(nowhere.tokenSession({ token: 'ghp_x' }).session)).rejects.toBeInstanceOf(ProviderUnavailableError);
  });
});

describe('GitHub stand-in', () => {
  it('refuses check runs to personal access tokens as GitHub does, and takes them from GitHub App user tokens', async () => {
    const headSha = await github.commit('acme', 'checks', 'stand-in', { 'e.txt': 'e' });
    const body = JSON.stringify({ name: 'Aegis', head_sha: headSha, status: 'in_progress' });
    const request = (token: string, method: string, path: string, payload = body) =>
      fetch(`${github.settings.apiUrl}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'user-agent': 'test' }, body: payload });
    const pat = github.issueToken();
    const refused = await request(pat, 'POST', '/repos/acme/checks/check-runs');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('x-accepted-github-permissions')).toBe('checks=write');
    expect(await refused.json()).toEqual({ message: 'Resource not accessible by personal access token', documentation_url: 'https://docs.github.com/rest/checks/runs#create-a-check-run', status: '403' });

    const { verifier, challenge } = pkce();
    const user = await connector.oauth!.exchangeCode({ code: await authorizeCode(challenge), redirectUri: REDIRECT, codeVerifier: verifier });
    const created = await request(user.accessToken, 'POST', '/repos/acme/checks/check-runs');
    expect(created.status).toBe(201);
    const run = (await created.json()) as { id: number };
    const update = await request(pat, 'PATCH', `/repos/acme/checks/check-runs/${run.id}`, JSON.stringify({ status: 'completed', conclusion: 'success' }));
    expect(update.status).toBe(403);
    expect(((await update.json()) as { message: string }).message).toBe('Resource not accessible by personal access token');
    // Commit statuses take either.
    expect((await request(pat, 'POST', `/repos/acme/checks/statuses/${headSha}`, JSON.stringify({ state: 'success', context: 'Aegis' }))).status).toBe(201);
    expect(github.rejected).toEqual([]);
  });

  it('refuses bodies that do not match GitHub\'s OpenAPI description, as GitHub does', async () => {
    const token = github.issueToken();
    const post = (path: string, body: unknown) =>
      fetch(`${github.settings.apiUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'user-agent': 'test' }, body: JSON.stringify(body) });
    const tooMany = annotations(51).map((a) => ({ path: a.path, start_line: a.startLine, end_line: a.endLine, annotation_level: 'failure', message: a.message }));
    const refused = [
      await post('/repos/acme/x/check-runs', { name: 'Aegis', head_sha: 'a'.repeat(40), output: { title: 't', summary: 's', annotations: tooMany } }),
      await post('/repos/acme/x/check-runs', { name: 'Aegis', head_sha: 'a'.repeat(40), output: { title: 't', summary: 's', annotations: [{ ...tooMany[0], annotation_level: 'error' }] } }),
      await post('/repos/acme/x/issues', { body: 'no title' }),
      await post('/repos/acme/x/issues/1/comments', { text: 'not body' }),
    ];
    expect(refused.map((r) => r.status)).toEqual([422, 422, 422, 422]);
    expect(github.rejected).toHaveLength(4);
    expect(github.rejected[0]).toMatch(/annotations must NOT have more than 50 items/);
    github.rejected.length = 0;
  });
});

describe('GitHub connector: webhooks', () => {
  const secret = 'whsec-github-test';
  const sign = (raw: Buffer, key: string) => `sha256=${createHmac('sha256', key).update(raw).digest('hex')}`;

  it('verifies X-Hub-Signature-256 and reads pull request events', async () => {
    const delivered = await github.sendPullRequestEvent(`${receiver.url}/hook`, secret, { owner: 'acme', repo: 'checks', number: 7, headSha: 'b'.repeat(40), baseSha: 'c'.repeat(40), headRef: 'feature', baseRef: 'main', action: 'synchronize' });
    expect(delivered.status).toBe(202);
    const { headers, raw } = deliveries.at(-1)!;
    const hooks = connector.webhooks;
    expect(hooks.verify(headers, raw, secret)).toBe(true);
    expect(hooks.verify(headers, Buffer.from(raw.toString('utf8').replace('feature', 'featurf')), secret)).toBe(false);
    expect(hooks.verify(headers, raw, 'another-secret')).toBe(false);
    expect(hooks.verify({ ...headers, 'x-hub-signature-256': undefined }, raw, secret)).toBe(false);
    expect(hooks.deliveryId(headers, JSON.parse(raw.toString('utf8')))).toBe(delivered.deliveryId);

    expect(hooks.read(headers, JSON.parse(raw.toString('utf8')))).toEqual({
      type: 'pull_request',
      event: { action: 'synchronize', repository: 'acme/checks', projectId: null, cloneUrl: `${github.url}/acme/checks.git`, number: 7, headSha: 'b'.repeat(40), headRef: 'feature', baseSha: 'c'.repeat(40), baseRef: 'main' },
    });

    // A fork's head is cloned from the fork; other actions are `other`.
    const fork = github.pullRequestPayload({ owner: 'acme', repo: 'checks', number: 8, headSha: 'd'.repeat(40), baseSha: 'c'.repeat(40), headRef: 'patch-1', baseRef: 'main', action: 'labeled', headRepository: 'someone/checks' });
    expect(hooks.read({ 'x-github-event': 'pull_request' }, fork)).toMatchObject({ type: 'pull_request', event: { action: 'other', cloneUrl: `${github.url}/someone/checks.git`, repository: 'acme/checks' } });

    const ping = Buffer.from(JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 }));
    const pingHeaders = { 'x-github-event': 'ping', 'x-github-delivery': 'd-1', 'x-hub-signature-256': sign(ping, secret) };
    expect(hooks.verify(pingHeaders, ping, secret)).toBe(true);
    expect(hooks.read(pingHeaders, JSON.parse(ping.toString('utf8')))).toBeNull();
  });

  it('reads issue closes and reopens as ticket changes', async () => {
    const ref = await connector.tickets!.createTicket(session, { project: 'acme/hooks', title: 't', description: 'd', labels: [], findingId: 'fnd_hook' });
    github.setWebhook(`${receiver.url}/hook`, secret);
    try {
      const hooks = connector.webhooks;
      await github.closeIssue('acme', 'hooks', 1);
      let { headers, raw } = deliveries.at(-1)!;
      expect(headers['x-github-event']).toBe('issues');
      expect(hooks.verify(headers, raw, secret)).toBe(true);
      expect(hooks.read(headers, JSON.parse(raw.toString('utf8')))).toEqual({ type: 'ticket', change: { externalId: ref.externalId, state: 'closed' } });

      await github.reopenIssue('acme', 'hooks', 1);
      ({ headers, raw } = deliveries.at(-1)!);
      expect(hooks.read(headers, JSON.parse(raw.toString('utf8')))).toEqual({ type: 'ticket', change: { externalId: ref.externalId, state: 'open' } });

      const edited = { ...(JSON.parse(raw.toString('utf8')) as Record<string, unknown>), action: 'edited' };
      expect(hooks.read(headers, edited)).toBeNull();
    } finally {
      github.setWebhook(`${receiver.url}/unused`, secret);
    }
  });
});

describe('GitHub connector: clones', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aegis-github-clone-'));
    await github.createRepository('acme', 'payments', { 'config.js': 'module.exports = {};\n' }, { private: true });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('clones a private repository with the connection token, and fails without it', async () => {
    const plain = `${github.url}/acme/payments.git`;
    const authenticated = connector.sourceControl!.authenticatedCloneUrl(session, plain);
    expect(authenticated).toMatch(/^http:\/\/x-access-token:ghp_[A-Za-z0-9]+@127\.0\.0\.1:\d+\/acme\/payments\.git$/);

    const parsed = parseGitSource(authenticated, undefined, { allowLocal: false });
    if (!parsed.ok) throw new Error(parsed.reason);
    // The stand-in is on loopback: reachable as the operator's configured GitHub (an operator
    // endpoint of the outbound policy), private targets otherwise refused.
    const outbound = tenantPolicy({ allowPrivateTargets: false, operatorEndpoints: [github.settings.webUrl] });
    const { commit } = await cloneRepository(parsed.source, join(dir, 'with-token'), { timeoutMs: 30_000, outbound });
    expect(commit).toBe(github.repositories.get('acme/payments')!.branches.get('main'));
    expect(await readFile(join(dir, 'with-token', 'config.js'), 'utf8')).toBe('module.exports = {};\n');
    // The token is not left in the workspace.
    expect(await readFile(join(dir, 'with-token', '.git', 'config'), 'utf8')).not.toContain('ghp_');

    const anonymous = parseGitSource(plain, undefined, { allowLocal: false });
    if (!anonymous.ok) throw new Error(anonymous.reason);
    const anonymousClone = cloneRepository(anonymous.source, join(dir, 'without-token'), { timeoutMs: 30_000, outbound });
    await expect(anonymousClone).rejects.toBeInstanceOf(GitCloneError);
    await expect(anonymousClone).rejects.not.toBeInstanceOf(RefusedCloneError);
  });

  it('puts the token only into URLs of the connection\'s GitHub', () => {
    expect(() => connector.sourceControl!.authenticatedCloneUrl(session, 'https://git.example.net/acme/payments.git')).toThrow(ProviderRequestError);
    expect(() => connector.sourceControl!.authenticatedCloneUrl(session, 'git@github.com:acme/payments.git')).toThrow(ProviderRequestError);
    // github.com: the API is on api.github.com, clones on github.com.
    const dotcom = createGithubConnector({ clientId: undefined, clientSecret: undefined, webUrl: 'https://github.com', apiUrl: 'https://api.github.com' });
    const s = dotcom.tokenSession({ token: 'ghp_abc/+=' }).session;
    expect(dotcom.sourceControl!.authenticatedCloneUrl(s, 'https://github.com/acme/payments.git')).toBe('https://x-access-token:ghp_abc%2F%2B%3D@github.com/acme/payments.git');
  });
});
