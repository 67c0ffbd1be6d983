// A GitHub stand-in on 127.0.0.1, one server for what github.com splits over two hosts: the web
// side at `url` (GitHub App user authorization: /login/oauth/authorize auto-approves;
// /login/oauth/access_token checks the client, the code, redirect_uri and the S256 verifier, and a
// refresh retires the old refresh and access tokens; git smart HTTP at /{owner}/{name}.git served
// by `git http-backend`) and the REST API under `${url}/api`, like GitHub Enterprise's /api/v3.
//
// Tokens are what GitHub issues: personal access tokens (`issueToken`, pasted into Aegis) and GitHub
// App user access tokens from the OAuth flow. As on GitHub, only the latter may write check runs:
// "Create a check run" / "Update a check run" answer a personal access token 403 "Resource not
// accessible by personal access token" (docs.github.com/rest/checks/runs); commit statuses take
// either. A user's authorization of the app (its grant) is one per user, shared by every OAuth flow
// that user completes; DELETE /applications/{client_id}/token revokes one access token, DELETE
// /applications/{client_id}/grant every token of the grant.
//
// Every API request body (and the query of the list call) is validated against GitHub's published
// OpenAPI description (@octokit/openapi), compiled with ajv for the operations served here only. A
// request that does not match is answered as GitHub answers it (422 Validation Failed, 400
// Problems parsing JSON, 404 for an unknown endpoint) and recorded in `rejected`, which tests
// expect to stay empty. Webhook deliveries (`pull_request`, `issues`) are sent signed with
// X-Hub-Signature-256, shaped as GitHub documents them.
//
// This module wires the parts together; they share one explicit context (context.ts: the state and
// the token rules). OAuth is in oauth.ts, the REST API in rest.ts, hosted repositories and git
// smart HTTP in repositories.ts, webhook deliveries in webhooks.ts, GitHub's JSON shapes in
// shapes.ts, HTTP answers in replies.ts, the OpenAPI checks in openapi-validation.ts, and the
// public types in types.ts (re-exported here).
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenOnLoopback } from '../../loopback.ts';
import { readBody } from '../git-host.ts';
import { CLIENT_ID, CLIENT_SECRET, liveToken, revokeGrant, type StandInContext, token, userOf } from './context.ts';
import { accessToken, authorize } from './oauth.ts';
import { operations } from './openapi-validation.ts';
import { commit, createRepository, git } from './repositories.ts';
import { api } from './rest.ts';
import { changeIssueState, deliver, pullRequestPayload } from './webhooks.ts';
import type { GithubStandIn, GithubStandInOptions, GithubUser } from './types.ts';

export type {
  AnnotationRecord,
  CheckRunRecord,
  CommentRecord,
  CommitStatusRecord,
  DeliveryResult,
  GithubStandIn,
  GithubStandInOptions,
  GithubUser,
  IssueRecord,
  PullRequestEventInput,
  RecordedRequest,
  RepositoryRecord,
} from './types.ts';

export async function startGithubStandIn(options: GithubStandInOptions = {}): Promise<GithubStandIn> {
  const specs = operations();
  const root = await mkdtemp(join(tmpdir(), 'aegis-github-standin-'));
  const user: GithubUser = { id: 1001, login: 'aegis-bot' };

  // The methods below run only once `ctx` exists (it is declared after, holding this object).
  const standIn: GithubStandIn = {
    url: '',
    settings: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, webUrl: '', apiUrl: '' },
    requests: [],
    rejected: [],
    checkRuns: [],
    commitStatuses: [],
    comments: [],
    issues: [],
    repositories: new Map(),
    user,
    failNext(count, status, headers = {}) {
      ctx.failures = { count, status, headers };
    },
    issueToken(login = user.login, { scopes = ['repo'] } = {}) {
      userOf(ctx, login);
      const value = token('ghp');
      ctx.tokens.set(value, { kind: 'pat', login, scopes, expiresAt: null, revoked: false, grant: null, pair: null });
      return value;
    },
    revokeToken(value) {
      const record = ctx.tokens.get(value);
      if (!record) return;
      record.revoked = true;
      if (record.grant) revokeGrant(ctx, record.grant);
    },
    revokeAllTokens() {
      for (const record of ctx.tokens.values()) {
        record.revoked = true;
        if (record.grant) record.grant.revoked = true;
      }
    },
    async tokenWorks(value) {
      return liveToken(ctx, value, ['pat', 'user']) !== null;
    },
    issuedTokens: () => [...ctx.tokens.keys()],
    refreshCount: () => ctx.refreshes,
    revokedGrants: () => [...ctx.revokedGrants],
    revokedTokens: () => [...ctx.revokedAccessTokens],
    createRepository: (owner, name, files, opts) => createRepository(ctx, owner, name, files, opts),
    commit: (owner, name, branch, files) => commit(ctx, owner, name, branch, files),
    issueOf: (repository, number) => standIn.issues.find((i) => i.repository === repository && i.number === number),
    issuesOf: (repository) => standIn.issues.filter((i) => i.repository === repository),
    deleteComment(id) {
      const comment = standIn.comments.find((c) => c.id === id);
      if (comment) comment.deleted = true;
    },
    setWebhook(url, secret) {
      ctx.webhook = { url, secret };
    },
    closeIssue: (owner, repo, number) => changeIssueState(ctx, `${owner}/${repo}`, number, 'closed'),
    reopenIssue: (owner, repo, number) => changeIssueState(ctx, `${owner}/${repo}`, number, 'open'),
    setIssueState: (repository, number, state) => changeIssueState(ctx, repository, number, state),
    pullRequestPayload: (input) => pullRequestPayload(ctx, input),
    sendPullRequestEvent: (url, secret, input) => deliver(url, secret, 'pull_request', pullRequestPayload(ctx, input), input.deliveryId),
    close: async () => {},
  };

  const ctx: StandInContext = {
    standIn,
    root,
    lifetime: options.tokenLifetimeSeconds ?? 28_800,
    specs,
    tokens: new Map(),
    codes: new Map(),
    users: new Map([[user.login, user]]),
    revokedGrants: [],
    revokedAccessTokens: [],
    grants: new Map(),
    refreshes: 0,
    failures: null,
    webhook: null,
    nextId: 5000,
    user,
  };

  // ---- server ------------------------------------------------------------------------------

  const server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const path = url.pathname;
      if (req.method === 'GET' && path === '/login/oauth/authorize') return authorize(ctx, res, url.searchParams);
      if (req.method === 'POST' && path === '/login/oauth/access_token') return accessToken(ctx, req, res, raw);
      if (path === '/api' || path.startsWith('/api/')) return api(ctx, req, res, path.slice(4) || '/', url.searchParams, raw);
      const gitPath = /^\/([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)\.git(\/.*)$/.exec(path);
      const repo = gitPath ? standIn.repositories.get(`${gitPath[1]}/${gitPath[2]}`) : undefined;
      if (gitPath && repo) return git(ctx, req, res, repo, `/${gitPath[1]}/${gitPath[2]}.git${gitPath[3]}`, url.search.slice(1), raw);
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Not Found');
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err));
    });
  });
  const listening = await listenOnLoopback(server);
  standIn.url = listening.url;
  standIn.settings.webUrl = listening.url;
  standIn.settings.apiUrl = `${listening.url}/api`;
  standIn.close = async () => {
    await listening.close();
    await rm(root, { recursive: true, force: true });
  };
  return standIn;
}
