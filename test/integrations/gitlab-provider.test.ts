// The GitLab connector against the GitLab stand-in: OAuth with PKCE and rotating refresh tokens,
// pasted tokens and their revocation on disconnect, a clone of a private project with the connection's token, commit statuses, the
// merge request note, Merge Request Hook deliveries and the mapping of GitLab's failures.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloneRepository, GitCloneError, RefusedCloneError } from '../../platform/git/clone.ts';
import { tenantPolicy } from '../../platform/net/outbound.ts';
import { parseGitSource, type GitSource } from '../../platform/git/url.ts';
import { createGitlabConnector } from '../../api/integrations/gitlab/connector.ts';
import { ProviderAuthError, ProviderRateLimitError, ProviderRequestError, ProviderUnavailableError } from '../../api/integrations/providers/errors.ts';
import type { CheckInput, ProviderConnector, ProviderSession, PullRequestRef } from '../../api/integrations/providers/types.ts';
import { listenOnLoopback } from '../support/loopback.ts';
import { startGitlabStandIn, type GitlabStandIn } from '../support/providers/gitlab.ts';

const REDIRECT_URI = 'http://aegis.test/api/v1/integrations/oauth/gitlab/callback';

let gitlab: GitlabStandIn;
let connector: ProviderConnector;
let headSha: string;

const pkcePair = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

function gitSource(url: string, ref?: string): GitSource {
  const parsed = parseGitSource(url, ref, { allowLocal: false });
  if (!parsed.ok) throw new Error(`${parsed.field}: ${parsed.reason}`);
  return parsed.source;
}

/** Follows the authorize URL the way the admin's browser would, up to the redirect back to Aegis. */
async function authorize(url: string): Promise<{ code: string; state: string }> {
  const response = await fetch(url, { redirect: 'manual' });
  expect(response.status).toBe(302);
  const back = new URL(response.headers.get('location')!);
  expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
  return { code: back.searchParams.get('code')!, state: back.searchParams.get('state')! };
}

beforeAll(async () => {
  gitlab = await startGitlabStandIn({ tokenLifetimeSeconds: 7200 });
  connector = createGitlabConnector(gitlab.settings);
  await gitlab.createProject('acme/app', { 'README.md': '# app\n', 'src/index.js': 'console.log(1);\n' }, { private: true });
  headSha = await gitlab.commit('acme/app', 'feature', { 'src/index.js': 'eval(process.argv[2]);\n' });
  gitlab.openMergeRequest('acme/app', { sourceBranch: 'feature', targetBranch: 'main', title: 'Feature' });
});

afterAll(async () => {
  await gitlab?.close();
});

describe('GitLab OAuth', () => {
  it('is absent without an OAuth client', () => {
    expect(createGitlabConnector({ ...gitlab.settings, clientId: undefined }).oauth).toBeNull();
  });

  it('authorizes with PKCE, refuses a wrong verifier, refreshes with rotation and revokes', async () => {
    const oauth = connector.oauth!;
    expect(oauth.pkce).toBe(true);
    const wrong = pkcePair();
    const url = oauth.authorizeUrl({ state: 'state-1', redirectUri: REDIRECT_URI, codeChallenge: wrong.challenge });
    const params = new URL(url).searchParams;
    expect(url.startsWith(`${gitlab.url}/oauth/authorize?`)).toBe(true);
    expect(params.get('scope')).toBe('api read_user');
    expect(params.get('code_challenge_method')).toBe('S256');
    const first = await authorize(url);
    expect(first.state).toBe('state-1');
    await expect(oauth.exchangeCode({ code: first.code, redirectUri: REDIRECT_URI, codeVerifier: pkcePair().verifier })).rejects.toBeInstanceOf(ProviderAuthError);

    const pair = pkcePair();
    const second = await authorize(oauth.authorizeUrl({ state: 'state-2', redirectUri: REDIRECT_URI, codeChallenge: pair.challenge }));
    const tokens = await oauth.exchangeCode({ code: second.code, redirectUri: REDIRECT_URI, codeVerifier: pair.verifier });
    expect(tokens.scopes).toEqual(['api', 'read_user']);
    expect(tokens.refreshToken).toEqual(expect.any(String));
    expect(tokens.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 7100_000);
    // The code is spent.
    await expect(oauth.exchangeCode({ code: second.code, redirectUri: REDIRECT_URI, codeVerifier: pair.verifier })).rejects.toBeInstanceOf(ProviderAuthError);

    const session = connector.oauthSession(tokens.accessToken, { apiBaseUrl: null, metadata: {} });
    expect(session.apiBaseUrl).toBe(`${gitlab.url}/api/v4`);
    const account = await connector.identify(session);
    expect(account).toEqual({ id: String(gitlab.user.id), name: 'aegis-bot' });

    const refreshed = await oauth.refresh!(tokens.refreshToken!);
    expect(refreshed.accessToken).not.toBe(tokens.accessToken);
    expect(refreshed.refreshToken).not.toBe(tokens.refreshToken);
    await expect(oauth.refresh!(tokens.refreshToken!)).rejects.toBeInstanceOf(ProviderAuthError);
    await expect(connector.identify(session)).rejects.toBeInstanceOf(ProviderAuthError);
    const fresh = connector.oauthSession(refreshed.accessToken, { apiBaseUrl: null, metadata: {} });
    await expect(connector.identify(fresh)).resolves.toMatchObject({ name: 'aegis-bot' });

    await oauth.revoke!({ accessToken: refreshed.accessToken, refreshToken: refreshed.refreshToken });
    await expect(connector.identify(fresh)).rejects.toBeInstanceOf(ProviderAuthError);
    await expect(oauth.refresh!(refreshed.refreshToken!)).rejects.toBeInstanceOf(ProviderAuthError);
  });
});

