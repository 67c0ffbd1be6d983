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
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { Ajv } from 'ajv';
import formats from 'ajv-formats';
import type { ProviderSettings } from '../../../api/integrations/providers/settings.ts';
import { listenOnLoopback } from '../loopback.ts';
import { basicPassword, commitExists as gitCommitExists, commitFiles, initBareRepository, readBody, serveGitHttp } from './git-host.ts';

// ajv-formats is CommonJS with a default export; under NodeNext the callable is `.default`.
const addFormats = formats.default;

export interface GithubStandInOptions {
  /** Lifetime of user access tokens from the OAuth flow (GitHub: 28800, 8 hours). */
  tokenLifetimeSeconds?: number;
}

export interface RecordedRequest {
  method: string;
  /** Path as GitHub documents it: API paths without the `/api` prefix, with the query string. */
  path: string;
  body: unknown;
}

export interface GithubUser {
  id: number;
  login: string;
}

export interface AnnotationRecord {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: string;
  message: string;
  title?: string;
}

export interface CheckRunRecord {
  id: number;
  repository: string;
  headSha: string;
  name: string;
  status: string;
  conclusion: string | null;
  title: string | null;
  summary: string | null;
  detailsUrl: string | null;
  annotations: AnnotationRecord[];
  /** Create and update calls made for it. */
  calls: number;
}

export interface CommitStatusRecord {
  id: number;
  repository: string;
  sha: string;
  context: string;
  state: string;
  description: string | null;
  targetUrl: string | null;
}

export interface CommentRecord {
  id: number;
  repository: string;
  /** The issue or pull request number. */
  number: number;
  body: string;
  deleted: boolean;
}

export interface IssueRecord {
  id: number;
  repository: string;
  number: number;
  title: string;
  body: string | null;
  labels: string[];
  assignees: string[];
  state: 'open' | 'closed';
  stateReason: string | null;
  author: string;
  comments: CommentRecord[];
  htmlUrl: string;
  createdAt: string;
  updatedAt: string;
}

export interface RepositoryRecord {
  id: number;
  owner: string;
  name: string;
  private: boolean;
  defaultBranch: string;
  /** Branch → head commit. */
  branches: Map<string, string>;
}

export interface PullRequestEventInput {
  owner: string;
  repo: string;
  number: number;
  headSha: string;
  baseSha: string;
  headRef: string;
  baseRef: string;
  action: 'opened' | 'synchronize' | 'reopened' | 'closed' | 'labeled' | 'edited';
  /** The repository the head is in, when it is a fork (`owner/name`). */
  headRepository?: string;
  /** The delivery id (a redelivery repeats it); a new one by default. */
  deliveryId?: string;
}

export interface DeliveryResult {
  status: number;
  body: string;
  deliveryId: string;
  payload: Record<string, unknown>;
}

export interface GithubStandIn {
  url: string;
  settings: ProviderSettings;
  requests: RecordedRequest[];
  rejected: string[];
  checkRuns: CheckRunRecord[];
  /** Commit statuses, one record per POST (GitHub shows the latest of each context). */
  commitStatuses: CommitStatusRecord[];
  comments: CommentRecord[];
  issues: IssueRecord[];
  repositories: Map<string, RepositoryRecord>;
  /** The user OAuth grants belong to. */
  user: GithubUser;
  failNext(count: number, status: number, headers?: Record<string, string>): void;
  /** A personal access token (`ghp_…`) of `login` (default the stand-in's user); classic tokens report their scopes. */
  issueToken(login?: string, options?: { scopes?: string[] }): string;
  revokeToken(token: string): void;
  /** Revokes every token and grant (a user removing the app's authorization). */
  revokeAllTokens(): void;
  /** Whether the API accepts `token` now. */
  tokenWorks(token: string): Promise<boolean>;
  /** Every access and refresh token issued so far. */
  issuedTokens(): string[];
  /** Successful refresh_token grants so far. */
  refreshCount(): number;
  /** Client ids whose grant was revoked through DELETE /applications/{client_id}/grant, one entry per call. */
  revokedGrants(): string[];
  /** Access tokens revoked through DELETE /applications/{client_id}/token, one entry per call. */
  revokedTokens(): string[];
  createRepository(owner: string, name: string, files: Record<string, string>, options?: { private?: boolean }): Promise<RepositoryRecord>;
  /** Commits `files` (added or replaced) on `branch` (a new branch starts from the default one); returns the sha. */
  commit(owner: string, name: string, branch: string, files: Record<string, string>): Promise<string>;
  issueOf(repository: string, number: number): IssueRecord | undefined;
  issuesOf(repository: string): IssueRecord[];
  /** Removes a comment, as a person deleting it on GitHub. */
  deleteComment(id: number): void;
  /** Where `issues` deliveries go (GitHub's repository webhook). */
  setWebhook(url: string, secret: string): void;
  closeIssue(owner: string, repo: string, number: number): Promise<DeliveryResult | null>;
  reopenIssue(owner: string, repo: string, number: number): Promise<DeliveryResult | null>;
  setIssueState(repository: string, number: number, state: 'open' | 'closed'): Promise<DeliveryResult | null>;
  pullRequestPayload(input: PullRequestEventInput): Record<string, unknown>;
  sendPullRequestEvent(url: string, secret: string, input: PullRequestEventInput): Promise<DeliveryResult>;
  close(): Promise<void>;
}

const CLIENT_ID = 'aegis-test-client';
const CLIENT_SECRET = 'aegis-test-secret';
const REFRESH_LIFETIME_SECONDS = 15_897_600;
const DOCS = 'https://docs.github.com/rest';

type Json = Record<string, unknown>;

interface TokenRecord {
  kind: 'pat' | 'user' | 'refresh';
  login: string;
  scopes: string[];
  expiresAt: number | null;
  revoked: boolean;
  grant: GrantRecord | null;
  /** A user token's refresh token, and the reverse: the pair one token request issued. */
  pair: string | null;
}

/** A user's authorization of the app: one per client and user, whichever flow made its tokens. */
interface GrantRecord {
  clientId: string;
  login: string;
  tokens: Set<string>;
  revoked: boolean;
}

interface PendingCode {
  clientId: string;
  redirectUri: string | null;
  challenge: string | null;
  expires: number;
}

// ---- OpenAPI validation ------------------------------------------------------------------------

interface Operation {
  method: string;
  /** The documented path template, e.g. /repos/{owner}/{repo}/issues. */
  template: string;
  pattern: RegExp;
  body: ValidateFunction | null;
  bodyRequired: boolean;
  query: ValidateFunction | null;
}

