// A GitLab stand-in on 127.0.0.1: the OAuth endpoints (authorize auto-approves; the token endpoint
// checks the client, the code, redirect_uri and the S256 verifier, and rotates refresh tokens), the
// REST API v4 calls Aegis makes (GET /user, GET and DELETE /personal_access_tokens/self, commit
// statuses, merge request notes), and real git repositories served over smart HTTP by `git http-backend`
// with GitLab's Basic auth rules. Requests that do not match GitLab's documented shapes are
// answered the way GitLab answers them (400 with `{"error": …}` / `{"message": …}`) and recorded in
// `rejected`, which tests expect to stay empty. Merge Request Hook deliveries are sent with
// `sendMergeRequestEvent`, shaped as GitLab documents them.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProviderSettings } from '../../../api/integrations/providers/settings.ts';
import { listenOnLoopback } from '../loopback.ts';
import { basicPassword, commitFiles, initBareRepository, readBody, serveGitHttp } from './git-host.ts';

export interface GitlabStandInOptions {
  /** Lifetime of OAuth access tokens (GitLab: 7200). */
  tokenLifetimeSeconds?: number;
  /**
   * Whether DELETE /personal_access_tokens/self exists (GitLab 15.0 and later; default true). False
   * plays an older instance, which answers it 404.
   */
  selfRevocation?: boolean;
}

/** Which access token `issueToken` makes: a user's own, or a project's or group's (a bot user's). */
export type GitlabTokenType = 'personal' | 'project' | 'group';

export interface RecordedRequest {
  method: string;
  path: string;
  body: unknown;
}

export interface GitlabUser {
  id: number;
  username: string;
  name: string;
}

export interface CommitStatusRecord {
  id: number;
  projectId: number;
  sha: string;
  name: string;
  status: string;
  description: string | null;
  targetUrl: string | null;
}

export interface NoteRecord {
  id: number;
  projectId: number;
  iid: number;
  body: string;
}

export interface ProjectRecord {
  id: number;
  path: string;
  private: boolean;
  defaultBranch: string;
  /** Branch → head commit. */
  branches: Map<string, string>;
}

export interface MergeRequestRecord {
  id: number;
  iid: number;
  projectId: number;
  sourceBranch: string;
  targetBranch: string;
  title: string;
}

export interface MergeRequestEventInput {
  project: string;
  iid: number;
  action: 'open' | 'reopen' | 'update' | 'close' | 'merge' | 'approved';
  /** Previous head for an update with new commits (GitLab sends it only then). */
  oldrev?: string;
  uuid?: string;
}

export interface GitlabStandIn {
  url: string;
  settings: ProviderSettings;
  requests: RecordedRequest[];
  rejected: string[];
  statuses: CommitStatusRecord[];
  notes: NoteRecord[];
  /** The user every token belongs to. */
  user: GitlabUser;
  failNext(count: number, status: number, headers?: Record<string, string>): void;
  /** A personal access token (`glpat-…`; or a project or group access token) with these scopes (default api, read_repository). */
  issueToken(options?: { scopes?: string[]; expiresAt?: Date; type?: GitlabTokenType }): string;
  revokeToken(token: string): void;
  /** Whether `token` is still accepted by the API. */
  tokenWorks(token: string): boolean;
  /** Tokens revoked through DELETE /personal_access_tokens/self, one entry per call. */
  revokedTokens(): string[];
  createProject(path: string, files: Record<string, string>, options?: { private?: boolean }): Promise<ProjectRecord>;
  /** Commits `files` (added or replaced) on `branch` (new branches start from the default branch); returns the sha. */
  commit(path: string, branch: string, files: Record<string, string>): Promise<string>;
  openMergeRequest(path: string, input: { sourceBranch: string; targetBranch?: string; title?: string }): MergeRequestRecord;
  sendMergeRequestEvent(url: string, secret: string, input: MergeRequestEventInput): Promise<{ status: number; body: string; uuid: string; payload: Record<string, unknown> }>;
  close(): Promise<void>;
}