describe('GitLab pasted tokens', () => {
  it('identifies a personal access token with its scopes', async () => {
    const token = gitlab.issueToken({ scopes: ['api', 'read_repository'] });
    const { session, metadata } = connector.tokenSession({ token: `${token}\n` });
    // `fetch`: the connector's outbound fetch (platform/net/outbound.ts), which every call of the session uses.
    expect(session).toEqual({ apiBaseUrl: `${gitlab.url}/api/v4`, authorization: `Bearer ${token}`, metadata: {}, fetch: expect.any(Function) });
    expect(metadata).toEqual({});
    await expect(connector.identify(session)).resolves.toEqual({ id: String(gitlab.user.id), name: 'aegis-bot', scopes: ['api', 'read_repository'] });
  });

  it('takes a self-managed instance URL and keeps it in metadata', async () => {
    const token = gitlab.issueToken();
    const { session, metadata } = connector.tokenSession({ token, url: `${gitlab.url}/` });
    expect(session.apiBaseUrl).toBe(`${gitlab.url}/api/v4`);
    expect(metadata).toEqual({ url: gitlab.url });
    await expect(connector.identify(session)).resolves.toMatchObject({ name: 'aegis-bot' });
    expect(() => connector.tokenSession({ token, url: 'ftp://gitlab.example.com' })).toThrow(ProviderRequestError);
  });

  it('reports a revoked token as an auth failure', async () => {
    const token = gitlab.issueToken();
    gitlab.revokeToken(token);
    await expect(connector.identify(connector.tokenSession({ token }).session)).rejects.toBeInstanceOf(ProviderAuthError);
  });

  it('revokes a personal access token with DELETE /personal_access_tokens/self', async () => {
    const token = gitlab.issueToken();
    const { session } = connector.tokenSession({ token });
    const before = gitlab.requests.length;
    await expect(connector.revokeToken!(session)).resolves.toEqual({ revoked: true });
    expect(gitlab.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual(['DELETE /api/v4/personal_access_tokens/self']);
    expect(gitlab.revokedTokens()).toContain(token);
    expect(gitlab.tokenWorks(token)).toBe(false);
    // Again: the token no longer works, which is not an error either.
    await expect(connector.revokeToken!(session)).resolves.toEqual({ revoked: false, reason: expect.stringMatching(/^gitlab answered 401.*no longer works/) });
  });

  it('does not fail on a token that cannot revoke itself: a project or group token, or GitLab before 15.0', async () => {
    for (const type of ['project', 'group'] as const) {
      const token = gitlab.issueToken({ type });
      const outcome = await connector.revokeToken!(connector.tokenSession({ token }).session);
      expect(outcome).toEqual({ revoked: false, reason: expect.stringMatching(/^gitlab answered 403: 403 Forbidden; .*revoke it in GitLab$/) });
      expect(gitlab.tokenWorks(token)).toBe(true);
    }
    const older = await startGitlabStandIn({ selfRevocation: false });
    try {
      const token = older.issueToken();
      const oldConnector = createGitlabConnector(older.settings);
      const outcome = await oldConnector.revokeToken!(oldConnector.tokenSession({ token }).session);
      expect(outcome).toEqual({ revoked: false, reason: expect.stringMatching(/^gitlab answered 404.*GitLab before 15\.0/) });
      expect(older.tokenWorks(token)).toBe(true);
      expect(older.rejected).toEqual([]);
    } finally {
      await older.close();
    }
  });

  it('throws when GitLab cannot take the revocation (down, rate limit)', async () => {
    const { session } = connector.tokenSession({ token: gitlab.issueToken() });
    gitlab.failNext(1, 503);
    await expect(connector.revokeToken!(session)).rejects.toBeInstanceOf(ProviderUnavailableError);
    gitlab.failNext(1, 429, { 'retry-after': '2' });
    await expect(connector.revokeToken!(session)).rejects.toBeInstanceOf(ProviderRateLimitError);
  });
});

describe('GitLab failures', () => {
  it('maps 429 with Retry-After to a rate-limit error', async () => {
    const session = connector.tokenSession({ token: gitlab.issueToken() }).session;
    gitlab.failNext(1, 429, { 'Retry-After': '1', 'RateLimit-Reset': String(Math.floor(Date.now() / 1000) + 1) });
    const err = await connector.identify(session).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderRateLimitError);
    expect((err as ProviderRateLimitError).retryAfterMs).toBe(1000);
    gitlab.failNext(1, 502);
    await expect(connector.identify(session)).rejects.toBeInstanceOf(ProviderUnavailableError);
    await expect(connector.identify(session)).resolves.toMatchObject({ name: 'aegis-bot' });
  });

  it('maps an unreachable GitLab to ProviderUnavailableError', async () => {
    const closed = await listenOnLoopback(createServer());
    await closed.close();
    const session = connector.tokenSession({ token: 'glpat-x', url: closed.url }).session;
    await expect(connector.identify(session)).rejects.toBeInstanceOf(ProviderUnavailableError);
  });
});