/** The operations served, by method and documented path. */
const SERVED: [string, string][] = [
  ['GET', '/user'],
  ['POST', '/repos/{owner}/{repo}/check-runs'],
  ['PATCH', '/repos/{owner}/{repo}/check-runs/{check_run_id}'],
  ['GET', '/repos/{owner}/{repo}/issues'],
  ['POST', '/repos/{owner}/{repo}/issues'],
  ['GET', '/repos/{owner}/{repo}/issues/{issue_number}'],
  ['PATCH', '/repos/{owner}/{repo}/issues/{issue_number}'],
  ['POST', '/repos/{owner}/{repo}/issues/{issue_number}/comments'],
  ['PATCH', '/repos/{owner}/{repo}/issues/comments/{comment_id}'],
  ['POST', '/repos/{owner}/{repo}/statuses/{sha}'],
  ['DELETE', '/applications/{client_id}/grant'],
  ['DELETE', '/applications/{client_id}/token'],
];

let compiled: Operation[] | null = null;

/**
 * OpenAPI 3.0 schema → JSON Schema for ajv: internal $refs inlined (the served operations' schemas
 * are not recursive; a cycle would be cut to `{}`), `nullable: true` turned into "or null".
 */
function toJsonSchema(doc: Json, node: unknown, refs: string[] = []): unknown {
  if (Array.isArray(node)) return node.map((n) => toJsonSchema(doc, n, refs));
  if (typeof node !== 'object' || node === null) return node;
  const source = node as Json;
  if (typeof source.$ref === 'string') {
    const ref = source.$ref;
    if (!ref.startsWith('#/') || refs.includes(ref)) return {};
    let target: unknown = doc;
    for (const part of ref.slice(2).split('/')) target = (target as Json)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    return toJsonSchema(doc, target, [...refs, ref]);
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === 'nullable' || key === 'example' || key === 'examples' || key === 'description' || key === 'discriminator') continue;
    out[key] = key === 'properties' || key === 'patternProperties' ? Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, toJsonSchema(doc, v, refs)])) : toJsonSchema(doc, value, refs);
  }
  return source.nullable === true ? { anyOf: [out, { type: 'null' }] } : out;
}

let description: Json | null = null;
function openapi(): Json {
  const require = createRequire(import.meta.url);
  description ??= JSON.parse(readFileSync(require.resolve('@octokit/openapi/generated/api.github.com.json'), 'utf8')) as Json;
  return description;
}

const webhookSchemas = new Map<string, ValidateFunction>();

/**
 * Throws unless `payload` matches the documented schema of the `event` webhook with its action
 * (components.schemas.webhook-<event>-<action>): the stand-in's own deliveries are checked too.
 */
function checkWebhookPayload(event: string, payload: Json): void {
  const name = `webhook-${event.replace(/_/g, '-')}-${String(payload.action).replace(/_/g, '-')}`;
  let validate = webhookSchemas.get(name);
  if (!validate) {
    const doc = openapi();
    const schema = ((doc.components as Json).schemas as Json)[name];
    if (!schema) throw new Error(`GitHub documents no ${name} payload`);
    const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
    addFormats(ajv);
    validate = ajv.compile(toJsonSchema(doc, schema) as object);
    webhookSchemas.set(name, validate);
  }
  if (!validate(payload)) throw new Error(`the stand-in's ${name} payload does not match GitHub's description: ${describeErrors(validate.errors?.filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'allOf' && e.keyword !== 'oneOf'))}`);
}

function operations(): Operation[] {
  if (compiled) return compiled;
  const doc = openapi();
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  // Query strings are text: integers and booleans are read from it as GitHub reads them.
  const queryAjv = new Ajv({ strict: false, allErrors: true, logger: false, coerceTypes: true });
  addFormats(queryAjv);
  compiled = SERVED.map(([method, template]) => {
    const op = paths[template]?.[method.toLowerCase()];
    if (!op) throw new Error(`the OpenAPI description has no ${method} ${template}`);
    const requestBody = toJsonSchema(doc, op.requestBody) as { required?: boolean; content?: Record<string, { schema?: unknown }> } | undefined;
    const bodySchema = requestBody?.content?.['application/json']?.schema;
    const params = ((toJsonSchema(doc, op.parameters) as Json[] | undefined) ?? []).filter((p) => p.in === 'query');
    const query = params.length > 0
      ? queryAjv.compile({
          type: 'object',
          properties: Object.fromEntries(params.map((p) => [p.name as string, p.schema ?? {}])),
          required: params.filter((p) => p.required === true).map((p) => p.name as string),
          additionalProperties: false,
        })
      : null;
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '([^/]+)')}$`);
    return { method, template, pattern, body: bodySchema ? ajv.compile(bodySchema as object) : null, bodyRequired: requestBody?.required === true, query };
  });
  return compiled;
}

const describeErrors = (errors: ErrorObject[] | null | undefined): string =>
  (errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`).join('; ');

const token = (prefix: string): string => `${prefix}_${randomBytes(27).toString('base64url').replace(/[-_]/g, 'x').slice(0, 36)}`;

