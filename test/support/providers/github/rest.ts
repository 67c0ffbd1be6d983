// The REST API under `${url}/api` (as GitHub Enterprise's /api/v3): each request is checked against
// GitHub's OpenAPI description before it is served, then answered from the stand-in's records
// (user, check runs, commit statuses, issues, comments). Check runs refuse personal access tokens,
// as GitHub does; commit statuses take either kind of token.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DOCS, type Json, liveToken, type StandInContext, type TokenRecord, userOf } from './context.ts';
import { revokeGrantCall, revokeTokenCall } from './oauth.ts';
import { describeErrors } from './openapi-validation.ts';
import { json, notFound, refuse } from './replies.ts';
import { commitExists } from './repositories.ts';
import { checkRunJson, commentJson, commitStatusJson, issueJson, userJson } from './shapes.ts';
import type { AnnotationRecord, CheckRunRecord, CommentRecord, CommitStatusRecord, IssueRecord } from './types.ts';

/** GitHub takes `Bearer` and the older `token` scheme. */
function apiCaller(ctx: StandInContext, req: IncomingMessage): TokenRecord | null {
  const match = /^(?:Bearer|token) (\S+)$/i.exec(req.headers.authorization ?? '');
  return liveToken(ctx, match ? match[1]! : null, ['pat', 'user']);
}

