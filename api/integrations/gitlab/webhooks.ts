// GitLab webhooks to Aegis. GitLab authenticates a delivery by sending the hook's secret token as
// is in X-Gitlab-Token (no signature over the body); the event is named in X-Gitlab-Event and the
// delivery in Idempotency-Key (GitLab 17.4+, stable across retries) or X-Gitlab-Event-UUID. The
// checks are those of push hooks (../../config-repos/push-events.ts), reused.
//
// Merge Request Hook: object_attributes.action is open, reopen, update, close, merge, approved…;
// an update carries `oldrev` only when commits were pushed, which is what Aegis rescans on. The
// payload names no base commit (only target_branch), so baseSha is '' and the pull-request
// pipeline resolves the base from baseRef.
import { readDelivery, verifyDelivery } from '../providers/push-deliveries.ts';
import type { InboundEvent, InboundWebhooks, PullRequestEvent, WebhookHeaders } from '../providers/types.ts';

const MERGE_REQUEST_HOOK = 'Merge Request Hook';

type Json = Record<string, unknown>;
const obj = (value: unknown): Json => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {});
const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

function header(headers: WebhookHeaders, name: string): string | undefined {
  const value = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

function actionOf(attributes: Json): PullRequestEvent['action'] {
  switch (attributes.action) {
    case 'open':
      return 'opened';
    case 'reopen':
      return 'reopened';
    case 'update':
      return str(attributes.oldrev) ? 'synchronize' : 'other';
    default:
      return 'other';
  }
}

function readMergeRequest(body: Json): PullRequestEvent | null {
  const attributes = obj(body.object_attributes);
  const project = obj(body.project);
  const repository = str(project.path_with_namespace);
  const iid = attributes.iid;
  const headSha = str(obj(attributes.last_commit).id);
  const headRef = str(attributes.source_branch);
  const baseRef = str(attributes.target_branch);
  // The head commit is in the source project (a fork, possibly); the target project when absent.
  const cloneUrl = str(obj(attributes.source).git_http_url) ?? str(project.git_http_url);
  if (!repository || typeof iid !== 'number' || !Number.isSafeInteger(iid) || !headSha || !headRef || !baseRef || !cloneUrl) return null;
  return {
    action: actionOf(attributes),
    repository,
    projectId: typeof project.id === 'number' ? String(project.id) : null,
    cloneUrl,
    number: iid,
    headSha,
    headRef,
    baseSha: '',
    baseRef,
  };
}

export const gitlabWebhooks: InboundWebhooks = {
  verify(headers, rawBody, secret) {
    return verifyDelivery(readDelivery('gitlab', headers), rawBody, secret);
  },

  deliveryId(headers) {
    return readDelivery('gitlab', headers).id;
  },

  read(headers, body): InboundEvent | null {
    if (header(headers, 'x-gitlab-event') !== MERGE_REQUEST_HOOK) return null;
    const payload = obj(body);
    if (payload.object_kind !== 'merge_request') return null;
    const event = readMergeRequest(payload);
    return event ? { type: 'pull_request', event } : null;
  },
};