describe('GitLab source control', () => {
  let session: ProviderSession;
  const pr = (): PullRequestRef => ({ repository: 'acme/app', number: 1, headSha });
  const check = (over: Partial<CheckInput> = {}): CheckInput => ({ name: 'aegis/scan', status: 'in_progress', title: 'Scanning', summary: '', annotations: [], detailsUrl: 'https://aegis.test/scans/scan_1', ...over });

  beforeAll(() => {
    session = connector.tokenSession({ token: gitlab.issueToken({ scopes: ['api'] }) }).session;
  });

  it('clones a private project with the connection token', async () => {
    const cloneUrl = connector.sourceControl!.authenticatedCloneUrl(session, `${gitlab.url}/acme/app.git`);
    expect(cloneUrl.startsWith(`http://oauth2:${encodeURIComponent(session.authorization.slice(7))}@127.0.0.1:`)).toBe(true);
    const dir = await mkdtemp(join(tmpdir(), 'aegis-gitlab-clone-'));
    // The stand-in is on loopback: reachable as the operator's configured GitLab (an operator
    // endpoint of the outbound policy), private targets otherwise refused.
    const outbound = tenantPolicy({ allowPrivateTargets: false, operatorEndpoints: [gitlab.settings.webUrl] });
    try {
      const { commit } = await cloneRepository(gitSource(cloneUrl, 'feature'), join(dir, 'work'), { timeoutMs: 30_000, outbound });
      expect(commit).toBe(headSha);
      expect(await readFile(join(dir, 'work', 'src', 'index.js'), 'utf8')).toContain('eval');
      // The pull-request pipeline clones the event's head commit by id.
      await expect(cloneRepository(gitSource(cloneUrl, headSha), join(dir, 'by-sha'), { timeoutMs: 30_000, outbound })).resolves.toEqual({ commit: headSha });
      // Without the token the private project is not readable.
      const anonymous = cloneRepository(gitSource(`${gitlab.url}/acme/app.git`), join(dir, 'anonymous'), { timeoutMs: 30_000, outbound });
      await expect(anonymous).rejects.toBeInstanceOf(GitCloneError);
      await expect(anonymous).rejects.not.toBeInstanceOf(RefusedCloneError);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('replaces credentials already in the URL and refuses another host', () => {
    const url = connector.sourceControl!.authenticatedCloneUrl(session, `${gitlab.url.replace('http://', 'http://someone:secret@')}/acme/app.git`);
    expect(url).not.toContain('someone');
    expect(url).toContain('oauth2:');
    expect(() => connector.sourceControl!.authenticatedCloneUrl(session, 'https://evil.example.com/acme/app.git')).toThrow(ProviderRequestError);
    expect(() => connector.sourceControl!.authenticatedCloneUrl(session, `${gitlab.url.replace('127.0.0.1', 'localhost')}/acme/app.git`)).toThrow(ProviderRequestError);
  });

  it('creates a commit status and moves it to its result under the same name', async () => {
    const sc = connector.sourceControl!;
    const id = await sc.createCheck(session, pr(), check());
    expect(id).toBe('aegis/scan');
    // A retry of the creation (unknown outcome) leaves one status.
    await expect(sc.createCheck(session, pr(), check())).resolves.toBe('aegis/scan');
    expect(gitlab.statuses.filter((s) => s.sha === headSha)).toEqual([expect.objectContaining({ name: 'aegis/scan', status: 'running', description: 'Scanning', targetUrl: 'https://aegis.test/scans/scan_1' })]);

    const annotations = [{ path: 'src/index.js', startLine: 1, endLine: 1, level: 'failure' as const, title: 'eval', message: 'code injection' }];
    await sc.updateCheck(session, pr(), id, check({ status: 'completed', conclusion: 'failure', title: `2 findings ${'x'.repeat(400)}`, annotations }));
    const statuses = gitlab.statuses.filter((s) => s.sha === headSha);
    expect(statuses).toHaveLength(1);
    expect(statuses[0]).toMatchObject({ status: 'failed' });
    expect(statuses[0]!.description!.length).toBe(255);
  });

  it('refuses a status on an unknown commit as a request error', async () => {
    await expect(connector.sourceControl!.createCheck(session, { ...pr(), headSha: 'f'.repeat(40) }, check())).rejects.toBeInstanceOf(ProviderRequestError);
  });

  it('posts the summary note, then edits it in place; a deleted note is posted again', async () => {
    const sc = connector.sourceControl!;
    const id = await sc.upsertComment(session, pr(), 'first summary', null);
    const again = await sc.upsertComment(session, pr(), 'second summary', id);
    expect(again).toBe(id);
    expect(gitlab.notes.filter((n) => n.iid === 1)).toEqual([expect.objectContaining({ id: Number(id), body: 'second summary' })]);
    const replacement = await sc.upsertComment(session, pr(), 'third summary', '999999');
    expect(replacement).not.toBe(id);
    expect(gitlab.notes.find((n) => String(n.id) === replacement)?.body).toBe('third summary');
  });

  it('reports a missing api scope as an auth failure', async () => {
    const readOnly = connector.tokenSession({ token: gitlab.issueToken({ scopes: ['read_api'] }) }).session;
    await expect(connector.sourceControl!.upsertComment(readOnly, pr(), 'x', null)).rejects.toBeInstanceOf(ProviderAuthError);
  });
});

describe('GitLab webhooks', () => {
  const deliveries: { headers: IncomingHttpHeaders; raw: Buffer }[] = [];
  let receiver: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    receiver = await listenOnLoopback(
      createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          deliveries.push({ headers: req.headers, raw: Buffer.concat(chunks) });
          res.writeHead(200).end();
        });
      }),
    );
  });
  afterAll(async () => {
    await receiver?.close();
  });

  async function deliver(input: Parameters<GitlabStandIn['sendMergeRequestEvent']>[2]) {
    const sent = await gitlab.sendMergeRequestEvent(receiver.url, 'hook-secret', input);
    expect(sent.status).toBe(200);
    const delivery = deliveries.at(-1)!;
    return { ...delivery, body: JSON.parse(delivery.raw.toString('utf8')) as unknown, uuid: sent.uuid };
  }

  it('verifies the token, names the delivery and reads a merge request opening', async () => {
    const { headers, raw, body, uuid } = await deliver({ project: 'acme/app', iid: 1, action: 'open' });
    const hooks = connector.webhooks;
    expect(hooks.verify(headers, raw, 'hook-secret')).toBe(true);
    expect(hooks.verify(headers, raw, 'other-secret')).toBe(false);
    expect(hooks.verify({ ...headers, 'x-gitlab-token': undefined }, raw, 'hook-secret')).toBe(false);
    expect(hooks.deliveryId(headers, body)).toBe(uuid);
    const project = (body as { project: { id: number } }).project;
    expect(hooks.read(headers, body)).toEqual({
      type: 'pull_request',
      event: { action: 'opened', repository: 'acme/app', projectId: String(project.id), cloneUrl: `${gitlab.url}/acme/app.git`, number: 1, headSha, headRef: 'feature', baseSha: '', baseRef: 'main' },
    });
  });

  it('reads an update with new commits as synchronize, and other updates as other', async () => {
    const previous = headSha;
    headSha = await gitlab.commit('acme/app', 'feature', { 'src/more.js': 'eval(x);\n' });
    const pushed = await deliver({ project: 'acme/app', iid: 1, action: 'update', oldrev: previous });
    expect(connector.webhooks.read(pushed.headers, pushed.body)).toMatchObject({ type: 'pull_request', event: { action: 'synchronize', headSha } });
    const relabelled = await deliver({ project: 'acme/app', iid: 1, action: 'update' });
    expect(connector.webhooks.read(relabelled.headers, relabelled.body)).toMatchObject({ event: { action: 'other' } });
    const reopened = await deliver({ project: 'acme/app', iid: 1, action: 'reopen' });
    expect(connector.webhooks.read(reopened.headers, reopened.body)).toMatchObject({ event: { action: 'reopened' } });
    expect(connector.webhooks.read({ ...pushed.headers, 'x-gitlab-event': 'Push Hook' }, pushed.body)).toBeNull();
  });
});

describe('GitLab stand-in', () => {
  it('saw only requests shaped as GitLab documents them', () => {
    expect(gitlab.rejected).toEqual([]);
  });
});
