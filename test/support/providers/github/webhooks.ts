// Deliveries to Aegis's webhook endpoints, signed with X-Hub-Signature-256 (and the older sha1
// header) and shaped as GitHub documents them: `issues` when an issue's state changes, and
// `pull_request` events a test sends. Every payload is checked against GitHub's schema first.
import { createHmac, randomUUID } from 'node:crypto';
import { type Json, type StandInContext, userOf } from './context.ts';
import { checkWebhookPayload } from './openapi-validation.ts';
import { issueJson, repositoryJson, userJson } from './shapes.ts';
import type { DeliveryResult, PullRequestEventInput } from './types.ts';

export async function deliver(url: string, secret: string, event: string, payload: Record<string, unknown>, deliveryId: string = randomUUID()): Promise<DeliveryResult> {
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

export async function changeIssueState(ctx: StandInContext, repository: string, number: number, state: 'open' | 'closed'): Promise<DeliveryResult | null> {
  const issue = ctx.standIn.issueOf(repository, number);
  if (!issue) throw new Error(`no stand-in issue ${repository}#${number}`);
  issue.state = state;
  issue.stateReason = state === 'closed' ? 'completed' : 'reopened';
  issue.updatedAt = new Date().toISOString();
  if (!ctx.webhook) return null;
  const payload = { action: state === 'closed' ? 'closed' : 'reopened', issue: issueJson(ctx, issue), repository: repositoryJson(ctx, repository), sender: userJson(ctx, ctx.user) };
  return deliver(ctx.webhook.url, ctx.webhook.secret, 'issues', payload);
}

export function pullRequestPayload(ctx: StandInContext, input: PullRequestEventInput): Record<string, unknown> {
  const repository = `${input.owner}/${input.repo}`;
  const headRepository = input.headRepository ?? repository;
  const now = new Date().toISOString();
  const branch = (ref: string, sha: string, repo: string) => ({ label: `${repo.split('/')[0]}:${ref}`, ref, sha, user: userJson(ctx, userOf(ctx, repo.split('/')[0]!)), repo: repositoryJson(ctx, repo) });
  const id = 900_000 + input.number;
  const api = `${ctx.standIn.settings.apiUrl}/repos/${repository}`;
  const html = `${ctx.standIn.url}/${repository}/pull/${input.number}`;
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
      user: userJson(ctx, ctx.user),
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
    repository: repositoryJson(ctx, repository),
    sender: userJson(ctx, ctx.user),
  };
  if (input.action === 'synchronize') Object.assign(payload, { before: input.baseSha, after: input.headSha });
  return payload;
}
