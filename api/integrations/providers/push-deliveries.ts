// Source-control push deliveries as the two providers send them: how each is authenticated, named
// and read. Pure functions over headers and the raw body; the route decides what to do.
//
// GitHub: `X-Hub-Signature-256: sha256=<hex>` = HMAC-SHA256(secret, raw body); event in
// `X-GitHub-Event`, delivery id in `X-GitHub-Delivery`; the body is JSON, or form-encoded with the
// JSON in `payload` (the signature covers the body as sent either way).
// GitLab: the secret itself in `X-Gitlab-Token`; event `Push Hook` in `X-Gitlab-Event`; a delivery id
// stable across retries in `Idempotency-Key` (GitLab 17.4+), else `X-Gitlab-Event-UUID`.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { parseGitSource, repoKeyOf } from '../../../platform/git/url.ts';

export const PROVIDERS = ['github', 'gitlab'] as const;
export type Provider = (typeof PROVIDERS)[number];

type Headers = Record<string, string | string[] | undefined>;

const header = (headers: Headers, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

export interface Delivery {
  provider: Provider;
  /** Null when the provider sent none: such a delivery cannot be made idempotent and is refused. */
  id: string | null;
  /** `push`, or another event (answered and ignored). */
  event: string;
  /** The credential the delivery carries, checked against each candidate repository's secret. */
  credential: string | null;
}

export function readDelivery(provider: Provider, headers: Headers): Delivery {
  if (provider === 'github') {
    const event = header(headers, 'x-github-event') ?? '';
    return { provider, id: header(headers, 'x-github-delivery') ?? null, event: event === 'push' ? 'push' : event, credential: header(headers, 'x-hub-signature-256') ?? null };
  }
  const event = header(headers, 'x-gitlab-event') ?? '';
  return {
    provider,
    id: header(headers, 'idempotency-key') ?? header(headers, 'x-gitlab-event-uuid') ?? null,
    event: event === 'Push Hook' ? 'push' : event,
    credential: header(headers, 'x-gitlab-token') ?? null,
  };
}

const equalBytes = (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b);

/** Whether the delivery's credential proves knowledge of `secret` (constant time). */
export function verifyDelivery(delivery: Delivery, rawBody: Buffer, secret: string): boolean {
  if (!delivery.credential) return false;
  if (delivery.provider === 'github') {
    const match = /^sha256=([0-9a-f]{64})$/i.exec(delivery.credential.trim());
    if (!match) return false;
    const expected = createHmac('sha256', secret).update(rawBody).digest();
    return equalBytes(Buffer.from(match[1]!, 'hex'), expected);
  }
  // Hashing both sides first makes the comparison length-independent.
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return equalBytes(digest(delivery.credential), digest(secret));
}

export interface PushEvent {
  /** Full ref, e.g. `refs/heads/main`; null in events that are not pushes (a ping). */
  ref: string | null;
  /** The pushed head commit; null when the branch was deleted. */
  after: string | null;
  /** Repository keys (host/path) of every URL the payload gives for the repository. */
  repoKeys: string[];
}

const ZERO_SHA = /^0{40}$/;

function jsonOf(rawBody: Buffer, contentType: string | undefined): unknown {
  let text = rawBody.toString('utf8');
  if ((contentType ?? '').startsWith('application/x-www-form-urlencoded')) text = new URLSearchParams(text).get('payload') ?? '';
  return JSON.parse(text);
}

const str = (value: unknown): string | undefined => (typeof value === 'string' && value.length > 0 ? value : undefined);
const obj = (value: unknown): Record<string, unknown> => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {});

/** Keys of the URLs that parse as git sources (file: ones only when local sources are allowed). */
function keysOf(urls: (string | undefined)[], allowLocal: boolean): string[] {
  const keys = new Set<string>();
  for (const url of urls) {
    if (!url) continue;
    const parsed = parseGitSource(url, undefined, { allowLocal });
    if (parsed.ok) keys.add(repoKeyOf(parsed.source));
  }
  return [...keys];
}

/** The push in a delivery's body (or, for other events, the repository it is about), or why it cannot be read. */
export function readPush(provider: Provider, rawBody: Buffer, contentType: string | undefined, allowLocal: boolean): PushEvent | string {
  let body: Record<string, unknown>;
  try {
    body = obj(jsonOf(rawBody, contentType));
  } catch {
    return 'body is not JSON';
  }
  const ref = str(body.ref) ?? null;
  const rawAfter = str(provider === 'github' ? body.after : (body.checkout_sha ?? body.after));
  const after = rawAfter && !ZERO_SHA.test(rawAfter) && body.deleted !== true ? rawAfter : null;
  const repository = obj(body.repository);
  const urls =
    provider === 'github'
      ? [str(repository.clone_url), str(repository.html_url), str(repository.ssh_url), str(repository.git_url)]
      : (() => {
          const project = obj(body.project);
          return [str(project.git_http_url), str(project.git_ssh_url), str(project.web_url), str(project.http_url), str(project.ssh_url), str(repository.git_http_url), str(repository.git_ssh_url), str(repository.homepage)];
        })();
  const repoKeys = keysOf(urls, allowLocal);
  if (repoKeys.length === 0) return 'push names no repository URL';
  return { ref, after, repoKeys };
}