interface TokenRecord {
  kind: 'pat' | 'oauth';
  /** Access tokens (kind `pat`): a user's own, or a project's or group's. */
  type: GitlabTokenType | null;
  scopes: string[];
  expiresAt: number | null;
  revoked: boolean;
  /** OAuth: the grant it belongs to (revoking either token revokes the grant). */
  grant: GrantRecord | null;
}

interface GrantRecord {
  clientId: string;
  scopes: string[];
  accessToken: string;
  refreshToken: string;
  revoked: boolean;
}

interface PendingCode {
  clientId: string;
  redirectUri: string;
  scopes: string[];
  challenge: string | null;
  expires: number;
}

type Params = Record<string, unknown>;

const CLIENT_ID = 'aegis-test-client';
const CLIENT_SECRET = 'aegis-test-secret';
/** Scopes GitLab documents for applications and personal access tokens (the ones that matter here). */
const KNOWN_SCOPES = new Set(['api', 'read_api', 'read_user', 'read_repository', 'write_repository', 'openid', 'profile', 'email', 'sudo', 'admin_mode', 'create_runner', 'manage_runner', 'ai_features', 'k8s_proxy', 'read_registry', 'write_registry']);
const STATUS_STATES = new Set(['pending', 'running', 'success', 'failed', 'canceled', 'skipped']);
const MAX_NOTE = 1_000_000;

const b64url = (buf: Buffer): string => buf.toString('base64url');

