// A small Linear on 127.0.0.1 for tests: OAuth 2.0 (/oauth/authorize approves at once; /oauth/token
// checks the client, the code, the redirect URI and the PKCE S256 verifier, and issues expiring
// access tokens with rotating refresh tokens; /oauth/revoke), and a GraphQL endpoint that parses,
// validates and executes each request against an SDL of the slice of Linear's schema Aegis uses
// (graphql-js), so an unknown field, a wrong argument or a badly typed variable is refused as Linear
// refuses it: HTTP 400 with GraphQL `errors`, recorded in `rejected`. Personal API keys go in the
// Authorization header as is, OAuth tokens as Bearer; the wrong form is refused. Teams have the
// Todo / In Progress / Done / Canceled workflow; setIssueState moves an issue and, with a webhook
// set, delivers Linear's signed Issue update event.
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { buildSchema, execute, GraphQLError, parse, validate, type DocumentNode } from 'graphql';
import type { ProviderSettings } from '../../../api/integrations/providers/settings.ts';
import { listenOnLoopback } from '../loopback.ts';

export interface RecordedRequest {
  method: string;
  path: string;
  body: unknown;
}

const SDL = /* GraphQL */ `
  type Query {
    viewer: User!
    organization: Organization!
    team(id: String!): Team!
    teams(filter: TeamFilter, first: Int): TeamConnection!
    issue(id: String!): Issue!
    issues(filter: IssueFilter, first: Int): IssueConnection!
    issueLabels(filter: IssueLabelFilter, first: Int): IssueLabelConnection!
    workflowStates(filter: WorkflowStateFilter, first: Int): WorkflowStateConnection!
  }
  type Mutation {
    issueCreate(input: IssueCreateInput!): IssuePayload!
    issueUpdate(id: String!, input: IssueUpdateInput!): IssuePayload!
    commentCreate(input: CommentCreateInput!): CommentPayload!
  }
  type User { id: ID! name: String! email: String! }
  type Organization { id: ID! name: String! urlKey: String! }
  type Team { id: ID! key: String! name: String! }
  type TeamConnection { nodes: [Team!]! }
  type WorkflowState { id: ID! name: String! type: String! position: Float! team: Team! }
  type WorkflowStateConnection { nodes: [WorkflowState!]! }
  type IssueLabel { id: ID! name: String! team: Team }
  type IssueLabelConnection { nodes: [IssueLabel!]! }
  type Issue {
    id: ID!
    identifier: String!
    title: String!
    description: String
    url: String!
    state: WorkflowState!
    team: Team!
    assignee: User
    labels: IssueLabelConnection!
  }
  type IssueConnection { nodes: [Issue!]! }
  type Comment { id: ID! body: String! }
  type IssuePayload { success: Boolean! issue: Issue }
  type CommentPayload { success: Boolean! comment: Comment }
  input StringComparator { eq: String, neq: String, in: [String!], contains: String, eqIgnoreCase: String }
  input NullableStringComparator { eq: String, contains: String, null: Boolean }
  input IDComparator { eq: ID, in: [ID!] }
  input TeamFilter { id: IDComparator, key: StringComparator }
  input NullableTeamFilter { id: IDComparator, null: Boolean }
  input IssueFilter { id: IDComparator, team: TeamFilter, description: NullableStringComparator }
  input IssueLabelFilter { name: StringComparator, team: NullableTeamFilter }
  input WorkflowStateFilter { team: TeamFilter, type: StringComparator }
  input IssueCreateInput { teamId: String!, title: String!, description: String, labelIds: [String!], assigneeId: String, stateId: String, priority: Int }
  input IssueUpdateInput { stateId: String, title: String, description: String, assigneeId: String }
  input CommentCreateInput { issueId: String!, body: String! }
`;
const schema = buildSchema(SDL);

export type LinearStateName = 'Todo' | 'In Progress' | 'Done' | 'Canceled';

interface State {
  id: string;
  name: LinearStateName;
  type: 'unstarted' | 'started' | 'completed' | 'canceled';
  position: number;
  color: string;
  teamId: string;
}
interface Team {
  id: string;
  key: string;
  name: string;
  next: number;
}
interface Label {
  id: string;
  name: string;
  teamId: string | null;
}
export interface LinearIssue {
  id: string;
  identifier: string;
  title: string;
  description: string;
  teamId: string;
  stateId: string;
  labelIds: string[];
  assigneeId: string | null;
  comments: string[];
}