/** One API request; `path` is as GitHub documents it, without the `/api` prefix. */
export async function api(ctx: StandInContext, req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, raw: Buffer): Promise<void> {
  const method = req.method ?? 'GET';
  const what = `${method} ${path}`;
  const op = ctx.specs.find((o) => o.method === method && o.pattern.test(path));
  let body: unknown = undefined;
  if (raw.length > 0) {
    try {
      body = JSON.parse(raw.toString('utf8')) as unknown;
    } catch {
      ctx.standIn.requests.push({ method, path: `${path}${query.size > 0 ? `?${query}` : ''}`, body: raw.toString('utf8') });
      return refuse(ctx, res, `${what} with a body that is not JSON`, 400, { message: 'Problems parsing JSON', documentation_url: DOCS, status: '400' });
    }
  }
  ctx.standIn.requests.push({ method, path: `${path}${query.size > 0 ? `?${query}` : ''}`, body: body ?? null });
  if (!op) return refuse(ctx, res, `${what} is not an endpoint the stand-in serves`, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });
  if (!req.headers['user-agent']) return refuse(ctx, res, `${what} without User-Agent`, 403, { message: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header.' });

  if (ctx.failures && ctx.failures.count > 0) {
    const { status, headers } = ctx.failures;
    ctx.failures.count--;
    const extra: Record<string, string> = { ...headers };
    if (status === 429 && !Object.keys(extra).some((h) => h.toLowerCase() === 'retry-after')) extra['retry-after'] = '1';
    const message = status === 429 || status === 403 ? 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.' : 'Server Error';
    return json(res, status, { message, documentation_url: DOCS, status: String(status) }, extra);
  }

  const params = op.pattern.exec(path)!.slice(1).map((s) => decodeURIComponent(s));
  if (op.template === '/applications/{client_id}/grant') return revokeGrantCall(ctx, req, res, what, params[0]!, body);
  if (op.template === '/applications/{client_id}/token') return revokeTokenCall(ctx, req, res, what, params[0]!, body);

  const caller = apiCaller(ctx, req);
  if (!caller) return json(res, 401, { message: 'Bad credentials', documentation_url: DOCS, status: '401' });
  const rateHeaders = { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '4999', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600), 'x-ratelimit-used': '1', 'x-ratelimit-resource': 'core' };

  if (op.query) {
    const q = Object.fromEntries(query);
    if (!op.query(q)) return refuse(ctx, res, `${what} with query ${query}: ${describeErrors(op.query.errors)}`, 422, { message: 'Validation Failed', errors: [describeErrors(op.query.errors)], documentation_url: DOCS, status: '422' });
  } else if (query.size > 0) return refuse(ctx, res, `${what} with an undocumented query ${query}`, 422, { message: 'Validation Failed', documentation_url: DOCS, status: '422' });
  if (op.body) {
    if (body === undefined && op.bodyRequired) return refuse(ctx, res, `${what} without a body`, 400, { message: 'Problems parsing JSON', documentation_url: DOCS, status: '400' });
    if (body !== undefined && !(req.headers['content-type'] ?? '').startsWith('application/json')) return refuse(ctx, res, `${what} with content-type ${req.headers['content-type'] ?? ''}`, 415, { message: 'Unsupported Media Type', documentation_url: DOCS, status: '415' });
    if (body !== undefined && !op.body(body)) return refuse(ctx, res, `${what}: ${describeErrors(op.body.errors)}`, 422, { message: 'Invalid request.', errors: [describeErrors(op.body.errors)], documentation_url: DOCS, status: '422' });
  } else if (body !== undefined) return refuse(ctx, res, `${what} with a body`, 422, { message: 'Invalid request.', documentation_url: DOCS, status: '422' });

  const b = (body ?? {}) as Json;
  const repository = params.length >= 2 ? `${params[0]}/${params[1]}` : '';
  const send = (status: number, answer: unknown, headers: Record<string, string> = {}) => json(res, status, answer, { ...rateHeaders, ...headers });

  switch (op.template) {
    case '/user': {
      const u = userOf(ctx, caller.login);
      // Classic personal access tokens list their scopes; GitHub App user tokens have none.
      return send(200, { ...userJson(ctx, u), name: u.login, email: null }, caller.kind === 'pat' ? { 'x-oauth-scopes': caller.scopes.join(', '), 'x-accepted-oauth-scopes': '' } : {});
    }
    case '/repos/{owner}/{repo}/check-runs': {
      if (caller.kind === 'pat') return refuseCheckRun(send, 'create-a-check-run');
      if (ctx.standIn.repositories.has(repository) && !(await commitExists(ctx, repository, String(b.head_sha)))) return send(422, { message: 'No commit found for SHA: ' + String(b.head_sha), documentation_url: DOCS, status: '422' });
      const outputErr = checkOutputProblem(b);
      if (outputErr) return refuse(ctx, res, `${what}: ${outputErr}`, 422, { message: 'Invalid request.', errors: [outputErr], documentation_url: DOCS, status: '422' });
      const output = (b.output ?? {}) as Json;
      const run: CheckRunRecord = {
        id: ctx.nextId++,
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
      ctx.standIn.checkRuns.push(run);
      return send(201, checkRunJson(ctx, run));
    }
    case '/repos/{owner}/{repo}/check-runs/{check_run_id}': {
      if (caller.kind === 'pat') return refuseCheckRun(send, 'update-a-check-run');
      const run = ctx.standIn.checkRuns.find((r) => r.repository === repository && String(r.id) === params[2]);
      if (!run) return notFound(res);
      const outputErr = checkOutputProblem(b);
      if (outputErr) return refuse(ctx, res, `${what}: ${outputErr}`, 422, { message: 'Invalid request.', errors: [outputErr], documentation_url: DOCS, status: '422' });
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
      return send(200, checkRunJson(ctx, run));
    }
    case '/repos/{owner}/{repo}/statuses/{sha}': {
      const sha = params[2]!;
      if (ctx.standIn.repositories.has(repository) && !(await commitExists(ctx, repository, sha))) return send(422, { message: `No commit found for SHA: ${sha}`, documentation_url: DOCS, status: '422' });
      // GitHub's limit, which the published schema does not state.
      if (typeof b.description === 'string' && b.description.length > 140) {
        return refuse(ctx, res, `${what}: description longer than 140 characters`, 422, { message: 'Validation Failed', errors: [{ resource: 'Status', code: 'custom', field: 'description', message: 'description is too long (maximum is 140 characters)' }], documentation_url: DOCS, status: '422' });
      }
      const status: CommitStatusRecord = {
        id: ctx.nextId++,
        repository,
        sha,
        context: typeof b.context === 'string' ? b.context : 'default',
        state: String(b.state),
        description: typeof b.description === 'string' ? b.description : null,
        targetUrl: typeof b.target_url === 'string' ? b.target_url : null,
      };
      ctx.standIn.commitStatuses.push(status);
      return send(201, commitStatusJson(ctx, status, caller.login));
    }
    case '/repos/{owner}/{repo}/issues': {
      if (method === 'GET') {
        const state = query.get('state') ?? 'open';
        const perPage = Math.min(Number(query.get('per_page') ?? 30), 100);
        const page = Math.max(Number(query.get('page') ?? 1), 1);
        const direction = query.get('direction') ?? 'desc';
        const list = ctx.standIn.issues
          .filter((i) => i.repository === repository && (state === 'all' || i.state === state))
          .sort((x, y) => (direction === 'asc' ? x.number - y.number : y.number - x.number));
        return send(200, list.slice((page - 1) * perPage, page * perPage).map((i) => issueJson(ctx, i)));
      }
      const now = new Date().toISOString();
      const number = ctx.standIn.issues.filter((i) => i.repository === repository).reduce((max, i) => Math.max(max, i.number), 0) + 1;
      const labels = Array.isArray(b.labels) ? (b.labels as unknown[]).map((l) => (typeof l === 'string' ? l : String((l as Json).name))) : [];
      const issue: IssueRecord = {
        id: ctx.nextId++,
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
        htmlUrl: `${ctx.standIn.url}/${repository}/issues/${number}`,
        createdAt: now,
        updatedAt: now,
      };
      ctx.standIn.issues.push(issue);
      return send(201, issueJson(ctx, issue));
    }
    case '/repos/{owner}/{repo}/issues/{issue_number}': {
      const issue = ctx.standIn.issueOf(repository, Number(params[2]));
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
      return send(200, issueJson(ctx, issue));
    }
    case '/repos/{owner}/{repo}/issues/{issue_number}/comments': {
      // Pull requests are issues too; a number without an issue record is taken for a pull request.
      const number = Number(params[2]);
      const comment: CommentRecord = { id: ctx.nextId++, repository, number, body: String(b.body), deleted: false };
      ctx.standIn.comments.push(comment);
      ctx.standIn.issueOf(repository, number)?.comments.push(comment);
      return send(201, commentJson(ctx, comment, caller.login));
    }
    case '/repos/{owner}/{repo}/issues/comments/{comment_id}': {
      const comment = ctx.standIn.comments.find((c) => c.repository === repository && String(c.id) === params[2] && !c.deleted);
      if (!comment) return notFound(res);
      comment.body = String(b.body);
      return send(200, commentJson(ctx, comment, caller.login));
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

