// A small Jira Cloud on 127.0.0.1 for tests: Atlassian's OAuth 2.0 (3LO) auth server (/authorize
// approves at once and redirects back with a code; /oauth/token with rotating refresh tokens),
// api.atlassian.com's accessible-resources, and the REST API v3 subset Aegis uses, both through
// /ex/jira/<cloud id> (OAuth bearer tokens) and at the site root (API tokens over HTTP Basic). One
// origin plays the auth server, api.atlassian.com and the site. Requests that stray from the
// documented shapes (a description that is not an Atlassian Document, labels with spaces, an
// unknown field, unknown JQL) get Jira's 400 {errorMessages, errors} and are recorded in `rejected`.
// Projects follow the To Do → In Progress → Done workflow; transitionIssue moves an issue and, with
// a webhook set, delivers the signed jira:issue_updated event.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { ProviderSettings } from '../../../api/integrations/providers/settings.ts';
import { listenOnLoopback } from '../loopback.ts';

export interface RecordedRequest {
  method: string;
  path: string;
  body: unknown;
}

export type JiraStatusName = 'To Do' | 'In Progress' | 'Done';

interface Status {
  id: string;
  name: JiraStatusName;
  category: { id: number; key: 'new' | 'indeterminate' | 'done'; name: string; colorName: string };
}

const STATUSES: Status[] = [
  { id: '10000', name: 'To Do', category: { id: 2, key: 'new', name: 'To Do', colorName: 'blue-gray' } },
  { id: '10001', name: 'In Progress', category: { id: 4, key: 'indeterminate', name: 'In Progress', colorName: 'yellow' } },
  { id: '10002', name: 'Done', category: { id: 3, key: 'done', name: 'Done', colorName: 'green' } },
];
/** Global transitions of the workflow: one into each status. */
const TRANSITIONS: { id: string; name: string; to: JiraStatusName }[] = [
  { id: '11', name: 'To Do', to: 'To Do' },
  { id: '21', name: 'In Progress', to: 'In Progress' },
  { id: '31', name: 'Done', to: 'Done' },
];

export interface JiraIssue {
  id: string;
  key: string;
  project: string;
  summary: string;
  description: unknown;
  issuetype: string;
  labels: string[];
  assignee: string | null;
  status: Status;
  comments: unknown[];
}

export interface JiraStandIn {
  url: string;
  settings: ProviderSettings;
  cloudId: string;
  siteName: string;
  /** The account every token belongs to. */
  account: { accountId: string; displayName: string; emailAddress: string };
  requests: RecordedRequest[];
  rejected: string[];
  issues: Map<string, JiraIssue>;
  /** Answers the next `count` REST calls (not the auth server) with `status`. */
  failNext(count: number, status: number, headers?: Record<string, string>): void;
  /** An API token for HTTP Basic with the account's e-mail. */
  issueToken(): { token: string; email: string };
  /** Revokes an access token, refresh token or API token. */
  revokeToken(token: string): void;
  /** Where the signed issue events go. */
  setWebhook(url: string, secret: string): void;
  /** Moves an issue (by key) and delivers jira:issue_updated when a webhook is set; resolves to the delivery's status. */
  transitionIssue(key: string, to: JiraStatusName): Promise<number | null>;
  close(): Promise<void>;
}

interface AccessToken {
  expiresAt: number;
  revoked: boolean;
}

const ADF_BLOCKS = new Set(['paragraph', 'codeBlock', 'heading', 'bulletList', 'orderedList', 'listItem', 'rule', 'blockquote']);
const ADF_INLINE = new Set(['text', 'hardBreak']);
const ISSUE_FIELDS = new Set(['project', 'summary', 'description', 'issuetype', 'labels', 'assignee', 'priority']);