export async function startGithubStandIn(options: GithubStandInOptions = {}): Promise<GithubStandIn> {
  const lifetime = options.tokenLifetimeSeconds ?? 28_800;
  const specs = operations();
  const root = await mkdtemp(join(tmpdir(), 'aegis-github-standin-'));
  const tokens = new Map<string, TokenRecord>();
  const codes = new Map<string, PendingCode>();
  const users = new Map<string, GithubUser>();
  const revoked: string[] = [];
  const revokedAccessTokens: string[] = [];
  /** Live grants by `<client id>:<login>`. */
  const grants = new Map<string, GrantRecord>();
  let refreshes = 0;
  let failures: { count: number; status: number; headers: Record<string, string> } | null = null;
  let webhook: { url: string; secret: string } | null = null;
  let nextId = 5000;
  const user: GithubUser = { id: 1001, login: 'aegis-bot' };
  users.set(user.login, user);

  const userOf = (login: string): GithubUser => {
    let found = users.get(login);
    if (!found) {
      found = { id: nextId++, login };
      users.set(login, found);
    }
    return found;
  };

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
      failures = { count, status, headers };
    },
    issueToken(login = user.login, { scopes = ['repo'] } = {}) {
      userOf(login);
      const value = token('ghp');
      tokens.set(value, { kind: 'pat', login, scopes, expiresAt: null, revoked: false, grant: null, pair: null });
      return value;
    },
    revokeToken(value) {
      const record = tokens.get(value);
      if (!record) return;
      record.revoked = true;
      if (record.grant) revokeGrant(record.grant);
    },
    revokeAllTokens() {
      for (const record of tokens.values()) {
        record.revoked = true;
        if (record.grant) record.grant.revoked = true;
      }
    },
    async tokenWorks(value) {
      return liveToken(value, ['pat', 'user']) !== null;
    },
    issuedTokens: () => [...tokens.keys()],
    refreshCount: () => refreshes,
    revokedGrants: () => [...revoked],
    revokedTokens: () => [...revokedAccessTokens],
    createRepository,
    commit,
    issueOf: (repository, number) => standIn.issues.find((i) => i.repository === repository && i.number === number),
    issuesOf: (repository) => standIn.issues.filter((i) => i.repository === repository),
    deleteComment(id) {
      const comment = standIn.comments.find((c) => c.id === id);
      if (comment) comment.deleted = true;
    },
    setWebhook(url, secret) {
      webhook = { url, secret };
    },
    closeIssue: (owner, repo, number) => changeIssueState(`${owner}/${repo}`, number, 'closed'),
    reopenIssue: (owner, repo, number) => changeIssueState(`${owner}/${repo}`, number, 'open'),
    setIssueState: (repository, number, state) => changeIssueState(repository, number, state),
    pullRequestPayload,
    sendPullRequestEvent: (url, secret, input) => deliver(url, secret, 'pull_request', pullRequestPayload(input), input.deliveryId),
    close: async () => {},
  };

  // ---- helpers -------------------------------------------------------------------------------

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-github-media-type': 'github.v3; format=json', ...headers });
    res.end(body === undefined ? '' : JSON.stringify(body));
  };
  const refuse = (res: ServerResponse, what: string, status: number, body: unknown): void => {
    standIn.rejected.push(what);
    json(res, status, body);
  };
  const notFound = (res: ServerResponse): void => json(res, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });

  function revokeGrant(grant: GrantRecord): void {
    grant.revoked = true;
    for (const value of grant.tokens) {
      const record = tokens.get(value);
      if (record) record.revoked = true;
    }
  }

  function liveToken(value: string | null, kinds: TokenRecord['kind'][]): TokenRecord | null {
    if (!value) return null;
    const record = tokens.get(value);
    if (!record || !kinds.includes(record.kind) || record.revoked || record.grant?.revoked) return null;
    if (record.expiresAt !== null && record.expiresAt <= Date.now()) return null;
    return record;
  }

  /** GitHub takes `Bearer` and the older `token` scheme. */
  function apiCaller(req: IncomingMessage): TokenRecord | null {
    const match = /^(?:Bearer|token) (\S+)$/i.exec(req.headers.authorization ?? '');
    return liveToken(match ? match[1]! : null, ['pat', 'user']);
  }

  const fullName = (repo: RepositoryRecord): string => `${repo.owner}/${repo.name}`;
  const repoDir = (repository: string): string => join(root, `${repository}.git`);

  function repositoryRecord(repository: string): RepositoryRecord {
    const repo = standIn.repositories.get(repository);
    if (!repo) throw new Error(`no stand-in repository ${repository}`);
    return repo;
  }

  async function createRepository(owner: string, name: string, files: Record<string, string>, opts: { private?: boolean } = {}): Promise<RepositoryRecord> {
    if (!/^[A-Za-z0-9_.-]+$/.test(owner) || !/^[A-Za-z0-9_.-]+$/.test(name)) throw new Error(`invalid repository ${owner}/${name}`);
    const repo: RepositoryRecord = { id: nextId++, owner, name, private: opts.private ?? false, defaultBranch: 'main', branches: new Map() };
    standIn.repositories.set(fullName(repo), repo);
    // GitHub serves any reachable commit by id (fetches of a pull request's head sha).
    await initBareRepository(repoDir(fullName(repo)), 'reachable');
    await commit(owner, name, 'main', files);
    return repo;
  }

  async function commit(owner: string, name: string, branch: string, files: Record<string, string>): Promise<string> {
    const repo = repositoryRecord(`${owner}/${name}`);
    const dir = repoDir(fullName(repo));
    const parent = repo.branches.get(branch) ?? repo.branches.get(repo.defaultBranch) ?? null;
    const sha = await commitFiles(dir, parent, branch, files);
    repo.branches.set(branch, sha);
    return sha;
  }

  const commitExists = (repository: string, sha: string): Promise<boolean> => gitCommitExists(repoDir(repository), sha);

  // ---- JSON shapes GitHub answers with -----------------------------------------------------

  /** A user as GitHub's payloads carry it (simple-user). */
  function userJson(u: GithubUser) {
    const api = `${standIn.settings.apiUrl}/users/${u.login}`;
    return {
      login: u.login,
      id: u.id,
      node_id: `U_${u.id}`,
      avatar_url: `${standIn.url}/avatars/u/${u.id}`,
      gravatar_id: '',
      url: api,
      html_url: `${standIn.url}/${u.login}`,
      followers_url: `${api}/followers`,
      following_url: `${api}/following{/other_user}`,
      gists_url: `${api}/gists{/gist_id}`,
      starred_url: `${api}/starred{/owner}{/repo}`,
      subscriptions_url: `${api}/subscriptions`,
      organizations_url: `${api}/orgs`,
      repos_url: `${api}/repos`,
      events_url: `${api}/events{/privacy}`,
      received_events_url: `${api}/received_events`,
      type: 'User',
      site_admin: false,
    };
  }

  /** A repository as GitHub's payloads carry it (every URL template the webhook schemas require). */
  function repositoryJson(repository: string) {
    const known = standIn.repositories.get(repository);
    const [owner, name] = repository.split('/') as [string, string];
    const host = new URL(standIn.url).host;
    const api = `${standIn.settings.apiUrl}/repos/${repository}`;
    const id = known?.id ?? 1;
    const created = '2026-01-01T00:00:00Z';
    return {
      id,
      node_id: `R_${id}`,
      name,
      full_name: repository,
      private: known?.private ?? false,
      owner: userJson(userOf(owner)),
      html_url: `${standIn.url}/${repository}`,
      description: null,
      fork: false,
      url: api,
      archive_url: `${api}/{archive_format}{/ref}`,
      assignees_url: `${api}/assignees{/user}`,
      blobs_url: `${api}/git/blobs{/sha}`,
      branches_url: `${api}/branches{/branch}`,
      collaborators_url: `${api}/collaborators{/collaborator}`,
      comments_url: `${api}/comments{/number}`,
      commits_url: `${api}/commits{/sha}`,
      compare_url: `${api}/compare/{base}...{head}`,
      contents_url: `${api}/contents/{+path}`,
      contributors_url: `${api}/contributors`,
      deployments_url: `${api}/deployments`,
      downloads_url: `${api}/downloads`,
      events_url: `${api}/events`,
      forks_url: `${api}/forks`,
      git_commits_url: `${api}/git/commits{/sha}`,
      git_refs_url: `${api}/git/refs{/sha}`,
      git_tags_url: `${api}/git/tags{/sha}`,
      hooks_url: `${api}/hooks`,
      issue_comment_url: `${api}/issues/comments{/number}`,
      issue_events_url: `${api}/issues/events{/number}`,
      issues_url: `${api}/issues{/number}`,
      keys_url: `${api}/keys{/key_id}`,
      labels_url: `${api}/labels{/name}`,
      languages_url: `${api}/languages`,
      merges_url: `${api}/merges`,
      milestones_url: `${api}/milestones{/number}`,
      notifications_url: `${api}/notifications{?since,all,participating}`,
      pulls_url: `${api}/pulls{/number}`,
      releases_url: `${api}/releases{/id}`,
      stargazers_url: `${api}/stargazers`,
      statuses_url: `${api}/statuses/{sha}`,
      subscribers_url: `${api}/subscribers`,
      subscription_url: `${api}/subscription`,
      tags_url: `${api}/tags`,
      teams_url: `${api}/teams`,
      trees_url: `${api}/git/trees{/sha}`,
      clone_url: `${standIn.url}/${repository}.git`,
      git_url: `git://${host}/${repository}.git`,
      ssh_url: `git@${host}:${repository}.git`,
      svn_url: `${standIn.url}/${repository}`,
      mirror_url: null,
      homepage: null,
      language: null,
      forks: 0,
      forks_count: 0,
      stargazers_count: 0,
      watchers: 0,
      watchers_count: 0,
      size: 0,
      default_branch: known?.defaultBranch ?? 'main',
      open_issues: 0,
      open_issues_count: 0,
      is_template: false,
      topics: [],
      has_issues: true,
      has_projects: false,
      has_wiki: false,
      has_pages: false,
      has_downloads: true,
      has_discussions: false,
      archived: false,
      disabled: false,
      visibility: known?.private ? 'private' : 'public',
      license: null,
      pushed_at: created,
      created_at: created,
      updated_at: created,
      allow_forking: true,
      web_commit_signoff_required: false,
    };
  }

  const reactions = (url: string) => ({ url, total_count: 0, '+1': 0, '-1': 0, laugh: 0, hooray: 0, confused: 0, heart: 0, rocket: 0, eyes: 0 });

  function issueJson(issue: IssueRecord) {
    return {
      id: issue.id,
      node_id: `I_${issue.id}`,
      url: `${standIn.settings.apiUrl}/repos/${issue.repository}/issues/${issue.number}`,
      repository_url: `${standIn.settings.apiUrl}/repos/${issue.repository}`,
      labels_url: `${standIn.settings.apiUrl}/repos/${issue.repository}/issues/${issue.number}/labels{/name}`,
      comments_url: `${standIn.settings.apiUrl}/repos/${issue.repository}/issues/${issue.number}/comments`,
      events_url: `${standIn.settings.apiUrl}/repos/${issue.repository}/issues/${issue.number}/events`,
      html_url: issue.htmlUrl,
      number: issue.number,
      state: issue.state,
      state_reason: issue.stateReason,
      title: issue.title,
      body: issue.body,
      user: userJson(userOf(issue.author)),
      labels: issue.labels.map((name, i) => ({
        id: issue.id * 100 + i,
        node_id: `LA_${issue.id * 100 + i}`,
        url: `${standIn.settings.apiUrl}/repos/${issue.repository}/labels/${encodeURIComponent(name)}`,
        name,
        color: 'ededed',
        default: false,
        description: null,
      })),
      assignee: issue.assignees[0] ? userJson(userOf(issue.assignees[0])) : null,
      assignees: issue.assignees.map((a) => userJson(userOf(a))),
      milestone: null,
      locked: false,
      active_lock_reason: null,
      comments: issue.comments.filter((c) => !c.deleted).length,
      reactions: reactions(`${standIn.settings.apiUrl}/repos/${issue.repository}/issues/${issue.number}/reactions`),
      created_at: issue.createdAt,
      updated_at: issue.updatedAt,
      closed_at: issue.state === 'closed' ? issue.updatedAt : null,
      author_association: 'OWNER',
    };
  }

  function checkRunJson(run: CheckRunRecord) {
    return {
      id: run.id,
      node_id: `CR_${run.id}`,
      head_sha: run.headSha,
      external_id: '',
      url: `${standIn.settings.apiUrl}/repos/${run.repository}/check-runs/${run.id}`,
      html_url: `${standIn.url}/${run.repository}/runs/${run.id}`,
      details_url: run.detailsUrl,
      status: run.status,
      conclusion: run.conclusion,
      name: run.name,
      output: { title: run.title, summary: run.summary, text: null, annotations_count: run.annotations.length, annotations_url: `${standIn.settings.apiUrl}/repos/${run.repository}/check-runs/${run.id}/annotations` },
      pull_requests: [],
    };
  }

  const commitStatusJson = (st: CommitStatusRecord, creator: string) => ({
    url: `${standIn.settings.apiUrl}/repos/${st.repository}/statuses/${st.sha}`,
    avatar_url: null,
    id: st.id,
    node_id: `SC_${st.id}`,
    state: st.state,
    description: st.description,
    target_url: st.targetUrl,
    context: st.context,
    created_at: new Date().toISOString(),
    updated_at: new Date().toISOString(),
    creator: userJson(userOf(creator)),
  });

  const commentJson = (c: CommentRecord, author: string) => ({
    id: c.id,
    node_id: `IC_${c.id}`,
    url: `${standIn.settings.apiUrl}/repos/${c.repository}/issues/comments/${c.id}`,
    html_url: `${standIn.url}/${c.repository}/issues/${c.number}#issuecomment-${c.id}`,
    issue_url: `${standIn.settings.apiUrl}/repos/${c.repository}/issues/${c.number}`,
    body: c.body,
    user: userJson(userOf(author)),
    created_at: new Date().toISOString(),
    updated_at: new Date().toISOString(),
    author_association: 'OWNER',
  });

  // ---- OAuth -------------------------------------------------------------------------------

  function authorize(res: ServerResponse, query: URLSearchParams): void {
    const p = Object.fromEntries(query);
    // GitHub shows a 404 page for an unknown client; the stand-in records it as a mismatch.
    if (p.client_id !== CLIENT_ID) return refuse(res, `GET /login/oauth/authorize with client_id=${p.client_id ?? ''}`, 404, { message: 'Not Found' });
    // `state` is optional for GitHub; Aegis must always send it (CSRF), so it is required here.
    if (!p.state) return refuse(res, 'GET /login/oauth/authorize without state', 400, { error: 'invalid_request' });
    if (p.code_challenge !== undefined && (p.code_challenge_method !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(p.code_challenge))) {
      return refuse(res, `GET /login/oauth/authorize with code_challenge_method=${p.code_challenge_method ?? ''}`, 400, { error: 'invalid_request', error_description: 'code_challenge_method must be S256' });
    }
    if (p.redirect_uri !== undefined && !/^https?:\/\//.test(p.redirect_uri)) return refuse(res, 'GET /login/oauth/authorize with a redirect_uri that is not http(s)', 400, { error: 'redirect_uri_mismatch' });
    const code = randomBytes(10).toString('hex');
    codes.set(code, { clientId: p.client_id, redirectUri: p.redirect_uri ?? null, challenge: p.code_challenge ?? null, expires: Date.now() + 600_000 });
    const target = new URL(p.redirect_uri ?? `${standIn.url}/callback`);
    target.searchParams.set('code', code);
    target.searchParams.set('state', p.state);
    res.writeHead(302, { location: target.toString() });
    res.end();
  }

  /** GitHub answers token requests with 200 and an `error` field when the grant is refused. */
  function tokenError(res: ServerResponse, error: string, description: string): void {
    json(res, 200, { error, error_description: description, error_uri: 'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors' });
  }

  function issueUserTokens(res: ServerResponse, grant: GrantRecord): void {
    const access = token('ghu');
    const refresh = token('ghr');
    const now = Date.now();
    tokens.set(access, { kind: 'user', login: grant.login, scopes: [], expiresAt: now + lifetime * 1000, revoked: false, grant, pair: refresh });
    tokens.set(refresh, { kind: 'refresh', login: grant.login, scopes: [], expiresAt: now + REFRESH_LIFETIME_SECONDS * 1000, revoked: false, grant, pair: access });
    grant.tokens.add(access);
    grant.tokens.add(refresh);
    json(res, 200, { access_token: access, expires_in: lifetime, refresh_token: refresh, refresh_token_expires_in: REFRESH_LIFETIME_SECONDS, scope: '', token_type: 'bearer' });
  }

  function accessToken(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
    const type = req.headers['content-type'] ?? '';
    let p: Record<string, string>;
    if (type.startsWith('application/x-www-form-urlencoded')) p = Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
    else if (type.startsWith('application/json')) {
      try {
        p = JSON.parse(raw.toString('utf8')) as Record<string, string>;
      } catch {
        return refuse(res, 'POST /login/oauth/access_token with a body that is not JSON', 400, { error: 'invalid_request' });
      }
    } else return refuse(res, `POST /login/oauth/access_token with content-type ${type}`, 400, { error: 'invalid_request' });
    standIn.requests.push({ method: 'POST', path: '/login/oauth/access_token', body: p });
    // The stand-in answers JSON only, so Aegis must ask for it (GitHub's default is form-encoded).
    if (!(req.headers.accept ?? '').includes('application/json')) return refuse(res, 'POST /login/oauth/access_token without Accept: application/json', 406, { error: 'not_acceptable' });
    if (p.client_id !== CLIENT_ID || p.client_secret !== CLIENT_SECRET) return tokenError(res, 'incorrect_client_credentials', 'The client_id and/or client_secret passed are incorrect.');

    if (p.grant_type === 'refresh_token') {
      if (!p.refresh_token) return refuse(res, 'POST /login/oauth/access_token (refresh) without refresh_token', 200, { error: 'bad_refresh_token', error_description: 'The refresh token passed is incorrect or expired.' });
      const record = liveToken(p.refresh_token, ['refresh']);
      if (!record?.grant) return tokenError(res, 'bad_refresh_token', 'The refresh token passed is incorrect or expired.');
      // GitHub: once a refresh token is used, it and the user access token issued with it no longer
      // work. Other token pairs of the same grant (other connections of the user) are untouched.
      record.revoked = true;
      const previous = record.pair ? tokens.get(record.pair) : undefined;
      if (previous) previous.revoked = true;
      refreshes++;
      return issueUserTokens(res, record.grant);
    }
    if (p.grant_type !== undefined && p.grant_type !== 'authorization_code') return refuse(res, `POST /login/oauth/access_token with grant_type=${p.grant_type}`, 200, { error: 'unsupported_grant_type' });
    if (!p.code) return refuse(res, 'POST /login/oauth/access_token without code', 200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
    const pending = codes.get(p.code);
    codes.delete(p.code);
    if (!pending || pending.expires < Date.now() || pending.clientId !== p.client_id) return tokenError(res, 'bad_verification_code', 'The code passed is incorrect or expired.');
    if (pending.redirectUri !== null && p.redirect_uri !== undefined && p.redirect_uri !== pending.redirectUri) return tokenError(res, 'redirect_uri_mismatch', 'The redirect_uri MUST match the registered callback URL for this application.');
    if (pending.challenge !== null) {
      const verifier = p.code_verifier ?? '';
      const computed = createHash('sha256').update(verifier).digest('base64url');
      if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || computed !== pending.challenge) return tokenError(res, 'bad_verification_code', 'The code_verifier does not match the code_challenge.');
    }
    // One authorization per app and user: a second flow by the same user adds tokens to it.
    const key = `${pending.clientId}:${user.login}`;
    let grant = grants.get(key);
    if (!grant || grant.revoked) {
      grant = { clientId: pending.clientId, login: user.login, tokens: new Set(), revoked: false };
      grants.set(key, grant);
    }
    issueUserTokens(res, grant);
  }

  // ---- REST API ----------------------------------------------------------------------------

  async function api(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, raw: Buffer): Promise<void> {
    const method = req.method ?? 'GET';
    const what = `${method} ${path}`;
    const op = specs.find((o) => o.method === method && o.pattern.test(path));
    let body: unknown = undefined;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString('utf8')) as unknown;
      } catch {
        standIn.requests.push({ method, path: `${path}${query.size > 0 ? `?${query}` : ''}`, body: raw.toString('utf8') });
        return refuse(res, `${what} with a body that is not JSON`, 400, { message: 'Problems parsing JSON', documentation_url: DOCS, status: '400' });
      }
    }
    standIn.requests.push({ method, path: `${path}${query.size > 0 ? `?${query}` : ''}`, body: body ?? null });
    if (!op) return refuse(res, `${what} is not an endpoint the stand-in serves`, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });
    if (!req.headers['user-agent']) return refuse(res, `${what} without User-Agent`, 403, { message: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header.' });

    if (failures && failures.count > 0) {
      const { status, headers } = failures;
      failures.count--;
      const extra: Record<string, string> = { ...headers };
      if (status === 429 && !Object.keys(extra).some((h) => h.toLowerCase() === 'retry-after')) extra['retry-after'] = '1';
      const message = status === 429 || status === 403 ? 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.' : 'Server Error';
      return json(res, status, { message, documentation_url: DOCS, status: String(status) }, extra);
    }

    const params = op.pattern.exec(path)!.slice(1).map((s) => decodeURIComponent(s));
    if (op.template === '/applications/{client_id}/grant') return revokeGrantCall(req, res, what, params[0]!, body);
    if (op.template === '/applications/{client_id}/token') return revokeTokenCall(req, res, what, params[0]!, body);

    const caller = apiCaller(req);
    if (!caller) return json(res, 401, { message: 'Bad credentials', documentation_url: DOCS, status: '401' });
    const rateHeaders = { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '4999', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600), 'x-ratelimit-used': '1', 'x-ratelimit-resource': 'core' };

    if (op.query) {
      const q = Object.fromEntries(query);
      if (!op.query(q)) return refuse(res, `${what} with query ${query}: ${describeErrors(op.query.errors)}`, 422, { message: 'Validation Failed', errors: [describeErrors(op.query.errors)], documentation_url: DOCS, status: '422' });
    } else if (query.size > 0) return refuse(res, `${what} with an undocumented query ${query}`, 422, { message: 'Validation Failed', documentation_url: DOCS, status: '422' });
    if (op.body) {
      if (body === undefined && op.bodyRequired) return refuse(res, `${what} without a body`, 400, { message: 'Problems parsing JSON', documentation_url: DOCS, status: '400' });
      if (body !== undefined && !(req.headers['content-type'] ?? '').startsWith('application/json')) return refuse(res, `${what} with content-type ${req.headers['content-type'] ?? ''}`, 415, { message: 'Unsupported Media Type', documentation_url: DOCS, status: '415' });
      if (body !== undefined && !op.body(body)) return refuse(res, `${what}: ${describeErrors(op.body.errors)}`, 422, { message: 'Invalid request.', errors: [describeErrors(op.body.errors)], documentation_url: DOCS, status: '422' });
    } else if (body !== undefined) return refuse(res, `${what} with a body`, 422, { message: 'Invalid request.', documentation_url: DOCS, status: '422' });

    const b = (body ?? {}) as Json;
    const repository = params.length >= 2 ? `${params[0]}/${params[1]}` : '';
    const send = (status: number, answer: unknown, headers: Record<string, string> = {}) => json(res, status, answer, { ...rateHeaders, ...headers });

    switch (op.template) {
      case '/user': {
        const u = userOf(caller.login);
        // Classic personal access tokens list their scopes; GitHub App user tokens have none.
        return send(200, { ...userJson(u), name: u.login, email: null }, caller.kind === 'pat' ? { 'x-oauth-scopes': caller.scopes.join(', '), 'x-accepted-oauth-scopes': '' } : {});
      }
      case '/repos/{owner}/{repo}/check-runs': {
        if (caller.kind === 'pat') return refuseCheckRun(send, 'create-a-check-run');
        if (standIn.repositories.has(repository) && !(await commitExists(repository, String(b.head_sha)))) return send(422, { message: 'No commit found for SHA: ' + String(b.head_sha), documentation_url: DOCS, status: '422' });
        const outputErr = checkOutputProblem(b);
        if (outputErr) return refuse(res, `${what}: ${outputErr}`, 422, { message: 'Invalid request.', errors: [outputErr], documentation_url: DOCS, status: '422' });
        const output = (b.output ?? {}) as Json;
        const run: CheckRunRecord = {
          id: nextId++,
          repository,
          headSha: String(b.head_sha),
          name: String(b.name),
          status: b.conclusion !== undefined ? 'completed' : String(b.status ?? 'queued'),
          conclusion: typeof b.conclusion === 'string' ? b.conclusion : null,
          title: typeof output.title === 'string' ? output.title : null,
          summary: typeof output.summary === 'string' ? output.summary : null,
          detailsUrl: typeof b.details_url === 'string' ? b.details_url : null,
          annotations: Array.isArray(output.annotations) ? [...(output.annotations as AnnotationRecord[])] : [],
          calls: 1,
        };
        standIn.checkRuns.push(run);
        return send(201, checkRunJson(run));
      }
      case '/repos/{owner}/{repo}/check-runs/{check_run_id}': {
        if (caller.kind === 'pat') return refuseCheckRun(send, 'update-a-check-run');
        const run = standIn.checkRuns.find((r) => r.repository === repository && String(r.id) === params[2]);
        if (!run) return notFound(res);
        const outputErr = checkOutputProblem(b);
        if (outputErr) return refuse(res, `${what}: ${outputErr}`, 422, { message: 'Invalid request.', errors: [outputErr], documentation_url: DOCS, status: '422' });
        const output = (b.output ?? {}) as Json;
        if (typeof b.name === 'string') run.name = b.name;
        if (typeof b.status === 'string') run.status = b.status;
        if (typeof b.conclusion === 'string') {
          run.conclusion = b.conclusion;
          run.status = 'completed';
        }
        if (typeof b.details_url === 'string') run.detailsUrl = b.details_url;
        if (typeof output.title === 'string') run.title = output.title;
        if (typeof output.summary === 'string') run.summary = output.summary;
        // Annotations are appended, as GitHub documents.
        if (Array.isArray(output.annotations)) run.annotations.push(...(output.annotations as AnnotationRecord[]));
        run.calls++;
        return send(200, checkRunJson(run));
      }
      case '/repos/{owner}/{repo}/statuses/{sha}': {
        const sha = params[2]!;
        if (standIn.repositories.has(repository) && !(await commitExists(repository, sha))) return send(422, { message: `No commit found for SHA: ${sha}`, documentation_url: DOCS, status: '422' });
        // GitHub's limit, which the published schema does not state.
        if (typeof b.description === 'string' && b.description.length > 140) {
          return refuse(res, `${what}: description longer than 140 characters`, 422, { message: 'Validation Failed', errors: [{ resource: 'Status', code: 'custom', field: 'description', message: 'description is too long (maximum is 140 characters)' }], documentation_url: DOCS, status: '422' });
        }
        const status: CommitStatusRecord = {
          id: nextId++,
          repository,
          sha,
          context: typeof b.context === 'string' ? b.context : 'default',
          state: String(b.state),
          description: typeof b.description === 'string' ? b.description : null,
          targetUrl: typeof b.target_url === 'string' ? b.target_url : null,
        };
        standIn.commitStatuses.push(status);
        return send(201, commitStatusJson(status, caller.login));
      }
      case '/repos/{owner}/{repo}/issues': {
        if (method === 'GET') {
          const state = query.get('state') ?? 'open';
          const perPage = Math.min(Number(query.get('per_page') ?? 30), 100);
          const page = Math.max(Number(query.get('page') ?? 1), 1);
          const direction = query.get('direction') ?? 'desc';
          const list = standIn.issues
            .filter((i) => i.repository === repository && (state === 'all' || i.state === state))
            .sort((x, y) => (direction === 'asc' ? x.number - y.number : y.number - x.number));
          return send(200, list.slice((page - 1) * perPage, page * perPage).map(issueJson));
        }
        const now = new Date().toISOString();
        const number = standIn.issues.filter((i) => i.repository === repository).reduce((max, i) => Math.max(max, i.number), 0) + 1;
        const labels = Array.isArray(b.labels) ? (b.labels as unknown[]).map((l) => (typeof l === 'string' ? l : String((l as Json).name))) : [];
        const issue: IssueRecord = {
          id: nextId++,
          repository,
          number,
          title: String(b.title),
          body: typeof b.body === 'string' ? b.body : null,
          labels,
          assignees: Array.isArray(b.assignees) ? (b.assignees as string[]) : typeof b.assignee === 'string' ? [b.assignee] : [],
          state: 'open',
          stateReason: null,
          author: caller.login,
          comments: [],
          htmlUrl: `${standIn.url}/${repository}/issues/${number}`,
          createdAt: now,
          updatedAt: now,
        };
        standIn.issues.push(issue);
        return send(201, issueJson(issue));
      }
      case '/repos/{owner}/{repo}/issues/{issue_number}': {
        const issue = standIn.issueOf(repository, Number(params[2]));
        if (!issue) return notFound(res);
        if (method === 'PATCH') {
          if (typeof b.title === 'string') issue.title = b.title;
          if (typeof b.body === 'string') issue.body = b.body;
          if (b.state === 'open' || b.state === 'closed') {
            if (b.state !== issue.state) issue.stateReason = typeof b.state_reason === 'string' ? b.state_reason : b.state === 'closed' ? 'completed' : 'reopened';
            issue.state = b.state;
          }
          issue.updatedAt = new Date().toISOString();
        }
        return send(200, issueJson(issue));
      }
      case '/repos/{owner}/{repo}/issues/{issue_number}/comments': {
        // Pull requests are issues too; a number without an issue record is taken for a pull request.
        const number = Number(params[2]);
        const comment: CommentRecord = { id: nextId++, repository, number, body: String(b.body), deleted: false };
        standIn.comments.push(comment);
        standIn.issueOf(repository, number)?.comments.push(comment);
        return send(201, commentJson(comment, caller.login));
      }
      case '/repos/{owner}/{repo}/issues/comments/{comment_id}': {
        const comment = standIn.comments.find((c) => c.repository === repository && String(c.id) === params[2] && !c.deleted);
        if (!comment) return notFound(res);
        comment.body = String(b.body);
        return send(200, commentJson(comment, caller.login));
      }
    }
    notFound(res);
  }

  /** What the schema cannot say: an output needs title and summary with annotations; completed needs a conclusion. */
  function checkOutputProblem(b: Json): string | null {
    const output = b.output as Json | undefined;
    if (output && Array.isArray(output.annotations)) {
      for (const a of output.annotations as Json[]) {
        if (Number(a.end_line) < Number(a.start_line)) return 'annotation end_line is before start_line';
        if (typeof a.title === 'string' && a.title.length > 255) return 'annotation title longer than 255 characters';
      }
    }
    if (b.status === 'completed' && b.conclusion === undefined) return 'conclusion is required when status is completed';
    return null;
  }

  /**
   * GitHub's answer to a personal access token writing a check run: 403, the endpoint's docs, and the
   * permission it would need (a GitHub App's "Checks: write").
   */
  function refuseCheckRun(send: (status: number, answer: unknown, headers?: Record<string, string>) => void, anchor: string): void {
    send(403, { message: 'Resource not accessible by personal access token', documentation_url: `https://docs.github.com/rest/checks/runs#${anchor}`, status: '403' }, { 'x-accepted-github-permissions': 'checks=write' });
  }

  /** DELETE /applications/{client_id}/token: revokes that one access token (Basic auth with the client's id and secret). */
  function revokeTokenCall(req: IncomingMessage, res: ServerResponse, what: string, clientId: string, body: unknown): void {
    const basic = /^Basic (\S+)$/.exec(req.headers.authorization ?? '');
    const decoded = basic ? Buffer.from(basic[1]!, 'base64').toString('utf8') : '';
    if (decoded !== `${CLIENT_ID}:${CLIENT_SECRET}` || clientId !== CLIENT_ID) return json(res, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });
    const op = specs.find((o) => o.template === '/applications/{client_id}/token')!;
    if (body === undefined) return refuse(res, `${what} without a body`, 400, { message: 'Problems parsing JSON', documentation_url: DOCS, status: '400' });
    if (!op.body!(body)) return refuse(res, `${what}: ${describeErrors(op.body!.errors)}`, 422, { message: 'Invalid request.', documentation_url: DOCS, status: '422' });
    const value = String((body as Json).access_token);
    const record = liveToken(value, ['user']);
    if (!record?.grant || record.grant.clientId !== clientId) return json(res, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });
    record.revoked = true;
    revokedAccessTokens.push(value);
    res.writeHead(204);
    res.end();
  }

  function revokeGrantCall(req: IncomingMessage, res: ServerResponse, what: string, clientId: string, body: unknown): void {
    const basic = /^Basic (\S+)$/.exec(req.headers.authorization ?? '');
    const decoded = basic ? Buffer.from(basic[1]!, 'base64').toString('utf8') : '';
    if (decoded !== `${CLIENT_ID}:${CLIENT_SECRET}` || clientId !== CLIENT_ID) return json(res, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });
    const op = specs.find((o) => o.template === '/applications/{client_id}/grant')!;
    if (!op.body!(body)) return refuse(res, `${what}: ${describeErrors(op.body!.errors)}`, 422, { message: 'Invalid request.', documentation_url: DOCS, status: '422' });
    const record = tokens.get(String((body as Json).access_token));
    if (!record?.grant) return json(res, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });
    revokeGrant(record.grant);
    revoked.push(record.grant.clientId);
    res.writeHead(204);
    res.end();
  }

  // ---- git smart HTTP ----------------------------------------------------------------------

  /** GitHub's Basic auth for git over HTTPS: any user name (x-access-token by convention), a token as the password. */
  function gitCaller(req: IncomingMessage): TokenRecord | null {
    return liveToken(basicPassword(req), ['pat', 'user']);
  }

  const GIT_REFUSALS = { push: 'Permission denied.', realm: 'GitHub', unauthorized: 'Invalid username or token. Password authentication is not supported for Git operations.' };

  async function git(req: IncomingMessage, res: ServerResponse, repo: RepositoryRecord, pathInfo: string, query: string, raw: Buffer): Promise<void> {
    await serveGitHttp(req, res, { root, pathInfo, query, body: raw, allowed: !repo.private || gitCaller(req) !== null }, GIT_REFUSALS);
  }

  // ---- webhooks ------------------------------------------------------------------------------

  async function deliver(url: string, secret: string, event: string, payload: Record<string, unknown>, deliveryId: string = randomUUID()): Promise<DeliveryResult> {
    checkWebhookPayload(event, payload);
    const raw = JSON.stringify(payload);
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'GitHub-Hookshot/stand-in',
        'x-github-event': event,
        'x-github-delivery': deliveryId,
        'x-github-hook-id': '424242',
        'x-github-hook-installation-target-type': 'repository',
        'x-github-hook-installation-target-id': String((payload.repository as Json | undefined)?.id ?? 1),
        'x-hub-signature': `sha1=${createHmac('sha1', secret).update(raw).digest('hex')}`,
        'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`,
      },
      body: raw,
    });
    return { status: response.status, body: await response.text(), deliveryId, payload };
  }

  async function changeIssueState(repository: string, number: number, state: 'open' | 'closed'): Promise<DeliveryResult | null> {
    const issue = standIn.issueOf(repository, number);
    if (!issue) throw new Error(`no stand-in issue ${repository}#${number}`);
    issue.state = state;
    issue.stateReason = state === 'closed' ? 'completed' : 'reopened';
    issue.updatedAt = new Date().toISOString();
    if (!webhook) return null;
    const payload = { action: state === 'closed' ? 'closed' : 'reopened', issue: issueJson(issue), repository: repositoryJson(repository), sender: userJson(user) };
    return deliver(webhook.url, webhook.secret, 'issues', payload);
  }

  function pullRequestPayload(input: PullRequestEventInput): Record<string, unknown> {
    const repository = `${input.owner}/${input.repo}`;
    const headRepository = input.headRepository ?? repository;
    const now = new Date().toISOString();
    const branch = (ref: string, sha: string, repo: string) => ({ label: `${repo.split('/')[0]}:${ref}`, ref, sha, user: userJson(userOf(repo.split('/')[0]!)), repo: repositoryJson(repo) });
    const id = 900_000 + input.number;
    const api = `${standIn.settings.apiUrl}/repos/${repository}`;
    const html = `${standIn.url}/${repository}/pull/${input.number}`;
    const link = (href: string) => ({ href });
    const payload: Record<string, unknown> = {
      action: input.action,
      number: input.number,
      pull_request: {
        url: `${api}/pulls/${input.number}`,
        id,
        node_id: `PR_${id}`,
        html_url: html,
        diff_url: `${html}.diff`,
        patch_url: `${html}.patch`,
        issue_url: `${api}/issues/${input.number}`,
        commits_url: `${api}/pulls/${input.number}/commits`,
        review_comments_url: `${api}/pulls/${input.number}/comments`,
        review_comment_url: `${api}/pulls/comments{/number}`,
        comments_url: `${api}/issues/${input.number}/comments`,
        statuses_url: `${api}/statuses/${input.headSha}`,
        number: input.number,
        state: input.action === 'closed' ? 'closed' : 'open',
        locked: false,
        active_lock_reason: null,
        title: `Change ${input.headRef}`,
        user: userJson(user),
        body: null,
        labels: [],
        milestone: null,
        assignee: null,
        assignees: [],
        requested_reviewers: [],
        requested_teams: [],
        created_at: now,
        updated_at: now,
        closed_at: input.action === 'closed' ? now : null,
        merged_at: null,
        merge_commit_sha: null,
        draft: false,
        head: branch(input.headRef, input.headSha, headRepository),
        base: branch(input.baseRef, input.baseSha, repository),
        _links: {
          self: link(`${api}/pulls/${input.number}`),
          html: link(html),
          issue: link(`${api}/issues/${input.number}`),
          comments: link(`${api}/issues/${input.number}/comments`),
          review_comments: link(`${api}/pulls/${input.number}/comments`),
          review_comment: link(`${api}/pulls/comments{/number}`),
          commits: link(`${api}/pulls/${input.number}/commits`),
          statuses: link(`${api}/statuses/${input.headSha}`),
        },
        author_association: 'OWNER',
        auto_merge: null,
        merged: false,
        mergeable: null,
        rebaseable: null,
        mergeable_state: 'unknown',
        merged_by: null,
        comments: 0,
        review_comments: 0,
        maintainer_can_modify: false,
        commits: 1,
        additions: 1,
        deletions: 0,
        changed_files: 1,
      },
      repository: repositoryJson(repository),
      sender: userJson(user),
    };
    if (input.action === 'synchronize') Object.assign(payload, { before: input.baseSha, after: input.headSha });
    return payload;
  }

  // ---- server ------------------------------------------------------------------------------

  const server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const path = url.pathname;
      if (req.method === 'GET' && path === '/login/oauth/authorize') return authorize(res, url.searchParams);
      if (req.method === 'POST' && path === '/login/oauth/access_token') return accessToken(req, res, raw);
      if (path === '/api' || path.startsWith('/api/')) return api(req, res, path.slice(4) || '/', url.searchParams, raw);
      const gitPath = /^\/([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)\.git(\/.*)$/.exec(path);
      const repo = gitPath ? standIn.repositories.get(`${gitPath[1]}/${gitPath[2]}`) : undefined;
      if (gitPath && repo) return git(req, res, repo, `/${gitPath[1]}/${gitPath[2]}.git${gitPath[3]}`, url.search.slice(1), raw);
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