/** A JSON or form body as GitLab (Grape, Doorkeeper) reads either. */
function paramsOf(req: IncomingMessage, raw: Buffer): Params | null {
  if (raw.length === 0) return {};
  const type = req.headers['content-type'] ?? '';
  if (type.startsWith('application/json')) {
    try {
      const parsed = JSON.parse(raw.toString('utf8')) as unknown;
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Params) : null;
    } catch {
      return null;
    }
  }
  if (type.startsWith('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  return null;
}

export async function startGitlabStandIn(options: GitlabStandInOptions = {}): Promise<GitlabStandIn> {
  const lifetime = options.tokenLifetimeSeconds ?? 7200;
  const selfRevocation = options.selfRevocation ?? true;
  const revokedBySelf: string[] = [];
  const root = await mkdtemp(join(tmpdir(), 'aegis-gitlab-standin-'));
  const tokens = new Map<string, TokenRecord>();
  const refreshTokens = new Map<string, GrantRecord>();
  const codes = new Map<string, PendingCode>();
  const projects = new Map<string, ProjectRecord>();
  const mergeRequests: MergeRequestRecord[] = [];
  /** `<project id>:<sha>` of every commit made. */
  const knownCommits = new Set<string>();
  let failures: { count: number; status: number; headers: Record<string, string> } | null = null;
  let nextId = 1000;
  const user: GitlabUser = { id: 4242, username: 'aegis-bot', name: 'Aegis Bot' };

  const standIn: GitlabStandIn = {
    url: '',
    settings: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, webUrl: '', apiUrl: '' },
    requests: [],
    rejected: [],
    statuses: [],
    notes: [],
    user,
    failNext(count, status, headers = {}) {
      failures = { count, status, headers };
    },
    issueToken({ scopes = ['api', 'read_repository'], expiresAt, type = 'personal' } = {}) {
      const token = `glpat-${b64url(randomBytes(15))}`;
      tokens.set(token, { kind: 'pat', type, scopes, expiresAt: expiresAt ? expiresAt.getTime() : null, revoked: false, grant: null });
      return token;
    },
    tokenWorks: (token) => tokenRecord(token) !== null,
    revokedTokens: () => [...revokedBySelf],
    revokeToken(token) {
      const record = tokens.get(token);
      if (record) record.revoked = true;
      if (record?.grant) revokeGrant(record.grant);
    },
    createProject,
    commit,
    openMergeRequest(path, input) {
      const project = projectByPath(path);
      const iid = mergeRequests.filter((m) => m.projectId === project.id).length + 1;
      const mr: MergeRequestRecord = { id: nextId++, iid, projectId: project.id, sourceBranch: input.sourceBranch, targetBranch: input.targetBranch ?? project.defaultBranch, title: input.title ?? `Change ${input.sourceBranch}` };
      mergeRequests.push(mr);
      return mr;
    },
    sendMergeRequestEvent,
    close: async () => {},
  };

  // ---- helpers -------------------------------------------------------------------------------

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
    res.end(JSON.stringify(body));
  };
  const reject = (res: ServerResponse, what: string, status: number, body: unknown): void => {
    standIn.rejected.push(what);
    json(res, status, body);
  };

  function revokeGrant(grant: GrantRecord): void {
    grant.revoked = true;
    const access = tokens.get(grant.accessToken);
    if (access) access.revoked = true;
    refreshTokens.delete(grant.refreshToken);
  }

  function projectByPath(path: string): ProjectRecord {
    const project = projects.get(path);
    if (!project) throw new Error(`no stand-in project ${path}`);
    return project;
  }

  const repoDir = (project: ProjectRecord): string => join(root, `${project.path}.git`);

  async function createProject(path: string, files: Record<string, string>, opts: { private?: boolean } = {}): Promise<ProjectRecord> {
    if (!/^[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)+$/.test(path)) throw new Error(`invalid project path ${path}`);
    const project: ProjectRecord = { id: nextId++, path, private: opts.private ?? true, defaultBranch: 'main', branches: new Map() };
    projects.set(path, project);
    // Gitaly lets clients fetch any commit by id.
    await initBareRepository(repoDir(project), 'any');
    await commit(path, 'main', files);
    return project;
  }

  async function commit(path: string, branch: string, files: Record<string, string>): Promise<string> {
    const project = projectByPath(path);
    const dir = repoDir(project);
    const parent = project.branches.get(branch) ?? project.branches.get(project.defaultBranch) ?? null;
    const sha = await commitFiles(dir, parent, branch, files);
    project.branches.set(branch, sha);
    knownCommits.add(`${project.id}:${sha}`);
    return sha;
  }

  /** The live token of `value`, or why it does not work. */
  function tokenRecord(value: string | null): TokenRecord | null {
    if (!value) return null;
    const record = tokens.get(value);
    if (!record || record.revoked || (record.expiresAt !== null && record.expiresAt <= Date.now())) return null;
    return record;
  }

  function apiToken(req: IncomingMessage): TokenRecord | null {
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    const privateToken = req.headers['private-token'];
    return tokenRecord(bearer ? bearer[1]! : typeof privateToken === 'string' ? privateToken : null);
  }

  // ---- OAuth -------------------------------------------------------------------------------

  function authorize(req: IncomingMessage, res: ServerResponse, query: URLSearchParams): void {
    const p = Object.fromEntries(query);
    // `state` is only recommended by GitLab; Aegis must always send it (CSRF), so it is required here.
    for (const name of ['client_id', 'redirect_uri', 'response_type', 'state']) {
      if (!p[name]) return reject(res, `GET /oauth/authorize without ${name}`, 400, { error: 'invalid_request', error_description: `Missing required parameter: ${name}.` });
    }
    if (p.client_id !== CLIENT_ID) return reject(res, 'GET /oauth/authorize with an unknown client_id', 401, { error: 'invalid_client' });
    if (p.response_type !== 'code') return reject(res, `GET /oauth/authorize with response_type=${p.response_type}`, 400, { error: 'unsupported_response_type' });
    // Without `scope` GitLab grants the application's default scopes.
    const scopes = (p.scope ?? 'api').split(' ');
    if (scopes.some((s) => !KNOWN_SCOPES.has(s))) return reject(res, `GET /oauth/authorize with scope=${p.scope}`, 400, { error: 'invalid_scope' });
    if (p.code_challenge !== undefined && p.code_challenge_method !== 'S256') return reject(res, `GET /oauth/authorize with code_challenge_method=${p.code_challenge_method}`, 400, { error: 'invalid_request', error_description: 'Code challenge method must be S256 or plain.' });
    const code = b64url(randomBytes(24));
    codes.set(code, { clientId: p.client_id, redirectUri: p.redirect_uri!, scopes, challenge: p.code_challenge ?? null, expires: Date.now() + 600_000 });
    const target = new URL(p.redirect_uri!);
    target.searchParams.set('code', code);
    target.searchParams.set('state', p.state!);
    res.writeHead(302, { location: target.toString() });
    res.end();
  }

  /** Doorkeeper's client authentication: client_id/client_secret in the body, or Basic. */
  function clientOf(req: IncomingMessage, p: Params): string | null {
    let id = p.client_id;
    let secret = p.client_secret;
    const basic = /^Basic (\S+)$/.exec(req.headers.authorization ?? '');
    if (basic) [id, secret] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':');
    return id === CLIENT_ID && secret === CLIENT_SECRET ? CLIENT_ID : null;
  }

  function issueGrant(clientId: string, scopes: string[]): Record<string, unknown> {
    const grant: GrantRecord = { clientId, scopes, accessToken: b64url(randomBytes(32)), refreshToken: b64url(randomBytes(32)), revoked: false };
    tokens.set(grant.accessToken, { kind: 'oauth', type: null, scopes, expiresAt: Date.now() + lifetime * 1000, revoked: false, grant });
    refreshTokens.set(grant.refreshToken, grant);
    return { access_token: grant.accessToken, token_type: 'Bearer', expires_in: lifetime, refresh_token: grant.refreshToken, scope: scopes.join(' '), created_at: Math.floor(Date.now() / 1000) };
  }

  const invalidGrant = { error: 'invalid_grant', error_description: 'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.' };

  function token(req: IncomingMessage, res: ServerResponse, p: Params | null): void {
    if (!p) return reject(res, 'POST /oauth/token with a body that is neither JSON nor a form', 400, { error: 'invalid_request' });
    const clientId = clientOf(req, p);
    if (!clientId) return json(res, 401, { error: 'invalid_client', error_description: 'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.' });
    const need = (name: string): string | null => (typeof p[name] === 'string' && p[name] !== '' ? (p[name] as string) : null);
    if (p.grant_type === 'authorization_code') {
      const code = need('code');
      const redirectUri = need('redirect_uri');
      if (!code || !redirectUri) return reject(res, 'POST /oauth/token (authorization_code) without code or redirect_uri', 400, { error: 'invalid_request', error_description: 'Missing required parameter: code or redirect_uri.' });
      const pending = codes.get(code);
      codes.delete(code);
      if (!pending || pending.expires < Date.now() || pending.clientId !== clientId || pending.redirectUri !== redirectUri) return json(res, 400, invalidGrant);
      if (pending.challenge !== null) {
        const verifier = need('code_verifier');
        if (!verifier) return reject(res, 'POST /oauth/token without the code_verifier of a PKCE authorization', 400, { error: 'invalid_request', error_description: 'Missing required parameter: code_verifier.' });
        if (b64url(createHash('sha256').update(verifier).digest()) !== pending.challenge) return json(res, 400, invalidGrant);
      }
      return json(res, 200, issueGrant(clientId, pending.scopes));
    }
    if (p.grant_type === 'refresh_token') {
      const refresh = need('refresh_token');
      if (!refresh) return reject(res, 'POST /oauth/token (refresh_token) without refresh_token', 400, { error: 'invalid_request', error_description: 'Missing required parameter: refresh_token.' });
      const grant = refreshTokens.get(refresh);
      if (!grant || grant.revoked || grant.clientId !== clientId) return json(res, 400, invalidGrant);
      // Rotation: the old pair stops working as the new one is issued.
      revokeGrant(grant);
      return json(res, 200, issueGrant(clientId, grant.scopes));
    }
    return reject(res, `POST /oauth/token with grant_type=${String(p.grant_type)}`, 400, { error: 'unsupported_grant_type' });
  }

  function revoke(req: IncomingMessage, res: ServerResponse, p: Params | null): void {
    if (!p || typeof p.token !== 'string' || p.token === '') return reject(res, 'POST /oauth/revoke without token', 400, { error: 'invalid_request' });
    if (!clientOf(req, p)) return reject(res, 'POST /oauth/revoke without client credentials', 403, { error: 'unauthorized_client' });
    const grant = tokens.get(p.token)?.grant ?? refreshTokens.get(p.token) ?? null;
    if (grant) revokeGrant(grant);
    // RFC 7009: unknown tokens are answered the same.
    json(res, 200, {});
  }

  // ---- REST API ------------------------------------------------------------------------------

  /** Grape's checks: unknown parameters are refused here too (they are typos of ours). */
  function checkParams(p: Params, spec: Record<string, { required?: boolean; type: 'string' | 'number' | 'boolean'; max?: number; values?: Set<string> }>): string | null {
    for (const key of Object.keys(p)) if (!(key in spec)) return `${key} is not a parameter of this endpoint`;
    for (const [key, rule] of Object.entries(spec)) {
      const value = p[key];
      if (value === undefined || value === null) {
        if (rule.required) return `${key} is missing`;
        continue;
      }
      if (typeof value !== rule.type) return `${key} is invalid`;
      if (rule.values && !rule.values.has(value as string)) return `${key} does not have a valid value`;
      if (rule.max !== undefined && typeof value === 'string' && value.length > rule.max) return `${key} is too long (maximum is ${rule.max} characters)`;
    }
    return null;
  }

  /** `:id` is a numeric id or the URL-decoded path (every stand-in token may use every project). */
  function projectOf(id: string): ProjectRecord | null {
    return (/^\d+$/.test(id) ? [...projects.values()].find((p) => String(p.id) === id) : projects.get(id)) ?? null;
  }

  function statusJson(s: CommitStatusRecord): Record<string, unknown> {
    const now = new Date().toISOString();
    return { id: s.id, sha: s.sha, ref: null, status: s.status, name: s.name, target_url: s.targetUrl, description: s.description, created_at: now, started_at: now, finished_at: null, allow_failure: false, coverage: null, author: { id: user.id, username: user.username, name: user.name, state: 'active' } };
  }

  function postStatus(res: ServerResponse, what: string, project: ProjectRecord, sha: string, p: Params): void {
    const problem = checkParams(p, {
      state: { required: true, type: 'string', values: STATUS_STATES },
      ref: { type: 'string', max: 255 },
      name: { type: 'string', max: 255 },
      context: { type: 'string', max: 255 },
      target_url: { type: 'string', max: 255 },
      description: { type: 'string', max: 255 },
      coverage: { type: 'number' },
      pipeline_id: { type: 'number' },
    });
    if (problem) return reject(res, `${what}: ${problem}`, 400, { error: problem });
    if (typeof p.target_url === 'string' && !/^https?:\/\/\S+$/.test(p.target_url)) return reject(res, `${what}: target_url is not a URL`, 400, { message: { target_url: ['is blocked: Only allowed schemes are http, https'] } });
    // Only commits the stand-in made exist.
    if (!knownCommits.has(`${project.id}:${sha}`)) return json(res, 404, { message: '404 Commit Not Found' });
    const name = (p.name ?? p.context ?? 'default') as string;
    const state = p.state as string;
    const live = standIn.statuses.filter((s) => s.projectId === project.id && s.sha === sha && s.name === name && (s.status === 'pending' || s.status === 'running')).at(-1);
    // GitLab's state machine: a status already in the asked state cannot "transition" to it again.
    const event = state === 'running' ? 'run' : state === 'pending' ? 'enqueue' : state === 'success' ? 'succeed' : state === 'failed' ? 'drop' : state === 'canceled' ? 'cancel' : 'skip';
    if (live && (live.status === state || (state === 'pending' && live.status === 'running'))) {
      return json(res, 400, { message: `Cannot transition status via :${event} from :${live.status} (Reason(s): Status cannot transition via "${event}")` });
    }
    const description = typeof p.description === 'string' ? p.description : null;
    const targetUrl = typeof p.target_url === 'string' ? p.target_url : null;
    if (live) {
      Object.assign(live, { status: state, description: description ?? live.description, targetUrl: targetUrl ?? live.targetUrl });
      return json(res, 201, statusJson(live));
    }
    const record: CommitStatusRecord = { id: nextId++, projectId: project.id, sha, name, status: state, description, targetUrl };
    standIn.statuses.push(record);
    json(res, 201, statusJson(record));
  }

  function noteJson(n: NoteRecord): Record<string, unknown> {
    const now = new Date().toISOString();
    return { id: n.id, type: null, body: n.body, author: { id: user.id, username: user.username, name: user.name }, created_at: now, updated_at: now, system: false, noteable_id: n.iid, noteable_type: 'MergeRequest', noteable_iid: n.iid, resolvable: false, confidential: false, internal: false };
  }

  function notes(res: ServerResponse, what: string, method: string, project: ProjectRecord, iid: number, noteId: string | null, p: Params): void {
    const problem = checkParams(p, method === 'POST' ? { body: { required: true, type: 'string', max: MAX_NOTE }, internal: { type: 'boolean' }, created_at: { type: 'string' }, merge_request_diff_head_sha: { type: 'string' } } : { body: { required: true, type: 'string', max: MAX_NOTE } });
    if (problem) return reject(res, `${what}: ${problem}`, 400, { error: problem });
    if (!mergeRequests.some((m) => m.projectId === project.id && m.iid === iid)) return json(res, 404, { message: '404 Not found' });
    if (noteId === null) {
      const note: NoteRecord = { id: nextId++, projectId: project.id, iid, body: p.body as string };
      standIn.notes.push(note);
      return json(res, 201, noteJson(note));
    }
    const note = standIn.notes.find((n) => String(n.id) === noteId && n.projectId === project.id && n.iid === iid);
    if (!note) return json(res, 404, { message: '404 Note Not Found' });
    note.body = p.body as string;
    json(res, 200, noteJson(note));
  }

  function api(req: IncomingMessage, res: ServerResponse, path: string, p: Params | null): void {
    const method = req.method ?? 'GET';
    const what = `${method} /api/v4${path}`;
    if (failures && failures.count > 0) {
      const { status, headers } = failures;
      failures.count -= 1;
      if (status === 429) {
        res.writeHead(429, { 'content-type': 'text/plain', ...headers });
        res.end('Retry later\n');
        return;
      }
      return json(res, status, { message: `${status}` }, headers);
    }
    if (!p) return reject(res, `${what} with a body that is neither JSON nor a form`, 400, { error: 'body is invalid' });
    const caller = apiToken(req);
    if (!caller) return json(res, 401, { message: '401 Unauthorized' });
    const allows = (...scopes: string[]): boolean => scopes.some((s) => caller.scopes.includes(s));
    const insufficient = (scope: string): void => {
      const description = 'The request requires higher privileges than provided by the access token.';
      json(res, 403, { error: 'insufficient_scope', error_description: description, scope }, { 'www-authenticate': `Bearer realm="Protected by OAuth 2.0", error="insufficient_scope", error_description="${description}", scope="${scope}"` });
    };
    const segments = path.split('/').slice(1);

    if (method === 'GET' && path === '/user') {
      if (!allows('api', 'read_api', 'read_user')) return insufficient('api read_user read_api');
      return json(res, 200, { id: user.id, username: user.username, name: user.name, state: 'active', web_url: `${standIn.url}/${user.username}` });
    }
    if (method === 'DELETE' && path === '/personal_access_tokens/self') {
      // GitLab before 15.0 has no such route.
      if (!selfRevocation) return json(res, 404, { error: '404 Not Found' });
      if (caller.kind !== 'pat') return json(res, 404, { message: '404 Not Found' });
      // The stand-in plays an instance that lets only a user's own token revoke itself.
      if (caller.type !== 'personal') return json(res, 403, { message: '403 Forbidden' });
      const value = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? String(req.headers['private-token']);
      caller.revoked = true;
      revokedBySelf.push(value);
      res.writeHead(204);
      res.end();
      return;
    }
    if (method === 'GET' && path === '/personal_access_tokens/self') {
      if (caller.kind !== 'pat') return json(res, 404, { message: '404 Not Found' });
      return json(res, 200, { id: 1, name: 'aegis', revoked: false, scopes: caller.scopes, user_id: user.id, active: true, expires_at: caller.expiresAt ? new Date(caller.expiresAt).toISOString().slice(0, 10) : null });
    }
    if (segments[0] === 'projects' && segments.length >= 3) {
      const project = projectOf(decodeURIComponent(segments[1]!));
      if (method === 'POST' && segments.length === 4 && segments[2] === 'statuses') {
        if (!allows('api')) return insufficient('api');
        if (!project) return json(res, 404, { message: '404 Project Not Found' });
        return postStatus(res, what, project, segments[3]!, p);
      }
      if (segments[2] === 'merge_requests' && segments[4] === 'notes' && /^\d+$/.test(segments[3] ?? '')) {
        const noteId = segments[5] ?? null;
        if ((method === 'POST' && segments.length === 5) || (method === 'PUT' && segments.length === 6 && /^\d+$/.test(noteId ?? ''))) {
          if (!allows('api')) return insufficient('api');
          if (!project) return json(res, 404, { message: '404 Project Not Found' });
          return notes(res, what, method, project, Number(segments[3]), noteId, p);
        }
      }
    }
    reject(res, `${what} is not an endpoint of the stand-in's GitLab API`, 404, { error: '404 Not Found' });
  }

  // ---- git smart HTTP ----------------------------------------------------------------------

  /** GitLab's Basic auth for git: any user name, the password a token with a repository scope. */
  function gitCaller(req: IncomingMessage): TokenRecord | null {
    const record = tokenRecord(basicPassword(req));
    return record && record.scopes.some((s) => s === 'api' || s === 'read_repository' || s === 'write_repository') ? record : null;
  }

  const GIT_REFUSALS = { push: 'You are not allowed to push code to this project.', realm: 'GitLab', unauthorized: 'HTTP Basic: Access denied.' };

  async function git(req: IncomingMessage, res: ServerResponse, project: ProjectRecord, pathInfo: string, query: string, raw: Buffer): Promise<void> {
    await serveGitHttp(req, res, { root, pathInfo, query, body: raw, allowed: !project.private || gitCaller(req) !== null }, GIT_REFUSALS);
  }

  // ---- webhooks ------------------------------------------------------------------------------

  function projectHookJson(project: ProjectRecord): Record<string, unknown> {
    const host = new URL(standIn.url).host;
    const name = project.path.split('/').at(-1)!;
    return {
      id: project.id,
      name,
      description: '',
      web_url: `${standIn.url}/${project.path}`,
      avatar_url: null,
      git_ssh_url: `git@${host}:${project.path}.git`,
      git_http_url: `${standIn.url}/${project.path}.git`,
      namespace: project.path.split('/')[0],
      visibility_level: project.private ? 0 : 20,
      path_with_namespace: project.path,
      default_branch: project.defaultBranch,
      ci_config_path: '',
      homepage: `${standIn.url}/${project.path}`,
      url: `git@${host}:${project.path}.git`,
      ssh_url: `git@${host}:${project.path}.git`,
      http_url: `${standIn.url}/${project.path}.git`,
    };
  }

  async function sendMergeRequestEvent(url: string, secret: string, input: MergeRequestEventInput) {
    const project = projectByPath(input.project);
    const mr = mergeRequests.find((m) => m.projectId === project.id && m.iid === input.iid);
    if (!mr) throw new Error(`no merge request !${input.iid} in ${input.project}`);
    const head = project.branches.get(mr.sourceBranch);
    if (!head) throw new Error(`no branch ${mr.sourceBranch} in ${input.project}`);
    const now = new Date().toISOString();
    const projectJson = projectHookJson(project);
    const state = input.action === 'close' ? 'closed' : input.action === 'merge' ? 'merged' : 'opened';
    const payload: Record<string, unknown> = {
      object_kind: 'merge_request',
      event_type: 'merge_request',
      user: { id: user.id, name: user.name, username: user.username, avatar_url: null, email: '[REDACTED]' },
      project: projectJson,
      object_attributes: {
        assignee_id: null,
        author_id: user.id,
        created_at: now,
        description: '',
        draft: false,
        head_pipeline_id: null,
        id: mr.id,
        iid: mr.iid,
        last_edited_at: null,
        last_edited_by_id: null,
        merge_commit_sha: null,
        merge_error: null,
        merge_status: 'unchecked',
        merge_user_id: null,
        merge_when_pipeline_succeeds: false,
        milestone_id: null,
        source_branch: mr.sourceBranch,
        source_project_id: project.id,
        state_id: state === 'opened' ? 1 : state === 'closed' ? 2 : 3,
        target_branch: mr.targetBranch,
        target_project_id: project.id,
        time_estimate: 0,
        title: mr.title,
        updated_at: now,
        updated_by_id: null,
        url: `${standIn.url}/${project.path}/-/merge_requests/${mr.iid}`,
        source: projectJson,
        target: projectJson,
        last_commit: { id: head, message: 'Update\n', title: 'Update', timestamp: now, url: `${standIn.url}/${project.path}/-/commit/${head}`, author: { name: 'Stand-in', email: 'stand-in@example.com' } },
        work_in_progress: false,
        total_time_spent: 0,
        time_change: 0,
        human_total_time_spent: null,
        human_time_change: null,
        human_time_estimate: null,
        assignee_ids: [],
        reviewer_ids: [],
        labels: [],
        state,
        blocking_discussions_resolved: true,
        first_contribution: false,
        detailed_merge_status: 'checking',
        action: input.action,
        ...(input.oldrev ? { oldrev: input.oldrev } : {}),
      },
      labels: [],
      changes: input.action === 'update' ? { updated_at: { previous: now, current: now } } : {},
      repository: { name: projectJson.name, url: projectJson.url, description: '', homepage: projectJson.homepage },
      assignees: [],
      reviewers: [],
    };
    const uuid = input.uuid ?? randomUUID();
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'GitLab/17.6.0',
        'x-gitlab-event': 'Merge Request Hook',
        'x-gitlab-token': secret,
        'x-gitlab-event-uuid': uuid,
        'x-gitlab-webhook-uuid': randomUUID(),
        'x-gitlab-instance': standIn.url,
        'idempotency-key': uuid,
      },
      body: JSON.stringify(payload),
    });
    return { status: response.status, body: await response.text(), uuid, payload };
  }

  // ---- server --------------------------------------------------------------------------------

  const server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      const target = req.url ?? '/';
      const q = target.indexOf('?');
      const path = q < 0 ? target : target.slice(0, q);
      const query = q < 0 ? '' : target.slice(q + 1);
      const method = req.method ?? 'GET';
      const gitMatch = /^\/(.+?)\.git(\/(?:info\/refs|git-upload-pack|git-receive-pack|HEAD))$/.exec(path);
      if (gitMatch) {
        standIn.requests.push({ method, path: target, body: null });
        const project = projects.get(gitMatch[1]!);
        if (!project) {
          res.writeHead(404, { 'content-type': 'text/plain' });
          res.end('Not Found\n');
          return;
        }
        return git(req, res, project, `/${project.path}.git${gitMatch[2]}`, query, raw);
      }
      const params = paramsOf(req, raw);
      standIn.requests.push({ method, path: target, body: params ?? raw.toString('utf8') });
      if (method === 'GET' && path === '/oauth/authorize') return authorize(req, res, new URLSearchParams(query));
      if (method === 'POST' && path === '/oauth/token') return token(req, res, params);
      if (method === 'POST' && path === '/oauth/revoke') return revoke(req, res, params);
      if (path.startsWith('/api/v4/')) return api(req, res, path.slice('/api/v4'.length), params);
      reject(res, `${method} ${path} is not an endpoint of the stand-in`, 404, { error: '404 Not Found' });
    })().catch((err: unknown) => {
      standIn.rejected.push(`stand-in failure: ${err instanceof Error ? err.message : String(err)}`);
      if (!res.headersSent) json(res, 500, { message: '500 Internal Server Error' });
      else res.end();
    });
  });

  const listening = await listenOnLoopback(server);
  standIn.url = listening.url;
  standIn.settings = { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, webUrl: listening.url, apiUrl: `${listening.url}/api/v4` };
  standIn.close = async () => {
    await listening.close();
    await rm(root, { recursive: true, force: true });
  };

  return standIn;
}