/** Whether `node` is an ADF document Jira would take (the subset of nodes a test needs). */
function adfProblem(node: unknown): string | null {
  if (!node || typeof node !== 'object') return 'not an object';
  const doc = node as Record<string, unknown>;
  if (doc.type !== 'doc' || doc.version !== 1 || !Array.isArray(doc.content)) return 'not a doc of version 1 with content';
  const check = (n: unknown, inlineOnly: boolean): string | null => {
    if (!n || typeof n !== 'object') return 'node is not an object';
    const x = n as Record<string, unknown>;
    for (const key of Object.keys(x)) if (!['type', 'content', 'text', 'attrs', 'marks'].includes(key)) return `unknown node key ${key}`;
    if (typeof x.type !== 'string') return 'node without type';
    if (x.type === 'text') {
      if (typeof x.text !== 'string' || x.text.length === 0) return 'text node with empty text';
      return null;
    }
    if (inlineOnly && !ADF_INLINE.has(x.type)) return `${x.type} is not inline`;
    if (!inlineOnly && !ADF_BLOCKS.has(x.type)) return `unknown block ${x.type}`;
    if (x.content !== undefined) {
      if (!Array.isArray(x.content)) return 'content is not an array';
      const inline = x.type === 'paragraph' || x.type === 'heading' || x.type === 'codeBlock';
      for (const child of x.content) {
        const problem = check(child, inline);
        if (problem) return problem;
        if (x.type === 'codeBlock' && (child as { type: string }).type !== 'text') return 'codeBlock holds only text';
      }
    }
    return null;
  };
  for (const block of doc.content) {
    const problem = check(block, false);
    if (problem) return problem;
  }
  return null;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startJiraStandIn(options: { tokenLifetimeSeconds?: number; projects?: string[] } = {}): Promise<JiraStandIn> {
  const lifetime = options.tokenLifetimeSeconds ?? 3600;
  const clientId = 'aegis-test-client';
  const clientSecret = `secret-${randomBytes(8).toString('hex')}`;
  const cloudId = randomUUID();
  const account = { accountId: `5b10ac8d${randomBytes(8).toString('hex')}`, displayName: 'Aegis Bot', emailAddress: 'bot@example.com' };
  const projects = new Map((options.projects ?? ['SEC']).map((key, i) => [key, { id: String(10000 + i), key, next: 1 }]));
  const codes = new Map<string, { redirectUri: string; expires: number }>();
  const accessTokens = new Map<string, AccessToken>();
  const refreshTokens = new Set<string>();
  const apiTokens = new Map<string, { email: string; revoked: boolean }>();
  const issues = new Map<string, JiraIssue>();
  let nextIssueId = 10100;
  let failures: { count: number; status: number; headers: Record<string, string> } | null = null;
  let webhook: { url: string; secret: string } | null = null;
  let origin = '';

  const requests: RecordedRequest[] = [];
  const rejected: string[] = [];

  const send = (res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers });
    res.end(body === undefined ? undefined : JSON.stringify(body));
  };
  const refuse = (res: ServerResponse, what: string, errors: Record<string, string> = {}, messages: string[] = []): void => {
    rejected.push(what);
    send(res, 400, { errorMessages: messages.length || Object.keys(errors).length ? messages : [what], errors });
  };
  const findIssue = (idOrKey: string): JiraIssue | undefined => issues.get(idOrKey) ?? [...issues.values()].find((i) => i.key === idOrKey);
  const statusJson = (s: Status) => ({
    self: `${origin}/rest/api/3/status/${s.id}`,
    id: s.id,
    name: s.name,
    statusCategory: { self: `${origin}/rest/api/3/statuscategory/${s.category.id}`, ...s.category },
  });
  const issueJson = (issue: JiraIssue) => ({
    id: issue.id,
    key: issue.key,
    self: `${origin}/rest/api/3/issue/${issue.id}`,
    fields: {
      summary: issue.summary,
      labels: issue.labels,
      issuetype: { name: issue.issuetype },
      project: { key: issue.project, id: projects.get(issue.project)?.id },
      status: statusJson(issue.status),
      assignee: issue.assignee ? { accountId: issue.assignee } : null,
    },
  });

  function tokenEndpoint(res: ServerResponse, contentType: string, raw: string): void {
    if (!contentType.startsWith('application/json')) return refuse(res, `POST /oauth/token: content-type ${contentType}, not JSON`);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return refuse(res, 'POST /oauth/token: body is not JSON');
    }
    if (body.client_id !== clientId || body.client_secret !== clientSecret) {
      return send(res, 401, { error: 'access_denied', error_description: 'Unauthorized' });
    }
    let issue = false;
    if (body.grant_type === 'authorization_code') {
      if (typeof body.code !== 'string' || typeof body.redirect_uri !== 'string') return refuse(res, 'POST /oauth/token: code or redirect_uri missing');
      const pending = codes.get(body.code);
      codes.delete(body.code);
      if (!pending || pending.expires < Date.now() || pending.redirectUri !== body.redirect_uri) {
        return send(res, 403, { error: 'invalid_grant', error_description: 'Invalid authorization code' });
      }
      issue = true;
    } else if (body.grant_type === 'refresh_token') {
      if (typeof body.refresh_token !== 'string') return refuse(res, 'POST /oauth/token: refresh_token missing');
      // Rotating refresh tokens: each is good once.
      if (!refreshTokens.delete(body.refresh_token)) return send(res, 403, { error: 'invalid_grant', error_description: 'Unknown or invalid refresh token.' });
      issue = true;
    } else return refuse(res, `POST /oauth/token: grant_type ${String(body.grant_type)}`);
    if (!issue) return;
    const accessToken = `jat-${randomBytes(16).toString('hex')}`;
    const refreshToken = `jrt-${randomBytes(16).toString('hex')}`;
    accessTokens.set(accessToken, { expiresAt: Date.now() + lifetime * 1000, revoked: false });
    refreshTokens.add(refreshToken);
    send(res, 200, {
      access_token: accessToken,
      refresh_token: refreshToken,
      expires_in: lifetime,
      scope: 'read:jira-work write:jira-work read:jira-user offline_access',
      token_type: 'Bearer',
    });
  }

  function bearerOk(header: string | undefined): boolean {
    const token = /^Bearer (.+)$/.exec(header ?? '')?.[1];
    const known = token ? accessTokens.get(token) : undefined;
    return !!known && !known.revoked && known.expiresAt > Date.now();
  }
  function basicOk(header: string | undefined): boolean {
    const encoded = /^Basic (.+)$/.exec(header ?? '')?.[1];
    if (!encoded) return false;
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const at = decoded.indexOf(':');
    const known = apiTokens.get(decoded.slice(at + 1));
    return at > 0 && !!known && !known.revoked && known.email === decoded.slice(0, at);
  }

  function restApi(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, body: unknown): void {
    const method = req.method ?? 'GET';
    const what = `${method} ${path}`;
    if (method === 'GET' && path === '/myself') return send(res, 200, { ...account, accountType: 'atlassian', active: true });
    if (method === 'GET' && path === '/serverInfo') return send(res, 200, { baseUrl: origin, serverTitle: 'Aegis Test Jira', deploymentType: 'Cloud' });
    if (method === 'POST' && path === '/issue') return createIssue(res, body);
    if (method === 'POST' && path === '/search/jql') return search(res, body);
    const issueMatch = /^\/issue\/([^/]+)(\/comment|\/transitions)?$/.exec(path);
    if (!issueMatch) return refuse(res, `${what}: not an endpoint of this API`);
    const issue = findIssue(decodeURIComponent(issueMatch[1] ?? ''));
    if (!issue) return send(res, 404, { errorMessages: ['Issue does not exist or you do not have permission to see it.'], errors: {} });
    const sub = issueMatch[2];
    if (!sub && method === 'GET') {
      const fields = query.get('fields');
      if (fields && fields.split(',').some((f) => !['status', 'summary', 'labels'].includes(f))) return refuse(res, `${what}: fields=${fields}`);
      return send(res, 200, issueJson(issue));
    }
    if (sub === '/comment' && method === 'POST') {
      const payload = body as Record<string, unknown> | null;
      if (!payload || Object.keys(payload).some((k) => !['body', 'visibility', 'properties'].includes(k))) return refuse(res, `${what}: unknown comment field`);
      const problem = adfProblem(payload.body);
      if (problem) return refuse(res, `${what}: body is not ADF (${problem})`, { comment: 'Comment body is not valid!' });
      const comment = { id: String(issue.comments.length + 20000), body: payload.body, author: account, created: new Date().toISOString() };
      issue.comments.push(comment);
      return send(res, 201, comment);
    }
    if (sub === '/transitions' && method === 'GET') {
      return send(res, 200, {
        expand: 'transitions',
        transitions: TRANSITIONS.filter((t) => t.to !== issue.status.name).map((t) => ({
          id: t.id,
          name: t.name,
          to: statusJson(STATUSES.find((s) => s.name === t.to) as Status),
          hasScreen: false,
          isGlobal: true,
          isInitial: false,
          isAvailable: true,
          isConditional: false,
        })),
      });
    }
    if (sub === '/transitions' && method === 'POST') {
      const payload = body as { transition?: { id?: unknown } } | null;
      const transition = TRANSITIONS.find((t) => t.id === payload?.transition?.id);
      if (!transition) return refuse(res, `${what}: transition ${JSON.stringify(payload?.transition)}`, {}, ['Transition id is not valid for this issue.']);
      issue.status = STATUSES.find((s) => s.name === transition.to) as Status;
      return send(res, 204);
    }
    return refuse(res, `${what}: not an endpoint of this API`);
  }

  function createIssue(res: ServerResponse, body: unknown): void {
    const fields = (body as { fields?: Record<string, unknown> } | null)?.fields;
    if (!fields || typeof fields !== 'object') return refuse(res, 'POST /issue: no fields', {}, ['No fields']);
    const errors: Record<string, string> = {};
    for (const key of Object.keys(fields)) {
      if (!ISSUE_FIELDS.has(key)) errors[key] = `Field '${key}' cannot be set. It is not on the appropriate screen, or unknown.`;
    }
    if (typeof fields.summary !== 'string' || !fields.summary.trim()) errors.summary = 'You must specify a summary of the issue.';
    else if (fields.summary.length > 255) errors.summary = 'Summary must be less than 255 characters.';
    const issuetype = (fields.issuetype as { name?: unknown } | undefined)?.name;
    if (issuetype !== 'Bug' && issuetype !== 'Task') errors.issuetype = 'Specify an issue type';
    if (fields.description !== undefined && adfProblem(fields.description)) errors.description = 'Operation value must be an Atlassian Document (see the Atlassian Document Format).';
    if (fields.labels !== undefined && (!Array.isArray(fields.labels) || fields.labels.some((l) => typeof l !== 'string' || /\s/.test(l) || !l))) {
      errors.labels = 'The label must not contain spaces.';
    }
    const assignee = fields.assignee as { accountId?: unknown } | undefined;
    if (assignee !== undefined && (typeof assignee?.accountId !== 'string' || Object.keys(assignee).length !== 1)) errors.assignee = 'Specify the assignee by accountId';
    if (Object.keys(errors).length) return refuse(res, `POST /issue: ${JSON.stringify(errors)}`, errors);
    // A project that does not exist is the caller's data, not a malformed request: not recorded.
    const project = projects.get(String((fields.project as { key?: unknown } | undefined)?.key));
    if (!project) return send(res, 400, { errorMessages: [], errors: { project: 'Specify a valid project ID or key' } });
    if (assignee && assignee.accountId !== account.accountId) return send(res, 400, { errorMessages: [], errors: { assignee: 'User cannot be assigned issues.' } });
    const issue: JiraIssue = {
      id: String(nextIssueId++),
      key: `${project.key}-${project.next++}`,
      project: project.key,
      summary: fields.summary as string,
      description: fields.description ?? null,
      issuetype: issuetype as string,
      labels: (fields.labels as string[] | undefined) ?? [],
      assignee: (assignee?.accountId as string | undefined) ?? null,
      status: STATUSES[0] as Status,
      comments: [],
    };
    issues.set(issue.id, issue);
    send(res, 201, { id: issue.id, key: issue.key, self: `${origin}/rest/api/3/issue/${issue.id}` });
  }

  function search(res: ServerResponse, body: unknown): void {
    const payload = (body ?? {}) as Record<string, unknown>;
    const unknown = Object.keys(payload).filter((k) => !['jql', 'fields', 'maxResults', 'nextPageToken', 'expand', 'properties', 'fieldsByKeys', 'reconcileIssues'].includes(k));
    if (unknown.length) return refuse(res, `POST /search/jql: unknown keys ${unknown.join(',')}`);
    const jql = typeof payload.jql === 'string' ? payload.jql : '';
    const match = /^project = "([^"\\]+)" AND labels = "([^"\\]+)"(?: ORDER BY created (?:ASC|DESC))?$/.exec(jql);
    if (!match) return refuse(res, `POST /search/jql: unsupported JQL ${jql}`, {}, [`Error in the JQL Query: ${jql}`]);
    if (!projects.has(match[1] ?? '')) {
      return send(res, 400, { errorMessages: [`The value '${match[1]}' does not exist for the field 'project'.`], errors: {} });
    }
    const found = [...issues.values()].filter((i) => i.project === match[1] && i.labels.includes(match[2] ?? ''));
    const max = typeof payload.maxResults === 'number' ? payload.maxResults : 50;
    send(res, 200, { issues: found.slice(0, max).map(issueJson), isLast: true });
  }

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const raw = await readBody(req);
      let body: unknown = raw;
      if (raw && (req.headers['content-type'] ?? '').startsWith('application/json')) {
        try {
          body = JSON.parse(raw);
        } catch {
          body = raw;
        }
      }
      requests.push({ method: req.method ?? 'GET', path: url.pathname + url.search, body });

      // Atlassian's auth server.
      if (req.method === 'GET' && url.pathname === '/authorize') {
        const p = url.searchParams;
        const missing = ['audience', 'client_id', 'scope', 'redirect_uri', 'state', 'response_type'].filter((k) => !p.get(k));
        if (missing.length || p.get('audience') !== 'api.atlassian.com' || p.get('response_type') !== 'code') {
          return refuse(res, `GET /authorize: ${missing.length ? `missing ${missing.join(',')}` : 'bad audience or response_type'}`);
        }
        if (p.get('client_id') !== clientId) return send(res, 400, { error: 'invalid_client' });
        const code = randomBytes(12).toString('hex');
        codes.set(code, { redirectUri: p.get('redirect_uri') as string, expires: Date.now() + 600_000 });
        const target = new URL(p.get('redirect_uri') as string);
        target.searchParams.set('code', code);
        target.searchParams.set('state', p.get('state') as string);
        res.writeHead(302, { location: target.toString() });
        return res.end();
      }
      if (req.method === 'POST' && url.pathname === '/oauth/token') return tokenEndpoint(res, req.headers['content-type'] ?? '', raw);

      if (failures && failures.count > 0) {
        failures.count--;
        return send(res, failures.status, { errorMessages: [`stand-in failure ${failures.status}`], errors: {} }, failures.headers);
      }

      // api.atlassian.com
      if (url.pathname === '/oauth/token/accessible-resources' && req.method === 'GET') {
        if (!bearerOk(req.headers.authorization)) return send(res, 401, { code: 401, message: 'Unauthorized' });
        return send(res, 200, [
          { id: cloudId, url: origin, name: 'aegis-test', scopes: ['read:jira-work', 'write:jira-work', 'read:jira-user'], avatarUrl: `${origin}/avatar.png` },
        ]);
      }
      const cloudPrefix = `/ex/jira/${cloudId}/rest/api/3`;
      if (url.pathname.startsWith(cloudPrefix)) {
        if (!bearerOk(req.headers.authorization)) return send(res, 401, { code: 401, message: 'Unauthorized' });
        return restApi(req, res, url.pathname.slice(cloudPrefix.length), url.searchParams, body);
      }
      if (url.pathname.startsWith('/rest/api/3/')) {
        if (!basicOk(req.headers.authorization)) return send(res, 401, { errorMessages: ['You are not authenticated. Authentication required to perform this operation.'], errors: {} });
        return restApi(req, res, url.pathname.slice('/rest/api/3'.length), url.searchParams, body);
      }
      refuse(res, `${req.method} ${url.pathname}: not an endpoint of Jira Cloud`);
    })().catch((err: unknown) => send(res, 500, { errorMessages: [String(err)], errors: {} }));
  });

  const listening = await listenOnLoopback(server);
  origin = listening.url;

  return {
    url: origin,
    settings: { clientId, clientSecret, webUrl: origin, apiUrl: origin },
    cloudId,
    siteName: 'aegis-test',
    account,
    requests,
    rejected,
    issues,
    failNext(count, status, headers = {}) {
      failures = { count, status, headers };
    },
    issueToken() {
      const token = `ATATT${randomBytes(16).toString('hex')}`;
      apiTokens.set(token, { email: account.emailAddress, revoked: false });
      return { token, email: account.emailAddress };
    },
    revokeToken(token) {
      const access = accessTokens.get(token);
      if (access) access.revoked = true;
      refreshTokens.delete(token);
      const api = apiTokens.get(token);
      if (api) api.revoked = true;
    },
    setWebhook(url, secret) {
      webhook = { url, secret };
    },
    async transitionIssue(key, to) {
      const issue = findIssue(key);
      if (!issue) throw new Error(`no issue ${key}`);
      const from = issue.status;
      issue.status = STATUSES.find((s) => s.name === to) as Status;
      if (!webhook) return null;
      const payload = JSON.stringify({
        timestamp: Date.now(),
        webhookEvent: 'jira:issue_updated',
        issue_event_type_name: 'issue_generic',
        user: { accountId: account.accountId, displayName: account.displayName },
        issue: issueJson(issue),
        changelog: {
          id: String(Date.now()),
          items: [{ field: 'status', fieldtype: 'jira', fieldId: 'status', from: from.id, fromString: from.name, to: issue.status.id, toString: issue.status.name }],
        },
      });
      const response = await fetch(webhook.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-atlassian-webhook-identifier': randomUUID(),
          'x-hub-signature': `sha256=${createHmac('sha256', webhook.secret).update(payload).digest('hex')}`,
        },
        body: payload,
      });
      await response.arrayBuffer();
      return response.status;
    },
    close: () => listening.close(),
  };
}
