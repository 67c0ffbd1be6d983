// GitHub's webhooks to Aegis: `X-Hub-Signature-256` over the raw body (checked by the helper the
// push deliveries already use), the event in `X-GitHub-Event`, the delivery id (repeated on
// redelivery) in `X-GitHub-Delivery`. Aegis reads `pull_request` (opened, synchronize, reopened)
// and `issues` (closed, reopened) events.
import { readDelivery, verifyDelivery } from '../providers/push-deliveries.ts';
import type { InboundEvent, InboundWebhooks, PullRequestEvent, WebhookHeaders } from '../providers/types.ts';

const header = (headers: WebhookHeaders, name: string): string | undefined => {
  const value = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
};

type Json = Record<string, unknown>;
const obj = (value: unknown): Json | null => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : null);
const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const int = (value: unknown): number | null => (typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null);

const PULL_REQUEST_ACTIONS = new Set(['opened', 'synchronize', 'reopened']);

function pullRequestOf(body: Json): PullRequestEvent | null {
  const pr = obj(body.pull_request);
  const head = obj(pr?.head);
  const base = obj(pr?.base);
  const repository = str(obj(body.repository)?.full_name);
  const number = int(body.number) ?? int(pr?.number);
  // The head may live in a fork: clone from where the commit is.
  const cloneUrl = str(obj(head?.repo)?.clone_url) ?? str(obj(body.repository)?.clone_url);
  const headSha = str(head?.sha);
  const headRef = str(head?.ref);
  const baseSha = str(base?.sha);
  const baseRef = str(base?.ref);
  if (!repository || number === null || !cloneUrl || !headSha || !headRef || !baseSha || !baseRef) return null;
  const action = str(body.action) ?? '';
  return {
    action: PULL_REQUEST_ACTIONS.has(action) ? (action as PullRequestEvent['action']) : 'other',
    repository,
    projectId: null,
    cloneUrl,
    number,
    headSha,
    headRef,
    baseSha,
    baseRef,
  };
}

export const githubWebhooks: InboundWebhooks = {
  verify(headers, rawBody, secret) {
    return verifyDelivery(readDelivery('github', headers), rawBody, secret);
  },

  deliveryId(headers) {
    return header(headers, 'x-github-delivery') ?? null;
  },

  read(headers, payload): InboundEvent | null {
    const body = obj(payload);
    if (!body) return null;
    const event = header(headers, 'x-github-event');
    if (event === 'pull_request') {
      const pr = pullRequestOf(body);
      return pr ? { type: 'pull_request', event: pr } : null;
    }
    if (event === 'issues') {
      const action = str(body.action);
      const issue = obj(body.issue);
      const repository = str(obj(body.repository)?.full_name);
      const number = int(issue?.number);
      if ((action !== 'closed' && action !== 'reopened') || !repository || number === null) return null;
      // Events for pull requests arrive as `pull_request`; an `issues` event is always an issue.
      return { type: 'ticket', change: { externalId: `${repository}#${number}`, state: action === 'closed' ? 'closed' : 'open' } };
    }
    return null;
  },
};