export interface LinearStandIn {
  url: string;
  settings: ProviderSettings;
  organization: { id: string; name: string; urlKey: string };
  viewer: { id: string; name: string; email: string };
  teams: Team[];
  labels: Label[];
  issues: Map<string, LinearIssue>;
  requests: RecordedRequest[];
  rejected: string[];
  /** The state an issue is in (by identifier). */
  stateOf(identifier: string): LinearStateName;
  /** Answers the next `count` GraphQL calls with `status` (429/400 with a rate-limit header: RATELIMITED; 401: AUTHENTICATION_ERROR). */
  failNext(count: number, status: number, headers?: Record<string, string>): void;
  /** A personal API key. */
  issueToken(): string;
  revokeToken(token: string): void;
  setWebhook(url: string, secret: string): void;
  /** Moves an issue and delivers the signed Issue update webhook when one is set; resolves to the delivery's status. */
  setIssueState(identifier: string, state: LinearStateName, options?: { webhookTimestamp?: number }): Promise<number | null>;
  close(): Promise<void>;
}

interface Grant {
  expiresAt: number | null;
  revoked: boolean;
  refreshToken: string | null;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

type Args = Record<string, unknown>;
type Comparator = { eq?: unknown; neq?: unknown; in?: unknown[]; contains?: unknown; eqIgnoreCase?: unknown; null?: unknown };

function compare(value: string | null, c: Comparator | undefined): boolean {
  if (!c) return true;
  if (c.null !== undefined && (value === null) !== c.null) return false;
  if (c.eq !== undefined && value !== c.eq) return false;
  if (c.neq !== undefined && value === c.neq) return false;
  if (c.in !== undefined && !c.in.includes(value)) return false;
  if (c.eqIgnoreCase !== undefined && value?.toLowerCase() !== String(c.eqIgnoreCase).toLowerCase()) return false;
  if (c.contains !== undefined && !(value ?? '').includes(String(c.contains))) return false;
  return true;
}

const notFound = (what: string): GraphQLError =>
  new GraphQLError(`Entity not found: ${what}`, { extensions: { code: 'INVALID_INPUT', type: 'invalid input', userPresentableMessage: `Could not find referenced ${what}.` } });

export async function startLinearStandIn(options: { tokenLifetimeSeconds?: number; refreshTokens?: boolean; teams?: string[] } = {}): Promise<LinearStandIn> {
  const lifetime = options.tokenLifetimeSeconds ?? 86_399;
  const withRefresh = options.refreshTokens ?? true;
  const clientId = 'aegis-test-client';
  const clientSecret = `secret-${randomBytes(8).toString('hex')}`;
  const organization = { id: randomUUID(), name: 'Aegis Test', urlKey: 'aegis-test' };
  const viewer = { id: randomUUID(), name: 'Aegis Bot', email: 'bot@example.com' };
  const teams: Team[] = (options.teams ?? ['ENG']).map((key) => ({ id: randomUUID(), key, name: key === 'ENG' ? 'Engineering' : key, next: 1 }));
  const states: State[] = teams.flatMap((team) => [
    { id: randomUUID(), name: 'Todo' as const, type: 'unstarted' as const, position: 0, color: '#e2e2e2', teamId: team.id },
    { id: randomUUID(), name: 'In Progress' as const, type: 'started' as const, position: 1, color: '#f2c94c', teamId: team.id },
    { id: randomUUID(), name: 'Done' as const, type: 'completed' as const, position: 2, color: '#5e6ad2', teamId: team.id },
    { id: randomUUID(), name: 'Canceled' as const, type: 'canceled' as const, position: 3, color: '#95a2b3', teamId: team.id },
  ]);
  const labels: Label[] = [
    { id: randomUUID(), name: 'security', teamId: null },
    { id: randomUUID(), name: 'bug', teamId: null },
  ];
  const issues = new Map<string, LinearIssue>();
  const codes = new Map<string, { redirectUri: string; challenge: string | null; expires: number }>();
  const grants = new Map<string, Grant>();
  const refreshTokens = new Map<string, string>(); // refresh token → its access token
  const apiKeys = new Map<string, { revoked: boolean }>();
  let failures: { count: number; status: number; headers: Record<string, string> } | null = null;
  let webhook: { url: string; secret: string } | null = null;
  let origin = '';

  const requests: RecordedRequest[] = [];
  const rejected: string[] = [];

  const send = (res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers });
    res.end(body === undefined ? undefined : JSON.stringify(body));
  };
  const oauthRefuse = (res: ServerResponse, what: string, status = 400): void => {
    rejected.push(what);
    send(res, status, { error: 'invalid_request', error_description: what });
  };
  const graphqlError = (res: ServerResponse, status: number, message: string, code: string, headers: Record<string, string> = {}): void =>
    send(res, status, { errors: [{ message, extensions: { code, type: code.toLowerCase().replace(/_/g, ' '), userPresentableMessage: message } }] }, headers);

  // Resolvers: the objects the executor walks (fields are values or functions of their arguments).
  const teamObject = (team: Team) => ({ id: team.id, key: team.key, name: team.name });
  const stateObject = (state: State) => ({ id: state.id, name: state.name, type: state.type, position: state.position, team: () => teamObject(teamById(state.teamId)) });
  const teamById = (id: string): Team => {
    const team = teams.find((t) => t.id === id);
    if (!team) throw notFound('team');
    return team;
  };
  const issueUrl = (issue: LinearIssue): string => `${origin}/${organization.urlKey}/issue/${issue.identifier}`;
  const issueObject = (issue: LinearIssue) => ({
    id: issue.id,
    identifier: issue.identifier,
    title: issue.title,
    description: issue.description,
    url: issueUrl(issue),
    state: () => stateObject(states.find((s) => s.id === issue.stateId) as State),
    team: () => teamObject(teamById(issue.teamId)),
    assignee: () => (issue.assigneeId === viewer.id ? viewer : null),
    labels: () => ({ nodes: labels.filter((l) => issue.labelIds.includes(l.id)).map(labelObject) }),
  });
  const labelObject = (label: Label) => ({ id: label.id, name: label.name, team: () => (label.teamId ? teamObject(teamById(label.teamId)) : null) });
  const teamMatches = (team: Team, filter: { id?: Comparator; key?: Comparator } | undefined): boolean =>
    compare(team.id, filter?.id) && compare(team.key, filter?.key);
  const limit = <T>(items: T[], args: Args): T[] => items.slice(0, typeof args.first === 'number' ? args.first : 50);
  const findIssue = (id: string): LinearIssue | undefined => issues.get(id) ?? [...issues.values()].find((i) => i.identifier === id);

  const root = {
    viewer: () => viewer,
    organization: () => organization,
    team: (args: Args) => teamObject(teamById(String(args.id))),
    teams: (args: Args) => ({ nodes: limit(teams.filter((t) => teamMatches(t, (args.filter as Args | undefined) as { id?: Comparator; key?: Comparator })), args).map(teamObject) }),
    issue: (args: Args) => {
      const issue = findIssue(String(args.id));
      if (!issue) throw notFound('issue');
      return issueObject(issue);
    },
    issues: (args: Args) => {
      const filter = (args.filter ?? {}) as { id?: Comparator; team?: { id?: Comparator; key?: Comparator }; description?: Comparator };
      const found = [...issues.values()].filter(
        (i) => compare(i.id, filter.id) && (!filter.team || teamMatches(teamById(i.teamId), filter.team)) && compare(i.description, filter.description),
      );
      return { nodes: limit(found, args).map(issueObject) };
    },
    issueLabels: (args: Args) => {
      const filter = (args.filter ?? {}) as { name?: Comparator; team?: { id?: Comparator; null?: boolean } };
      const found = labels.filter((l) => compare(l.name, filter.name) && (!filter.team || compare(l.teamId, { ...filter.team.id, null: filter.team.null })));
      return { nodes: limit(found, args).map(labelObject) };
    },
    workflowStates: (args: Args) => {
      const filter = (args.filter ?? {}) as { team?: { id?: Comparator; key?: Comparator }; type?: Comparator };
      const found = states.filter((s) => (!filter.team || teamMatches(teamById(s.teamId), filter.team)) && compare(s.type, filter.type));
      return { nodes: limit(found, args).map(stateObject) };
    },
    issueCreate: (args: Args) => {
      const input = args.input as { teamId: string; title: string; description?: string; labelIds?: string[]; assigneeId?: string; stateId?: string };
      const team = teamById(input.teamId);
      if (!input.title.trim()) throw new GraphQLError('Argument Validation Error', { extensions: { code: 'INVALID_INPUT', userPresentableMessage: 'title should not be empty' } });
      for (const id of input.labelIds ?? []) {
        const label = labels.find((l) => l.id === id);
        if (!label || (label.teamId && label.teamId !== team.id)) throw notFound('label');
      }
      if (input.assigneeId && input.assigneeId !== viewer.id) throw notFound('assignee');
      const todo = states.find((s) => s.teamId === team.id && s.name === 'Todo') as State;
      const issue: LinearIssue = {
        id: randomUUID(),
        identifier: `${team.key}-${team.next++}`,
        title: input.title,
        description: input.description ?? '',
        teamId: team.id,
        stateId: input.stateId ?? todo.id,
        labelIds: input.labelIds ?? [],
        assigneeId: input.assigneeId ?? null,
        comments: [],
      };
      issues.set(issue.id, issue);
      return { success: true, issue: issueObject(issue) };
    },
    issueUpdate: (args: Args) => {
      const issue = findIssue(String(args.id));
      if (!issue) throw notFound('issue');
      const input = args.input as { stateId?: string; title?: string; description?: string };
      if (input.stateId !== undefined) {
        const state = states.find((s) => s.id === input.stateId && s.teamId === issue.teamId);
        if (!state) throw notFound('workflow state');
        issue.stateId = state.id;
      }
      if (input.title !== undefined) issue.title = input.title;
      if (input.description !== undefined) issue.description = input.description;
      return { success: true, issue: issueObject(issue) };
    },
    commentCreate: (args: Args) => {
      const input = args.input as { issueId: string; body: string };
      const issue = findIssue(input.issueId);
      if (!issue) throw notFound('issue');
      issue.comments.push(input.body);
      return { success: true, comment: { id: randomUUID(), body: input.body } };
    },
  };

  function authorized(header: string | undefined): 'ok' | 'refused' | 'malformed' {
    if (!header) return 'refused';
    const bearer = /^Bearer (.+)$/.exec(header)?.[1];
    if (bearer) {
      // Linear documents personal keys without the Bearer prefix.
      if (apiKeys.has(bearer)) return 'malformed';
      const grant = grants.get(bearer);
      return grant && !grant.revoked && (grant.expiresAt === null || grant.expiresAt > Date.now()) ? 'ok' : 'refused';
    }
    if (grants.has(header)) return 'malformed';
    const key = apiKeys.get(header);
    return key && !key.revoked ? 'ok' : 'refused';
  }

  async function graphqlEndpoint(req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> {
    if (failures && failures.count > 0) {
      failures.count--;
      const { status, headers } = failures;
      if (status === 429 || (status === 400 && Object.keys(headers).some((h) => h.toLowerCase().startsWith('x-ratelimit')))) {
        return graphqlError(res, status, 'Rate limit exceeded', 'RATELIMITED', headers);
      }
      if (status === 401) return graphqlError(res, 400, 'Authentication required, not authenticated', 'AUTHENTICATION_ERROR', headers);
      return send(res, status, { errors: [{ message: `stand-in failure ${status}` }] }, headers);
    }
    if (!(req.headers['content-type'] ?? '').startsWith('application/json')) {
      rejected.push(`POST /graphql: content-type ${req.headers['content-type']}`);
      return graphqlError(res, 400, 'Must provide query string.', 'BAD_REQUEST');
    }
    const auth = authorized(req.headers.authorization);
    if (auth === 'malformed') rejected.push('POST /graphql: credential in the wrong Authorization form');
    if (auth !== 'ok') return graphqlError(res, 400, 'Authentication required, not authenticated', 'AUTHENTICATION_ERROR');
    let body: { query?: unknown; variables?: unknown; operationName?: unknown };
    try {
      body = JSON.parse(raw) as typeof body;
    } catch {
      rejected.push('POST /graphql: body is not JSON');
      return graphqlError(res, 400, 'Unexpected token in JSON', 'BAD_REQUEST');
    }
    if (typeof body.query !== 'string') {
      rejected.push('POST /graphql: no query');
      return graphqlError(res, 400, 'Must provide query string.', 'BAD_REQUEST');
    }
    let document: DocumentNode;
    try {
      document = parse(body.query);
    } catch (err) {
      rejected.push(`POST /graphql: ${(err as Error).message}`);
      return graphqlError(res, 400, (err as Error).message, 'GRAPHQL_PARSE_FAILED');
    }
    const invalid = validate(schema, document);
    if (invalid.length) {
      rejected.push(`POST /graphql: ${invalid.map((e) => e.message).join('; ')}`);
      return send(res, 400, { errors: invalid.map((e) => ({ message: e.message, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })) });
    }
    const result = await execute({
      schema,
      document,
      rootValue: root,
      variableValues: (body.variables ?? {}) as Record<string, unknown>,
      operationName: typeof body.operationName === 'string' ? body.operationName : undefined,
    });
    // Errors before execution (variables that do not fit their types) leave no `data`.
    if (!('data' in result) || result.data === undefined) {
      rejected.push(`POST /graphql: ${(result.errors ?? []).map((e) => e.message).join('; ')}`);
      return send(res, 400, { errors: (result.errors ?? []).map((e) => ({ message: e.message, extensions: { code: 'BAD_USER_INPUT' } })) });
    }
    send(res, 200, result.errors?.length ? { data: result.data, errors: result.errors.map((e) => e.toJSON()) } : { data: result.data });
  }

  function issueTokens(): Record<string, unknown> {
    const accessToken = `lin_oauth_${randomBytes(16).toString('hex')}`;
    const refreshToken = withRefresh ? `lin_refresh_${randomBytes(16).toString('hex')}` : null;
    grants.set(accessToken, { expiresAt: withRefresh ? Date.now() + lifetime * 1000 : null, revoked: false, refreshToken });
    if (refreshToken) refreshTokens.set(refreshToken, accessToken);
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: withRefresh ? lifetime : 315_705_599,
      scope: ['read', 'write'],
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
    };
  }

  function tokenEndpoint(req: IncomingMessage, res: ServerResponse, raw: string): void {
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      return oauthRefuse(res, `POST /oauth/token: content-type ${req.headers['content-type']}`);
    }
    const form = new URLSearchParams(raw);
    if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) {
      return send(res, 401, { error: 'invalid_client', error_description: 'Client authentication failed' });
    }
    const grant = form.get('grant_type');
    if (grant === 'authorization_code') {
      const code = form.get('code');
      const redirectUri = form.get('redirect_uri');
      if (!code || !redirectUri) return oauthRefuse(res, 'POST /oauth/token: code or redirect_uri missing');
      const pending = codes.get(code);
      codes.delete(code);
      if (!pending || pending.expires < Date.now() || pending.redirectUri !== redirectUri) {
        return send(res, 400, { error: 'invalid_grant', error_description: 'Invalid authorization code' });
      }
      if (pending.challenge !== null) {
        const verifier = form.get('code_verifier') ?? '';
        if (createHash('sha256').update(verifier).digest('base64url') !== pending.challenge) {
          return send(res, 400, { error: 'invalid_grant', error_description: 'Invalid code verifier' });
        }
      }
      return send(res, 200, issueTokens());
    }
    if (grant === 'refresh_token') {
      const refreshToken = form.get('refresh_token');
      if (!refreshToken) return oauthRefuse(res, 'POST /oauth/token: refresh_token missing');
      const accessToken = refreshTokens.get(refreshToken);
      if (!accessToken) return send(res, 400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
      // Rotation: the old pair is spent.
      refreshTokens.delete(refreshToken);
      const old = grants.get(accessToken);
      if (old) old.revoked = true;
      return send(res, 200, issueTokens());
    }
    oauthRefuse(res, `POST /oauth/token: grant_type ${grant}`);
  }

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const raw = await readBody(req);
      let recorded: unknown = raw;
      try {
        recorded = raw ? JSON.parse(raw) : null;
      } catch {
        recorded = raw;
      }
      requests.push({ method: req.method ?? 'GET', path: url.pathname + url.search, body: recorded });

      if (req.method === 'GET' && url.pathname === '/oauth/authorize') {
        const p = url.searchParams;
        const missing = ['client_id', 'redirect_uri', 'response_type', 'scope'].filter((k) => !p.get(k));
        if (missing.length || p.get('response_type') !== 'code') return oauthRefuse(res, `GET /oauth/authorize: ${missing.join(',') || 'response_type'}`);
        if (p.get('scope')?.includes(' ')) return oauthRefuse(res, 'GET /oauth/authorize: scopes are comma separated');
        const challenge = p.get('code_challenge');
        if (challenge && p.get('code_challenge_method') !== 'S256') return oauthRefuse(res, 'GET /oauth/authorize: code_challenge_method must be S256');
        if (p.get('client_id') !== clientId) return send(res, 400, { error: 'invalid_client' });
        const code = randomBytes(12).toString('hex');
        codes.set(code, { redirectUri: p.get('redirect_uri') as string, challenge, expires: Date.now() + 600_000 });
        const target = new URL(p.get('redirect_uri') as string);
        target.searchParams.set('code', code);
        if (p.get('state')) target.searchParams.set('state', p.get('state') as string);
        res.writeHead(302, { location: target.toString() });
        return res.end();
      }
      if (req.method === 'POST' && url.pathname === '/oauth/token') return tokenEndpoint(req, res, raw);
      if (req.method === 'POST' && url.pathname === '/oauth/revoke') {
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? new URLSearchParams(raw).get('token');
        const grant = token ? grants.get(token) : undefined;
        if (!token || !grant) return send(res, 400, { error: 'invalid_request', error_description: 'Unable to revoke token' });
        grant.revoked = true;
        if (grant.refreshToken) refreshTokens.delete(grant.refreshToken);
        return send(res, 200, {});
      }
      if (req.method === 'POST' && url.pathname === '/graphql') return graphqlEndpoint(req, res, raw);
      rejected.push(`${req.method} ${url.pathname}: not an endpoint of Linear`);
      send(res, 404, { error: 'not found' });
    })().catch((err: unknown) => send(res, 500, { errors: [{ message: String(err) }] }));
  });

  const listening = await listenOnLoopback(server);
  origin = listening.url;

  const byIdentifier = (identifier: string): LinearIssue => {
    const issue = findIssue(identifier);
    if (!issue) throw new Error(`no issue ${identifier}`);
    return issue;
  };

  return {
    url: origin,
    settings: { clientId, clientSecret, webUrl: origin, apiUrl: origin },
    organization,
    viewer,
    teams,
    labels,
    issues,
    requests,
    rejected,
    stateOf: (identifier) => (states.find((s) => s.id === byIdentifier(identifier).stateId) as State).name,
    failNext(count, status, headers = {}) {
      failures = { count, status, headers };
    },
    issueToken() {
      const key = `lin_api_${randomBytes(20).toString('hex')}`;
      apiKeys.set(key, { revoked: false });
      return key;
    },
    revokeToken(token) {
      const key = apiKeys.get(token);
      if (key) key.revoked = true;
      const grant = grants.get(token);
      if (grant) grant.revoked = true;
      refreshTokens.delete(token);
    },
    setWebhook(url, secret) {
      webhook = { url, secret };
    },
    async setIssueState(identifier, name, opts = {}) {
      const issue = byIdentifier(identifier);
      const previous = issue.stateId;
      const state = states.find((s) => s.teamId === issue.teamId && s.name === name) as State;
      issue.stateId = state.id;
      if (!webhook) return null;
      const team = teamById(issue.teamId);
      const now = new Date().toISOString();
      const payload = JSON.stringify({
        action: 'update',
        type: 'Issue',
        createdAt: now,
        organizationId: organization.id,
        url: issueUrl(issue),
        webhookId: randomUUID(),
        webhookTimestamp: opts.webhookTimestamp ?? Date.now(),
        data: {
          id: issue.id,
          identifier: issue.identifier,
          number: Number(issue.identifier.split('-')[1]),
          title: issue.title,
          description: issue.description,
          teamId: team.id,
          team: { id: team.id, key: team.key, name: team.name },
          stateId: state.id,
          state: { id: state.id, name: state.name, type: state.type, color: state.color },
          labelIds: issue.labelIds,
          assigneeId: issue.assigneeId,
          updatedAt: now,
          url: issueUrl(issue),
        },
        updatedFrom: { stateId: previous, updatedAt: now },
      });
      const response = await fetch(webhook.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'user-agent': 'Linear-Webhook',
          'linear-delivery': randomUUID(),
          'linear-event': 'Issue',
          'linear-signature': createHmac('sha256', webhook.secret).update(payload).digest('hex'),
        },
        body: payload,
      });
      await response.arrayBuffer();
      return response.status;
    },
    close: () => listening.close(),
  };
}
